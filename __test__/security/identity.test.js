'use strict';

// Issue 18 A1: a sandbox never runs as the provider's uid. A non-root
// provider (uid 65534, with a subordinate range in /etc/subuid and
// /etc/subgid — .ci/run adds it) runs each sandbox as a uid and gid of its
// own from that range, with no supplementary group; the epoll-watches
// attack that crashed such a provider then exhausts only the sandbox's own
// quota. Each probe has its control: the same run with the identity shared
// by the policy (process.identity "shared-with-provider") shows what the
// default prevents. A provider without subordinate ids (uid 65533) is
// refused, naming the fix.
//
// Providers run as other uids, from a world-readable copy of the package
// (nobody-provider.js), so these tests need root.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const h = require('./harness');
const { nobodyProvider } = require('./nobody-provider');
const { nonRootSkipReason, provider, range, PROVIDER_GROUP } = require('./provider-process');

/** A uid with no /etc/subuid line and no account: the "nothing configured" provider. */
const NO_RANGE_UID = 65533;

function skipReason() {
  const base = nonRootSkipReason();
  if (base) return base;
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    if (fs.readFileSync(file, 'utf8').split('\n').some((l) => l.startsWith(`${NO_RANGE_UID}:`))) return `uid ${NO_RANGE_UID} must have no range in ${file}`;
  }
  return null;
}

/** identity.c, compiled static once, in a world-readable directory. */
function attacker() {
  return h.compiled('identity.c');
}

/** The ID lines of identity.c's whoami → {uid: [4], gid: [4], groups: []}. */
function ids(text) {
  const line = (name) => (new RegExp(`^ID ${name}:\\s*(.*)$`, 'm').exec(text)?.[1] ?? '').trim().split(/\s+/).filter(Boolean).map(Number);
  return { uid: line('Uid'), gid: line('Gid'), groups: line('Groups') };
}

function whoami(options = {}) {
  const run = provider(h.NOBODY_UID, [attacker(), 'whoami'], options);
  assert.ok(run.value?.receipt, `provider failed (${run.status ?? run.signal}): ${run.stderr}`);
  return { ...run.value, confinement: run.value.receipt.confinement };
}

test('a non-root provider runs each sandbox as a subordinate uid and gid of its own, never as itself, with no supplementary group', { skip: skipReason() ?? false }, () => {
  const uids = range('/etc/subuid');
  const half = Math.floor(uids.count / 2);
  const first = whoami();
  const second = whoami();
  for (const run of [first, second]) {
    const { planned, observed, mismatches } = run.confinement;
    assert.deepEqual(mismatches, [], JSON.stringify(mismatches));
    assert.equal(planned.uidAllocation, 'subordinate-per-run');
    assert.equal(planned.identity.mode, 'own');
    assert.equal(planned.identity.enteredBy, 'subordinate-user-namespace');
    assert.ok(planned.uid >= uids.first + half && planned.uid < uids.first + uids.count, `uid ${planned.uid} from the per-run half`);
    // Seen from the host by the launcher, and from inside by the program
    // (its own uid namespace maps the same number).
    assert.deepEqual(observed.hostUid, [planned.uid, planned.uid, planned.uid, planned.uid]);
    assert.ok(!observed.hostUid.includes(h.NOBODY_UID), 'the program is not the provider');
    assert.deepEqual(observed.groups, [], 'no supplementary group: the provider has two, the sandbox none');
    const inside = ids(run.text);
    assert.deepEqual(inside.uid, [planned.uid, planned.uid, planned.uid, planned.uid], run.text);
    assert.deepEqual(inside.groups, [], run.text);
    assert.ok(!inside.gid.includes(h.NOBODY_UID), run.text);
  }
  assert.notEqual(first.confinement.planned.uid, second.confinement.planned.uid, 'a second run gets another uid');
});

test('control: with the identity shared by the policy, the program runs as the provider, with its groups', { skip: skipReason() ?? false }, () => {
  const run = whoami({ identity: 'shared-with-provider' });
  const { planned, observed, mismatches } = run.confinement;
  assert.deepEqual(mismatches, []);
  assert.equal(planned.uidAllocation, 'shared-with-provider');
  assert.equal(planned.identity.mode, 'shared-with-provider');
  assert.ok(planned.identity.shared.some((s) => /crash the provider/.test(s)), 'the receipt says a sandbox can crash the provider');
  assert.deepEqual(observed.hostUid, [h.NOBODY_UID, h.NOBODY_UID, h.NOBODY_UID, h.NOBODY_UID]);
  assert.deepEqual(observed.groups, [PROVIDER_GROUP, h.NOBODY_UID], 'the provider\'s groups follow the sandbox');
});

