'use strict';
// R11-9: a remote tenant's mediated run sets `policy.resources.networkStreams`
// as high as it likes (the host clamps deadline, memory, processes, uploads and
// stop windows, not the network quotas), and its processes' idle connections to
// the engine socket then each hold a descriptor of `cordon host` (R11-8's
// mechanism on the host): three runs of one tenant take the host to its
// RLIMIT_NOFILE. The same runs' `exit` frames carry every stream's network
// receipt and exceed the protocol's 1 MiB control frame (3.2 MB): the client
// fails them with ERR_CORDON_REMOTE_PROTOCOL. Control: the same runs with the
// default networkStreams (256): ~256 host descriptors per run.
// Usage (root): node host-engine-socket-fds.js [streams=100000] [runs=3]
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');

const STREAMS = Number(process.argv[2] || 100000);
const RUNS = Number(process.argv[3] || 3);
const py = `import socket, time, os
for k in range(29):
    if os.fork() == 0: break
L = []
for i in range(240):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect('/.cordon/egress/engine.sock'); L.append(s)
    except Exception:
        break
time.sleep(12)`;

async function flood(remote, hostPid, streams) {
  const fds = () => { try { return fs.readdirSync(`/proc/${hostPid}/fd`).length; } catch (e) { return e.code; } };
  const base = remote.readOnly();
  const policy = { ...base, resources: { ...base.resources, networkStreams: streams }, network: { mode: 'mediated', allow: ['example.com:443'] } };
  const before = fds();
  const runs = Array.from({ length: RUNS }, () => remote.spawnIsolated(['python3', '-c', py], { policy, deadlineMs: 30000 }));
  let peak = 0;
  for (let i = 0; i < 16; i++) { await new Promise((r) => setTimeout(r, 250)); const n = fds(); if (typeof n === 'number') peak = Math.max(peak, n); }
  const victim = [];
  for (let i = 0; i < 4; i++) {
    try { victim.push((await remote.spawnIsolated(['python3', '-c', 'print(1)'], { policy: base }).wait()).returncode); } catch (e) { victim.push(e.code); }
  }
  const outcomes = [];
  for (const r of runs) { try { outcomes.push(`rc ${(await r.wait()).returncode}`); } catch (e) { outcomes.push(e.message.slice(0, 90)); } }
  const limit = fs.readFileSync(`/proc/${hostPid}/limits`, 'utf8').match(/Max open files\s+(\d+)/)[1];
  console.log(`networkStreams ${streams}, ${RUNS} runs: host descriptors ${before} → peak ${peak} (limit ${limit}); another run meanwhile: ${JSON.stringify(victim)}; the runs: ${JSON.stringify(outcomes)}`);
  return { peak, limit: Number(limit), outcomes };
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r11-hostfd-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { python3: '/usr/bin/python3' },
    networkRelayPath: path.join(__dirname, '../../../../target/release/cordon-egress-relay'), logFile: path.join(dir, 'host.log'),
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const hostPid = Number(fs.readFileSync(`/proc/${host.pid}/task/${host.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    const remote = connectRemote({ socket: sock });
    const control = await flood(remote, hostPid, 256);
    const probe = await flood(remote, hostPid, STREAMS);
    await remote.close();
    const protocolBroken = probe.outcomes.some((o) => o.includes('exit frame'));
    console.log(probe.peak >= probe.limit - 64 && control.peak < 2000 ? `FINDING: one tenant's runs take cordon host to its descriptor limit${protocolBroken ? '; their exit frames break the 1 MiB bound' : ''}` : protocolBroken ? 'FINDING (partial): exit frames past the 1 MiB bound' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
