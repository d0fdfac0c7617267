'use strict';
// R11-1: a tenant makes every receipt the host keeps ~0.9 MB (its argv, kept
// verbatim in receipt.command.argv), so `receipts.maxPerTenant` (10 000, a
// count) bounds a tenant's disk at ~9 GB, not the ~110 MB its ~11 KiB receipts
// suggest (docs/remote.md, Retention). Usage (root): node host-receipt-bytes.js [runs]
// Prints the bytes on disk per receipt for runs with ~900 KiB of arguments
// and (control) for the same runs with one short argument.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { connectRemote } = require('../../../../lib/remote');

const RUNS = Number(process.argv[2] || 10);
const du = (p) => Number(execFileSync('du', ['-sb', p]).toString().split('\t')[0]);

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r11-host-'));
  fs.mkdirSync(path.join(dir, 'run'), { mode: 0o700 });
  const sock = path.join(dir, 'run', 'host.sock');
  fs.writeFileSync(path.join(dir, 'host.json'), JSON.stringify({
    listen: { unix: sock }, stateDir: path.join(dir, 'state'), allowUids: [0], programs: { true: '/bin/true' },
  }));
  const host = spawn(process.execPath, [path.join(__dirname, '../../../../bin/cordon.js'), 'host', '--config', path.join(dir, 'host.json')], { stdio: ['ignore', 'ignore', 'pipe'] });
  host.stderr.resume();
  try {
    for (let i = 0; i < 100 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 100));
    const remote = connectRemote({ socket: sock });
    const receipts = path.join(dir, 'state', 'receipts');
    const measure = async (label, args) => {
      const before = du(receipts);
      const t = Date.now();
      for (let i = 0; i < RUNS; i++) await remote.spawnIsolated(['true', ...args], { policy: remote.readOnly() }).wait();
      const per = Math.round((du(receipts) - before) / RUNS);
      console.log(`${label}: ${RUNS} runs in ${Date.now() - t} ms, ${per} bytes of receipts per run on disk; x maxPerTenant 10000 = ${(per * 10000 / 1e9).toFixed(2)} GB per tenant`);
      return per;
    };
    const control = await measure('control (1 short argument)', ['x']);
    const big = await measure('probe (9 x 100 KiB arguments)', Array.from({ length: 9 }, () => 'A'.repeat(100 * 1024)));
    await remote.close();
    console.log(big > 50 * control ? 'FINDING: a tenant sets the size of every kept receipt; the count bound does not bound bytes' : 'held');
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
