'use strict';
// R9 (low): a session keeps one entry per command for its end receipt, with no bound:
// the provider's heap grows with every command a session ever ran (an actor driving a
// long-lived session, or a model in a loop). Measured as heap growth after GC per
// `exec(['true'])`, and the receipt's `commands.length`.
//   node --expose-gc receipt-growth.js [N]   (default 3000 commands)
// Prints the bytes retained per command; VULNERABLE when the receipt lists all N.
// Control: the same loop of readFile (not a command) retains ~nothing per call.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

async function main() {
  if (!global.gc) throw new Error('run with --expose-gc');
  const n = Number(process.argv[2] || 3000);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r9-growth-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  const heap = () => { global.gc(); global.gc(); return process.memoryUsage().heapUsed; };
  try {
    await s.writeFile('f', 'x'); await s.readFile('f'); await s.exec(['true']);
    let h0 = heap();
    for (let i = 0; i < n; i++) await s.readFile('f');
    const perRead = (heap() - h0) / n;
    h0 = heap();
    for (let i = 0; i < n; i++) await s.exec(['true']);
    const perExec = (heap() - h0) / n;
    const receipt = await s.end();
    console.log(`control: ${perRead.toFixed(0)} bytes retained per readFile`);
    console.log(`${n} execs: ${perExec.toFixed(0)} bytes retained per exec; end receipt lists ${receipt.commands.length} commands`);
    console.log(receipt.commands.length > n ? `VULNERABLE: per-session command list unbounded (~${(perExec * 1e6 / 2 ** 20).toFixed(0)} MiB per million commands)` : 'held');
  } finally {
    await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
