'use strict';
// R11-10 re-test: launches that fail after `started` with other odd-but-valid resources. Does `exit` come at once?
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r12-host-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { sh: '/bin/sh' },
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  host.stderr.resume();
  const out = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const base = remote.readOnly();
    const pol = (res) => ({ ...base, resources: { ...(base.resources || {}), ...res } });
    const cases = {
      control: {},
      memory1: { memoryBytes: 1 }, memory4k: { memoryBytes: 4096 }, processes1: { processes: 1 }, openFiles1: { openFiles: 1 },
      openFiles3: { openFiles: 3 }, cpu1: { cpuSeconds: 1 }, fsize0: { fileSizeBytes: 0 }, fsize1: { fileSizeBytes: 1 },
      streams0: { networkStreams: 0 }, conc0: { networkConcurrentStreams: 0 },
      wsTmpfs: '__opt',
    };
    const jobs = Object.entries(cases).map(async ([k, res]) => {
      const t = Date.now();
      try {
        const opts = res === '__opt' ? { policy: base, workspaceTmpfsBytes: 1 << 20 } : { policy: pol(res), deadlineMs: 5000 };
        const r = await remote.spawnIsolated(['sh', '-c', 'echo hi'], opts).wait();
        out[k] = `rc ${r.returncode} ${r.receipt.outcome.status} (${Date.now() - t} ms)`;
      } catch (e) { out[k] = `${e.code} (${Date.now() - t} ms) ${String(e.message).slice(0, 80)}`; }
    });
    await Promise.all(jobs);
    for (const [k, v] of Object.entries(out)) console.log(k.padEnd(12), v);
    await remote.close();
    const slow = Object.entries(out).filter(([, v]) => /REMOTE_TIMEOUT/.test(v) || Number((v.match(/\((\d+) ms\)/) || [])[1]) > 6000);
    console.log(/^rc 0/.test(out.control) && slow.length ? 'FINDING: ' + slow.map(([k]) => k).join(', ') : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
