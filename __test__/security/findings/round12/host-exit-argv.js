'use strict';
// docs/remote.md: "`exit` stays within the 1 MiB control-frame bound" and "the exit receipt has argv whole".
// A spawn frame just under 1 MiB (argv) makes a receipt with that argv plus ~10 KB of receipt: is the
// exit frame cut, or does the client lose its result (ERR_CORDON_REMOTE_PROTOCOL)? Control: 500 KB argv.
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
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { true: '/bin/true' }, networkRelayPath: path.resolve(__dirname, '../../../../target/release/cordon-egress-relay'),
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let herr = ''; host.stderr.on('data', (d) => { herr += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const longName = (i) => [('a' + i + '-').padEnd(62, 'x'), 'b'.repeat(62), 'c'.repeat(62), 'd'.repeat(61)].join('.');
    const run = async (label, argBytes, policy = remote.readOnly()) => {
      const args = []; let left = argBytes;
      while (left > 0) { const n = Math.min(100000, left); args.push('A'.repeat(n)); left -= n; }
      const t = Date.now();
      try {
        const r = await remote.spawnIsolated(['true', ...args], { policy }).wait();
        res[label] = `rc ${r.returncode}, receipt argv bytes ${JSON.stringify(r.receipt.command.argv).length}, ${Date.now() - t} ms`;
      } catch (e) { res[label] = `${e.code}: ${String(e.message).slice(0, 120)} (${Date.now() - t} ms)`; }
      console.log(label, '→', res[label]);
    };
    await run('control 500000 B argv', 500000);
    for (const n of [1030000, 1040000, 1045000]) await run(`probe ${n} B argv`, n);
    // the allowlist grows ~1.37x from the spawn frame to the receipt: a spawn frame of ~965 KB gives an exit over 1 MiB
    const allow = { ...remote.readOnly(), network: { mode: 'mediated', allow: Array.from({ length: 1024 }, (_, i) => `${longName(i)}:443`) } };
    await run('probe 700000 B argv + 1024 long allow entries (spawn frame ~965 KB)', 700000, allow);
    await remote.close();
    const bad = Object.entries(res).filter(([k, v]) => k.startsWith('probe') && /REMOTE_PROTOCOL|REMOTE_TIMEOUT|DISCONNECT/.test(v));
    console.log(/^rc 0/.test(res['control 500000 B argv']) && bad.length ? 'FINDING: exit frame past 1 MiB for ' + bad.map(([k]) => k).join(', ') : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
    if (process.env.V) console.log(herr.slice(-2000));
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
