'use strict';

// Rounds 14 and 14w, kept as tests: each probe runs real sandboxes (python3
// inside, mediated network for loopback TCP) against a provider in a child
// Node and prints `held` or `FINDING: …` (its control in the same run).
//   - round14/fd4-nested.js (R14-2): a unix socket queueing a lingering TCP
//     socket and its never-read peer, passed over fd 4: no closer thread may
//     stay stuck in tcp_close (crates/passed-fds/src/settle.rs).
//   - round14w/own-end-pinned.js (R14w-2): the sandbox's own fd 3 end passed
//     behind such a socket: the run still settles once its sandbox is gone
//     (refused at the sender where SO_PASSRIGHTS exists; fd 3 shut for
//     reading at teardown otherwise).

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./harness');

const skip = h.skipReason() ?? false;
const probe = (name, fn) => test(name, { skip, timeout: 150_000 }, fn);

function runProbe(file) {
  const run = spawnSync(process.execPath, [path.join(__dirname, 'findings', file)], { encoding: 'utf8', timeout: 120_000 });
  const lines = `${run.stdout}`.trim().split('\n');
  return { last: lines[lines.length - 1], text: `${run.stdout}\n${run.stderr}`.slice(-2000) };
}

describe('rounds 14 and 14w: descriptors passed behind a nested lingering socket', () => {
  probe('R14-2: over fd 4, no closer thread of the provider stays stuck closing the nested socket', () => {
    const { last, text } = runProbe('round14/fd4-nested.js');
    assert.match(last, /^held\b/, text); // 'held: …' where the kernel refuses descriptors on fd 4 at the sender (round14/h.js)
  });

  probe('R15r-2: fd 3 reporting an error (the sandbox closed it with host bytes unread) is still read to its end at once', () => {
    // libuv stops a poll handle itself on POLLERR; the reader must know, or a
    // later grant never restarts it and the rest waits for the sandbox's exit.
    const { last, text } = runProbe('round15r/pollerr-stall.js');
    assert.match(last, /^held/, text);
  });

  probe('R14w-2: a sandbox that passes its own fd 3 end behind one still lets its run settle', () => {
    const { last, text } = runProbe('round14w/own-end-pinned.js');
    assert.match(last, /^held/, text);
  });
});
