'use strict';

// Rounds 15 (black box) and 15w (white box), kept as tests: each probe runs
// real sandboxes (python3 inside, mediated network) against a provider in a
// child Node and prints `held` or `FINDING: …` (its control in the same run).
// All but the last failed before their fix (crates/passed-fds):
//   - round15/emfile-leak.js (R15-1): descriptors of a message cut short by a
//     provider short of slots (MSG_CTRUNC) were never closed (lib.rs receive);
//   - round15w/dgram-err.js, flood.js (R15w-1): a pending error or a
//     zero-length datagram ended the drain early, the closer then waited in
//     tcp_close (drain.rs);
//   - round15w/budget.js (R15w-3): past the per-thread budget a socket was
//     closed unemptied (settle.rs hands the rest to a fresh closer);
//   - round15w/chain.js, deepfds.js (R15w-4, R15w-7): a passed listener's
//     backlog accepted whole filled the provider's table, and then another
//     run's descriptors were dropped on a runtime worker (one at a time now);
//   - round15w/exhaust.js as uid 65534 (R15w-2): with no closer thread to be
//     had, descriptors were closed on a supervision worker (kept for the next
//     closer now);
//   - round15w/netns.js (R15w-6): fd 3 and fd 4 are made in the provider's
//     network namespace; named before the sandbox gets them, they can no
//     longer take an abstract name there, and fd 4, a seqpacket socket since,
//     reaches the engine only (a datagram one could connect/sendto a host
//     abstract datagram socket).
// Where the kernel refuses descriptors sent over fd 4 at the sender (6.16+:
// the channel's engine end has SO_PASSRIGHTS off), the fd-4 probes cannot
// reach the closer at all: each shows that refusal in one run and prints
// `held: …` (round14/h.js endIfFd4Refuses) instead of waiting out its
// sandboxes' timeouts (~2 minutes of CI); older kernels run them whole.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const h = require('./harness');

const skip = h.skipReason() ?? false;
const probe = (name, fn) => test(name, { skip, timeout: 200_000 }, fn);

function runProbe(file, args = []) {
  const run = spawnSync(process.execPath, [path.join(__dirname, 'findings', file), ...args], { encoding: 'utf8', timeout: 180_000 });
  const lines = `${run.stdout}`.trim().split('\n');
  return { lines, last: lines[lines.length - 1], text: `${run.stdout}\n${run.stderr}`.slice(-2500) };
}

describe('rounds 15 and 15w: descriptors a sandbox passes to the provider', () => {
  probe('R15-1: descriptors of a message cut short by a provider short of slots are closed', () => {
    const { last, text } = runProbe('round15/emfile-leak.js', ['150']);
    assert.equal(last, 'held', text);
  });

  for (const [id, file] of [['R15w-1', 'dgram-err.js'], ['R15w-1 (flood)', 'flood.js'], ['R15w-3', 'budget.js'], ['R15w-4/R15w-7', 'chain.js'], ['R15w-4 (depth)', 'deepfds.js']]) {
    probe(`${id}: round15w/${file} holds (no closer thread left waiting, no table filled)`, () => {
      const { last, text } = runProbe(`round15w/${file}`);
      assert.match(last, /^held\b/, text); // 'held: …' where the kernel refuses descriptors on fd 4 at the sender (round14/h.js)
    });
  }

  probe('R15w-2: as uid 65534 with no closer thread to be had, no supervision worker waits in a close', () => {
    const { last, text } = runProbe('round15w/nobody.js', ['exhaust.js']);
    assert.equal(last, 'held', text);
  });

  probe('R15w-6: fd 3 and fd 4 cannot take an abstract name in the provider\'s namespace, nor fd 4 reach a host socket', () => {
    const { lines, text } = runProbe('round15w/netns.js');
    const facts = JSON.parse(lines.find((l) => l.startsWith('{"sandbox"')) ?? '{}');
    assert.equal(facts.squatVisibleInProviderNamespace, false, text);
    assert.equal(facts.fd3SquatVisible, false, text);
    assert.equal(facts.plainRunFd3SquatVisible, false, text);
    assert.equal(facts.hostServiceBindingThatName, 'bound', text);
    assert.deepEqual(facts.hostReceived, [], text);
    assert.ok(facts.sandbox.includes('fd4: sendto returned'), text); // the sendto was tried
  });
});