// The epoll attack takes the whole quota in one process (identity.c): the
// policy raises openFiles for it, and the CPU ceiling for the ~5 M watches
// the kernel allocates (about half a minute here).
const EPOLL_ATTACK = { touch: 'epoll', resources: { openFiles: 8192, cpuSeconds: 300 } };

test('the epoll-watches attack exhausts only the sandbox\'s own quota: the provider\'s event loop keeps working', { skip: skipReason() ?? false }, () => {
  const run = provider(h.NOBODY_UID, [attacker(), 'epoll-watches', '3'], EPOLL_ATTACK, 240_000);
  assert.equal(run.status, 0, `provider died (${run.signal}): ${run.stderr}`);
  const result = h.parseResults(run.value.text).get('epoll-watches');
  assert.equal(result?.verdict, 'open', `the sandbox's own uid quota is exhausted: ${run.value.text}`);
  assert.equal(run.value.providerTouch, 'ok', 'the provider registered new descriptors while the sandbox held its quota');
  assert.equal(run.value.receipt.confinement.planned.uidAllocation, 'subordinate-per-run');
  assert.deepEqual(run.value.receipt.confinement.mismatches, []);
});

test('control: with the identity shared, the same attack crashes the provider (SIGABRT on ENOSPC)', { skip: skipReason() ?? false }, async () => {
  // As uid 65533, which no other test file runs as: the attack takes that
  // uid's whole quota, and a concurrent provider of the same uid would die.
  const run = provider(NO_RANGE_UID, [attacker(), 'epoll-watches', '5'], { ...EPOLL_ATTACK, identity: 'shared-with-provider' }, 240_000);
  // The watches stay charged to that uid until the attacker is gone (its
  // sandbox dies with the provider): the next provider of that uid would
  // abort too.
  await untilGone(path.basename(attacker()), 180_000);
  assert.equal(run.value, null, `the provider should not have finished: ${JSON.stringify(run.value)?.slice(0, 400)}`);
  assert.equal(run.signal, 'SIGABRT', `status ${run.status}, stderr: ${run.stderr.slice(-400)}`);
});

/**
 * Resolves once no process named `comm` is left (bounded by `ms`). By name:
 * an exiting process has no command line, and freeing ~5 M epoll watches
 * at exit takes the kernel tens of seconds here.
 */
