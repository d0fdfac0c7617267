'use strict';
// Finding R4-2: a `read` extra nested under a later `write` extra is
// writable. The policy is accepted as given, bwrap binds the extras in
// policy order, so the parent's writable bind covers the child's read-only
// one; the observer still sees the covered read-only mount in mountinfo, so
// the run reports no mismatch and the receipt lists the path as "read".
// Run as root: `node extra-shadowed.repro.js` → OPEN when the write lands.
const fs = require('node:fs');
const path = require('node:path');
const cordon = require('../../../..');

async function main() {
  // Not under /tmp (a reserved sandbox path): /var/tmp.
  const base = fs.mkdtempSync('/var/tmp/cordon-r4-extra-');
  fs.chmodSync(base, 0o777);
  const secret = path.join(base, 'secret');
  fs.mkdirSync(secret);
  fs.chmodSync(secret, 0o777);
  fs.writeFileSync(path.join(secret, 'data'), 'original\n', { mode: 0o666 });
  fs.chmodSync(path.join(secret, 'data'), 0o666);
  const policy = {
    ...cordon.readOnly(),
    filesystem: { workspace: 'none', temp: 'write', extra: [
      { path: secret, access: 'read' },
      { path: base, access: 'write' },
    ] },
  };
  const execution = cordon.spawnIsolated(['/bin/sh', '-c', `echo overwritten > ${secret}/data`], { policy });
  let stderr = '';
  execution.stderr.on('data', (c) => { stderr += c; });
  execution.protocol.resume();
  const outcome = await execution.wait();
  const data = fs.readFileSync(path.join(secret, 'data'), 'utf8');
  const receiptSaysRead = outcome.receipt.policy.filesystem.extra.some((e) => e.path === secret && e.access === 'read');
  const mismatches = outcome.receipt.confinement?.mismatches ?? [];
  fs.rmSync(base, { recursive: true, force: true });
  if (data === 'overwritten\n') {
    console.log(`OPEN: ${secret} (policy access "read") was written; exit ${outcome.returncode}, receipt says read: ${receiptSaysRead}, mismatches: ${mismatches.length}`);
  } else {
    console.log(`blocked: ${data.trim()} / exit ${outcome.returncode} ${stderr.trim().slice(0, 200)}`);
  }
}
main();
