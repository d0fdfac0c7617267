'use strict';
// R11-10: a remote run whose launch fails after `started` (here: a policy with
// `resources.openFiles` above the host's hard RLIMIT_NOFILE) is recorded by the
// host as `spawn-failed` / ERR_CORDON_SPAWN_FAILED within milliseconds, but the
// client never gets its `exit` (docs/remote.md: `exit` carries `{"error"}` when
// a local wait() would reject): wait() rejects only at the client's slack with
// ERR_CORDON_REMOTE_TIMEOUT, and the host holds the connection ~35 s.
// Control: a program of the allowlist that does not exist, whose failure the
// client does get as an error at once.
// Usage (root): node host-spawn-failed-no-exit.js
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r11-spawnfail-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const log = path.join(dir, 'host.log');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], logFile: log,
    programs: { sh: '/bin/sh', missing: path.join(dir, 'no-such-program') },
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock }, { slackMs: 15000 });
    const base = remote.readOnly();
    const attempt = async (label, argv, policy) => {
      const t = Date.now();
      try { const r = await remote.spawnIsolated(argv, { policy }).wait(); console.log(`${label}: rc ${r.returncode} after ${Date.now() - t} ms`); return { ms: Date.now() - t, code: 'rc' }; }
      catch (e) { console.log(`${label}: ${e.code} after ${Date.now() - t} ms`); return { ms: Date.now() - t, code: e.code }; }
    };
    const control = await attempt('control (program missing on the host)', ['missing'], base);
    const probe = await attempt('probe (openFiles 1e6)', ['sh', '-c', 'true'], { ...base, resources: { ...base.resources, openFiles: 1000000 } });
    await remote.close();
    console.log(probe.code === 'ERR_CORDON_REMOTE_TIMEOUT' && control.code !== 'ERR_CORDON_REMOTE_TIMEOUT' ? 'FINDING: a launch failure after `started` never reaches the client; it waits out its slack' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"event":"run"') || l.includes('"outcome":"ran"')) : [];
    for (const l of lines.map((x) => JSON.parse(x))) console.log(`host log: ${l.event} ${l.program ?? ''} outcome ${l.outcome} error ${l.error ?? l.refused} durationMs ${l.durationMs}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