async function untilGone(comm, ms) {
  const deadline = Date.now() + ms;
  const alive = () => fs.readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).some((pid) => {
    try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === comm; } catch { return false; }
  });
  while (alive()) {
    if (Date.now() > deadline) throw new Error(`a process named ${comm} is still alive after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('a non-root provider without subordinate ids is refused with ERR_CORDON_IDENTITY_UNAVAILABLE naming the fix, unless the policy shares its identity', { skip: skipReason() ?? false }, () => {
  const refused = provider(NO_RANGE_UID, [attacker(), 'whoami']);
  assert.equal(refused.value?.refused, 'ERR_CORDON_IDENTITY_UNAVAILABLE', refused.stderr);
  assert.match(refused.value.message, new RegExp(`echo '${NO_RANGE_UID}:\\d+:65536' >> /etc/subuid`));
  assert.match(refused.value.message, /shared-with-provider/);
  const shared = provider(NO_RANGE_UID, [attacker(), 'whoami'], { identity: 'shared-with-provider' });
  assert.equal(shared.value?.receipt?.confinement.planned.uidAllocation, 'shared-with-provider', shared.stderr);
  assert.deepEqual(shared.value.receipt.confinement.observed.hostUid, [NO_RANGE_UID, NO_RANGE_UID, NO_RANGE_UID, NO_RANGE_UID]);
});

test('a writable workspace owned by a subordinate owner uid keeps working across runs, as that owner', { skip: skipReason() ?? false }, () => {
  const owner = range('/etc/subuid').first;
  const ownerGid = range('/etc/subgid').first;
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-identity-ws-'));
  fs.chmodSync(parent, 0o755);
  const workspace = path.join(parent, 'ws');
  fs.mkdirSync(workspace, { mode: 0o700 });
  fs.chownSync(workspace, owner, ownerGid);
  try {
    for (const n of [1, 2]) {
      const run = provider(h.NOBODY_UID, ['/bin/sh', '-c', `echo run${n} >> /workspace/log`], { policy: 'workspaceWrite', workspace });
      const { planned, mismatches } = run.value?.receipt?.confinement ?? {};
      assert.deepEqual(mismatches, [], run.stderr);
      assert.deepEqual([planned.uidAllocation, planned.uid, planned.gid], ['subordinate-owner', owner, ownerGid]);
    }
    assert.equal(fs.readFileSync(path.join(workspace, 'log'), 'utf8'), 'run1\nrun2\n');
    assert.equal(fs.statSync(path.join(workspace, 'log')).uid, owner);
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

// The per-user quota table of docs/security.md: the epoll row is above,
// the other rows are quotas.test.js.

test('cordon doctor, as a non-root provider, reports its subordinate ranges and the delegated cgroup, with the commands that add them', { skip: skipReason() ?? false }, () => {
  const { node, pkg } = nobodyProvider();
  const doctorAs = (uid) => {
    const script = `const r = require(${JSON.stringify(pkg)}).doctor(); process.stdout.write(JSON.stringify(r.checks))`;
    const run = spawnSync('/usr/bin/setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', node, '-e', script], {
      cwd: '/', encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH },
    });
    assert.equal(run.status, 0, run.stderr);
    const checks = JSON.parse(run.stdout);
    const find = (name) => checks.find((c) => c.name === name);
    return { ids: find('subordinate ids (non-root provider)'), cgroup: find('delegated cgroup (non-root provider)') };
  };
  const uids = range('/etc/subuid');
  const nobody = doctorAs(h.NOBODY_UID);
  assert.equal(nobody.ids.ok, true, nobody.ids.detail);
  assert.match(nobody.ids.detail, new RegExp(`^uids ${uids.first}\\.\\.${uids.first + uids.count} `));
  assert.equal(nobody.ids.importance, 'required');
  assert.equal(nobody.cgroup.importance, 'optional');
  // This host has no systemd delegation (a v1/hybrid hierarchy here):
  // the check says why and how to get one.
  if (!nobody.cgroup.ok) assert.match(nobody.cgroup.fix, /systemd-run --user --scope/);
  const bare = doctorAs(NO_RANGE_UID);
  assert.equal(bare.ids.ok, false);
  assert.match(bare.ids.detail, /ERR_CORDON_IDENTITY_UNAVAILABLE/);
  assert.match(bare.ids.fix, new RegExp(`echo '${NO_RANGE_UID}:\\d+:65536' >> /etc/subuid`));
});

test('a mediated network run of a non-root provider reaches an allowed loopback server through the relay, as its subordinate id', { skip: skipReason() ?? false }, async () => {
  // The server runs in a process of its own: provider() blocks this one.
  const server = require('node:child_process').spawn(process.execPath, ['-e',
    "require('node:http').createServer((q, r) => r.end('hello ' + q.url)).listen(0, '127.0.0.1', function () { console.log(this.address().port); })"],
  { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = Number(await new Promise((resolve) => server.stdout.once('data', resolve)));
  // A world-readable copy of the relay (the checkout may sit under a 0700 directory).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-identity-relay-'));
  fs.chmodSync(dir, 0o755);
  const relay = path.join(dir, 'cordon-egress-relay');
  fs.copyFileSync(path.join(__dirname, '..', '..', 'target', 'release', 'cordon-egress-relay'), relay);
  fs.chmodSync(relay, 0o755);
  try {
    const code = `import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${port}/x', timeout=10).read().decode())`;
    const allow = [{ protocol: 'tcp', host: '127.0.0.1', port, allowPrivateAddresses: true }];
    const run = provider(h.NOBODY_UID, ['/usr/bin/python3', '-c', code], { allow, relay });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.value.text, /hello \/x/, run.value.text);
    assert.equal(run.value.receipt.confinement.planned.uidAllocation, 'subordinate-per-run');
    assert.deepEqual(run.value.receipt.confinement.mismatches, []);
  } finally {
    server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
