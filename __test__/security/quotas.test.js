'use strict';

// The per-user kernel quotas a non-root provider's sandboxes can and cannot
// touch (docs/security.md, "A non-root provider: its sandboxes' identity",
// the table; the epoll row is identity.test.js). Each test runs a real
// sandbox of a uid-65534 provider (with the subordinate range .ci/run adds)
// whose program, quotas.c, takes as much of one quota as it can get and
// holds it; meanwhile the provider, outside any sandbox, uses that quota
// itself (the same program, `try`): it must still get it.
//
// The sandbox's uid is not the provider's, so the counts kept per uid
// (epoll watches, keys, pipe pages, inotify) are the sandbox's own. But the
// counts kept per user namespace chain (NPROC, pending signals, message-
// queue bytes, user namespaces) are charged to every level up to the
// namespace's owner: the provider. Those are bounded by the sandbox's own
// rlimits (charged to the provider at most that much per sandbox) or
// denied outright.

const { test } = require('node:test');
const assert = require('node:assert/strict');

const h = require('./harness');
const { nonRootSkipReason, provider } = require('./provider-process');

const skip = nonRootSkipReason() ?? false;
const HOLD_SECONDS = '3';

/**
 * The sandbox holds `quota`; the provider tries it meanwhile. Returns what
 * the sandbox held (its RESULT detail) and what the provider got.
 */
function holdAndTry(quota, options = {}) {
  const run = provider(h.NOBODY_UID, [h.compiled('quotas.c'), 'hold', quota, HOLD_SECONDS], {
    ...options, touch: { exec: ['try', quota] },
  });
  assert.equal(run.status, 0, `provider failed (${run.status ?? run.signal}): ${run.stderr}`);
  const { text, providerTouch, receipt } = run.value;
  assert.equal(receipt.confinement.planned.uidAllocation, 'subordinate-per-run', 'the sandbox ran as a subordinate id');
  assert.deepEqual(receipt.confinement.mismatches, []);
  const held = new RegExp(`^RESULT ${quota} (held=(\\d+) stopped=(.*))$`, 'm').exec(text);
  assert.ok(held, `no RESULT line: ${text}`);
  return { detail: held[1], held: Number(held[2]), stopped: held[3], providerTouch, text };
}

test('NPROC: a sandbox forking until refused is stopped at its own RLIMIT_NPROC (processes + 512), and the provider still forks', { skip }, () => {
  const run = holdAndTry('nproc');
  // Without a cgroup (uid 65534 has none) NPROC is the bound: 64 + 512,
  // charged up the namespace chain to the provider too, far below its own
  // limit. The count includes the sandbox's init and the program.
  assert.equal(run.stopped, 'Resource temporarily unavailable', run.text);
  assert.ok(run.held > 0 && run.held <= 576, run.detail);
  assert.equal(run.providerTouch, 'ok');
});

test('pending signals: a sandbox queueing realtime signals until refused holds at most its own 1024, and the provider still queues signals and creates a POSIX timer', { skip }, () => {
  const run = holdAndTry('sigpending');
  assert.equal(run.stopped, 'Resource temporarily unavailable', run.text);
  assert.ok(run.held > 0 && run.held <= 1024, run.detail);
  // SigQ is the provider uid's own count: the sandbox's signals are
  // charged to it too (up the namespace chain), bounded by the sandbox's
  // RLIMIT_SIGPENDING; the provider's limit is far above.
  assert.match(run.providerTouch, /^ok SigQ=\d+\/\d+$/, run.providerTouch);
});

test('locked memory: a sandbox locking pages until refused locks at most its own 64 KiB, and the provider still locks memory', { skip }, () => {
  const run = holdAndTry('memlock');
  // mlock counts per process (the address space's locked pages), not per
  // uid: nothing is charged to the provider.
  assert.equal(run.stopped, 'Cannot allocate memory', run.text);
  assert.ok(run.held > 0 && run.held <= 16, run.detail);
  assert.equal(run.providerTouch, 'ok');
});

test('kernel keys: a sandbox cannot add a single key (add_key is denied), and the provider still adds keys', { skip }, () => {
  const run = holdAndTry('keys');
  assert.equal(run.detail, 'held=0 stopped=Operation not permitted', run.text);
  assert.equal(run.providerTouch, 'ok');
});

test('pipe pages: a sandbox growing pipes until refused exhausts only its own uid\'s fs.pipe-user-pages-soft, and the provider still grows a pipe to 1 MiB', { skip }, () => {
  // 64 pipes of 1 MiB reach the default 16384 pages; each pipe is two
  // descriptors.
  const run = holdAndTry('pipes', { resources: { openFiles: 1024 } });
  assert.equal(run.stopped, 'Operation not permitted', `refused by the per-uid soft limit: ${run.text}`);
  assert.ok(run.held >= 1, run.detail);
  assert.equal(run.providerTouch, 'ok');
});

test('user namespaces: a sandbox cannot create one (unshare is denied), and the provider still creates one', { skip }, () => {
  const run = holdAndTry('userns');
  assert.equal(run.detail, 'held=0 stopped=Operation not permitted', run.text);
  assert.equal(run.providerTouch, 'ok');
});

test('inotify: a sandbox cannot create an instance (inotify_init1 is denied), and the provider still creates one', { skip }, () => {
  const run = holdAndTry('inotify');
  assert.equal(run.detail, 'held=0 stopped=Function not implemented', run.text);
  assert.equal(run.providerTouch, 'ok');
});

test('message queues: a sandbox cannot create a queue (mq_open is denied, RLIMIT_MSGQUEUE is 0), and the provider still creates one', { skip }, () => {
  // Before the fix the sandbox held its own 819 200 bytes, charged up the
  // namespace chain to the provider, whose mq_open then failed with EMFILE.
  const run = holdAndTry('mqueue');
  assert.equal(run.detail, 'held=0 stopped=Function not implemented', run.text);
  assert.equal(run.providerTouch, 'ok');
});
