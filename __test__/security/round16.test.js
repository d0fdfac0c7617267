'use strict';

// Round 16n (white box on the seqpacket fd-4 channel, 5cffac46/d9512b5b):
// probes in findings/round16n/ (README there), each FINDING before its fix
// on this build and held after.
//   - zerohide.js (R16n-1): zero-length records queued past the drain's
//     fixed count of empty reads hid a lingering socket from the end-of-run
//     drain; the channel is now drained to where the peer's copy has nothing
//     unreceived (SIOCOUTQ). Needs net.core.wmem_max above ~3.2 MiB to
//     attack at all (elsewhere it holds trivially; the Rust test
//     cordon-passed-fds › a_seqpacket_channel_drained_with_its_peer… forces
//     the buffer as root and fails with the old drain).
//   - noreceipt.js (R16n-2): a zero-length record read after the program's
//     SHUT_WR was taken for the end, and the records behind it got no
//     receipt; the end is now the shutdown with nothing unreceived.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./harness');

const skip = h.skipReason() ?? false;
const probe = (name, fn) => test(name, { skip, timeout: 200_000 }, fn);

function runProbe(file, args = [], env = {}) {
  const run = spawnSync(process.execPath, [path.join(__dirname, 'findings', file), ...args], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, ...env } });
  const lines = `${run.stdout}`.trim().split('\n');
  return { last: lines[lines.length - 1], text: `${run.stdout}\n${run.stderr}`.slice(-2500) };
}

describe('round 16n: the seqpacket fd-4 channel', () => {
  probe('R16n-1: a socket queued behind zero-length records on fd 4 is drained at the run\'s end, not purged by a close', () => {
    // A linger of 5 s, not the probe's 20: the program's own close of X
    // blocks for it in each of the two runs, and a closer thread stuck in
    // tcp_close for 5 s is still seen by the probe's 5 s watch after the run.
    const { last, text } = runProbe('round16n/zerohide.js', [], { R16_LINGER: '5' });
    assert.match(last, /^held\b/, text); // 'held: …' where the kernel refuses descriptors on fd 4 at the sender (round14/h.js)
  });
  probe('R16n-2: records sent before the program shuts fd 4 down each get their receipt', () => {
    const { last, text } = runProbe('round16n/noreceipt.js');
    assert.equal(last, 'held', text);
  });
});
