'use strict';
// R10-3 (low): the session receipt's `commandsDigest` (round 9, R9-6: ecbd710,
// command-log.js) chains the command lines in the order the commands SETTLED, while
// `commands` lists them by `seq`, and nothing in the receipt records the settle order.
// A session whose commands overlap (a start()ed command that outlives a later exec: the
// ordinary background pattern, and anything the model chooses) ends with a receipt whose
// digest does not recompute from its own lines by the documented rule
// (docs/sessions.md: d = sha256(hex(d) ‖ JSON.stringify(line)), "a short session's
// digest recomputed from its lines"): a verifier flags an honest receipt as tampered, or
// must try every order (n! for n overlapping commands), so the digest commits to a set
// of lines only up to an unknown permutation.
//   node digest-settle-order.js          start(sleep 1), then exec(echo), then end
//   node digest-settle-order.js control  the same two commands one after the other
// VULNERABLE when all lines are listed (commandsOmitted 0) and the digest does not recompute.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require(path.resolve(__dirname, '../../../..'));

const chain = (lines) => lines.reduce((d, line) => crypto.createHash('sha256').update(d).update(JSON.stringify(line)).digest('hex'), crypto.createHash('sha256').digest('hex'));

async function main() {
  const control = process.argv[2] === 'control';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'r10-digest-'));
  fs.chmodSync(dir, 0o711);
  const m = cordon.createSessionManager({ secret: crypto.randomBytes(32), root: path.join(dir, 'sessions'), store: cordon.memorySessionStore(), authorize: () => true });
  const s = await m.acquire({ tenant: 't', conversation: 'c' }, {});
  let receipt;
  try {
    if (control) {
      await s.exec(['/bin/sleep', '1']);
      await s.exec(['/bin/echo', 'b']);
    } else {
      const bg = await s.start(['/bin/sleep', '1']);
      await s.exec(['/bin/echo', 'b']);
      await bg.wait();
    }
  } finally {
    receipt = await s.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const listed = chain(receipt.commands);
  const reversed = chain([...receipt.commands].reverse());
  console.log(`commands ${receipt.commands.map((c) => c.seq).join(',')}, omitted ${receipt.commandsOmitted}, settled ${receipt.commands.map((c) => c.settled).join(',')}`);
  console.log(`commandsDigest ${receipt.commandsDigest.slice(0, 16)}…; recomputed in listed order ${listed.slice(0, 16)}… (${listed === receipt.commandsDigest ? 'match' : 'MISMATCH'}); in settle order ${reversed.slice(0, 16)}… (${reversed === receipt.commandsDigest ? 'match' : 'mismatch'})`);
  const ok = receipt.commandsOmitted === 0 && listed === receipt.commandsDigest;
  if (control) console.log(ok ? 'control ok' : 'control FAILED');
  else console.log(ok ? 'held' : 'VULNERABLE: an honest receipt\'s commandsDigest does not recompute from its own listed lines');
}
main().catch((e) => { console.error(e); process.exitCode = 1; });
