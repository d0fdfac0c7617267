'use strict';
// Round 13w, R12-3/R12-8 cuts (crates/cli/src/host/kept_receipt.rs cut_argv): the argv budget counts the
// arguments' text bytes (KEPT_ARGV_BYTES 4096), not their JSON: empty arguments cost 0 bytes of text but 3 of JSON,
// a control character 1 of text and 6 of JSON. Is a kept receipt (and the exit frame) still bounded? Controls: more
// than 4096 strings are refused; 2 x 100000 B arguments are cut. Real host on a Unix socket (root).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');
const du = (p) => { let n = 0; for (const e of fs.readdirSync(p, { withFileTypes: true, recursive: true })) if (e.isFile()) n += fs.statSync(path.join(e.parentPath ?? e.path, e.name)).size; return n; };
async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r13w-args-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  const state = path.join(dir, 'state');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({ listen: { unix: sock }, stateDir: state, allowUids: [0], programs: { true: '/bin/true' } }));
  const host = spawn(path.join(__dirname, '../../../../target/release/cordon'), ['host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let herr = ''; host.stderr.on('data', (d) => { herr += d; });
  const res = {};
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const receipts = path.join(state, 'receipts');
    const run = async (label, args) => {
      const before = fs.existsSync(receipts) ? du(receipts) : 0;
      const t = Date.now();
      try {
        const r = await remote.spawnIsolated(['true', ...args], { policy: remote.readOnly() }).wait();
        res[label] = { rc: r.returncode, exitArgvJson: JSON.stringify(r.receipt.command.argv).length, truncated: !!r.receipt.command.argvTruncated };
      } catch (e) { res[label] = { error: `${e.code}: ${String(e.message).slice(0, 100)}` }; }
      await new Promise((r) => setTimeout(r, 300));
      res[label].keptReceiptBytes = (fs.existsSync(receipts) ? du(receipts) : 0) - before;
      res[label].ms = Date.now() - t;
      console.log(label, JSON.stringify(res[label]));
    };
    // The host refuses more than 4096 strings (ERR_CORDON_INVALID_COMMAND): that count is the real bound.
    await run('control 200000 x "" (refused by the count)', Array(200000).fill(''));
    await run('control 2 x 100000 B (cut)', ['A'.repeat(100000), 'B'.repeat(100000)]);
    await run('probe 4095 x ""', Array(4095).fill(''));
    await run('probe 4095 x 40 control chars (\\u0001: 6 JSON bytes each)', Array(4095).fill('\u0001'.repeat(40)));
    await remote.close();
    const c = res['control 2 x 100000 B (cut)'];
    const probes = Object.entries(res).filter(([k]) => k.startsWith('probe'));
    const problems = probes.filter(([, v]) => v.error || v.keptReceiptBytes > 65536).map(([k, v]) => `${k}: ${v.error ?? v.keptReceiptBytes + ' B kept'}`);
    console.log(c.keptReceiptBytes > 0 && c.keptReceiptBytes < 16384 && /INVALID_COMMAND/.test(res['control 200000 x "" (refused by the count)'].error) ? (problems.length ? 'FINDING: ' + problems.join('; ') : 'held') : 'control failed');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
    if (process.env.V) console.log(herr.slice(-2000));
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
