'use strict';

// What the program can see and do inside the sandbox, probed from inside.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawnIsolated, readOnly, workspaceWrite, profile } = require('..');
const { once } = require('node:events');
const { fixture, runToEnd, ownControlRoots, pidsWithMarker, eventually } = require('./spawn-support');
const { SANDBOX_UID, RUN_UID_FIRST } = require('./security/harness');

/** Parses "name=value" lines. */
const probes = (text) => Object.fromEntries(text.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2)));

test('the program starts with an empty environment: no PATH, HOME or TMPDIR', async () => {
  process.env.CORDON_TEST_SECRET = 'must-not-leak';
  const { result, stderr } = await runToEnd(spawnIsolated(['/usr/bin/env'], { policy: readOnly() }));
  assert.equal(result.returncode, 0);
  assert.equal(stderr, '');
});

test('options.env is the whole environment, and only names the policy allows', async () => {
  const policy = { ...readOnly(), environment: { allow: ['LANG'] } };
  const { stderr } = await runToEnd(spawnIsolated(['/usr/bin/env'], { policy, env: { LANG: 'C.UTF-8' } }));
  assert.equal(stderr, 'LANG=C.UTF-8\n');
  assert.throws(
    () => spawnIsolated(['/usr/bin/env'], { policy: readOnly(), env: { LANG: 'C' } }),
    { code: 'ERR_CORDON_INVALID_OPTIONS' },
  );
});

test('an options.env secret reaches the program but no host command line (bwrap reads it from --args)', async () => {
  const secret = `sk-cordon-test-${process.pid}-${Date.now()}`;
  const policy = { ...readOnly(), environment: { allow: ['API_KEY'] } };
  const script = 'printf "%s\\n" "$API_KEY"; exec /usr/bin/sleep 30';
  const execution = spawnIsolated(['/bin/sh', '-c', script], { policy, env: { API_KEY: secret } });
  const done = runToEnd(execution);
  try {
    const [first] = await once(execution.stderr, 'data');
    assert.equal(first.toString(), `${secret}\n`, 'the program got the value');
    const bwrapCmdline = fs.readFileSync(`/proc/${execution.pid}/cmdline`, 'latin1');
    assert.ok(!bwrapCmdline.includes(secret), `bwrap's argv shows the secret: ${bwrapCmdline}`);
    assert.ok(bwrapCmdline.includes('--args'), bwrapCmdline);
    assert.deepEqual(pidsWithMarker(secret), [], 'no host process shows the secret in its command line');
  } finally {
    await execution.stop();
  }
  await done;
});

test('under readOnly() the workspace is read-only, /tmp is writable and host secrets are unreadable', async (t) => {
  // Markers in the host's /root and /home: the sandbox must not see them,
  // wherever the checkout (and so the probe's own path) lives.
  const markers = ['/root', '/home'].map((dir) => path.join(dir, `.cordon-probe-marker-${process.pid}`));
  if (process.geteuid() !== 0) t.diagnostic('not root: the /root and /home markers cannot be planted, so those two probes prove little');
  else fs.mkdirSync('/home', { recursive: true });
  for (const marker of markers) {
    try { fs.writeFileSync(marker, 'host secret\n', { mode: 0o644 }); } catch (error) { if (error.code !== 'EACCES') throw error; }
  }
  let outcome;
  try {
    outcome = await runToEnd(spawnIsolated([fixture('probe-filesystem'), ...markers], { policy: readOnly() }));
  } finally {
    for (const marker of markers) fs.rmSync(marker, { force: true });
  }
  const { result, stderr } = outcome;
  assert.equal(result.returncode, 0);
  const seen = probes(stderr);
  assert.equal(seen['write-workspace'], 'denied');
  assert.equal(seen['write-tmp'], 'ok');
  assert.equal(seen['write-root'], 'denied');
  assert.equal(seen['write-usr'], 'denied');
  assert.equal(seen['read-shadow'], 'denied');
  assert.equal(seen['read-root-marker'], 'denied');
  assert.equal(seen['read-home-marker'], 'denied');
  assert.equal(seen['list-host-tmp-cordon'], 'denied');
  assert.equal(seen['list-host-shm-cordon'], 'denied');
});

test('the program holds exactly fd 0 (/dev/null), fd 1 and 2 (one pipe) and fd 3 (a socket)', async () => {
  // The shell (a program every sandbox has, no interpreter assumed at a fixed
  // path) lists its own descriptors: the glob opens one more, closed by the
  // time each is read back, so only the inherited ones still resolve.
  // No redirection: dash applies it in the shell itself around the fork.
  const script = 'for f in /proc/$$/fd/*; do [ -e "$f" ] && printf "%s " "${f##*/}" && readlink "$f"; done';
  const { stderr } = await runToEnd(spawnIsolated(['/bin/sh', '-c', script], { policy: readOnly() }));
  const fds = Object.fromEntries(stderr.split('\n').map((line) => line.split(' ')).filter(([, target]) => target));
  assert.deepEqual(Object.keys(fds), ['0', '1', '2', '3']);
  assert.equal(fds[0], '/dev/null');
  assert.match(fds[1], /^pipe:/);
  assert.equal(fds[2], fds[1]);
  assert.match(fds[3], /^socket:/);
});

test('the control root is not visible inside the sandbox', async () => {
  // The program must have read the path (a failed read would also print
  // "hidden"), and it checks a path it can see as a control.
  const script = 'read root <&3 || exit 9; echo "read:$root"; test -e /workspace && echo control-seen; '
    + 'ls "$root" >/dev/null 2>&1 && echo visible || echo hidden; test -e "$(dirname "$root")" && echo base-visible || echo base-hidden';
  const execution = spawnIsolated(['/bin/sh', '-c', script], { policy: readOnly() });
  const [root] = ownControlRoots();
  assert.ok(root, 'the run has a control root on the host');
  assert.ok(fs.existsSync(path.join(root)), 'the control root exists on the host while the run lasts');
  execution.protocol.end(`${root}\n`);
  const { stderr, result } = await runToEnd(execution);
  assert.equal(result.returncode, 0, stderr);
  assert.equal(stderr, `read:${root}\ncontrol-seen\nhidden\nbase-hidden\n`);
});

test('under workspaceWrite() a file written to /workspace appears in the host workspace', async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-ws-'));
  // When the provider is root the sandbox runs as its own uid: a
  // caller-provided writable workspace must be writable by it (docs/policy.md).
  if (process.geteuid() === 0) fs.chownSync(workspace, SANDBOX_UID, SANDBOX_UID);
  try {
    const execution = spawnIsolated(['/bin/sh', '-c', 'echo hello > /workspace/out.txt'], { policy: workspaceWrite(), workspace });
    const { result } = await runToEnd(execution);
    assert.equal(result.returncode, 0);
    assert.equal(fs.readFileSync(path.join(workspace, 'out.txt'), 'utf8'), 'hello\n');
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test('a caller-provided workspace is mounted read-only under readOnly()', async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-ws-'));
  fs.chmodSync(workspace, 0o755);
  fs.writeFileSync(path.join(workspace, 'input.txt'), 'data\n');
  try {
    const script = 'cat /workspace/input.txt; (echo x > /workspace/input.txt) 2>/dev/null && echo wrote || echo denied';
    const { stderr } = await runToEnd(spawnIsolated(['/bin/sh', '-c', script], { policy: readOnly(), workspace }));
    assert.equal(stderr, 'data\ndenied\n');
    assert.equal(fs.readFileSync(path.join(workspace, 'input.txt'), 'utf8'), 'data\n');
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test('profile("untrusted") has no /workspace at all', async () => {
  const { stderr } = await runToEnd(spawnIsolated(['/bin/sh', '-c', 'pwd; test -e /workspace && echo present || echo absent'], { policy: profile('untrusted') }));
  assert.equal(stderr, '/\nabsent\n');
});

test('only the loopback interface exists and a host listener on 127.0.0.1 is unreachable', async () => {
  const server = net.createServer((socket) => socket.end('hello'));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address();
    const { result, stderr } = await runToEnd(spawnIsolated([fixture('probe-network'), String(port)], { policy: readOnly() }));
    assert.equal(result.returncode, 0, stderr);
    const seen = probes(stderr);
    assert.equal(seen.interfaces, 'lo');
    assert.match(seen.connect, /^failed:/);
    assert.equal(result.receipt.policy.network.mode, 'none');
  } finally {
    server.close();
  }
});

test('host processes are invisible: the sandbox sees only its own pids', async () => {
  const { stderr } = await runToEnd(spawnIsolated(['/bin/ls', '/proc'], { policy: readOnly() }));
  const pids = stderr.split('\n').filter((name) => /^\d+$/.test(name)).map(Number);
  assert.ok(pids.length >= 1 && pids.length <= 3, `pids seen: ${pids}`);
  assert.ok(pids.every((pid) => pid <= 3), `pids seen: ${pids}`);
});

test('the sandbox is never real root: it runs as an unprivileged uid with no capabilities', async () => {
  const marker = `never-root-${process.pid}-${Date.now()}`;
  const script = 'grep -E "^(Uid|Gid|CapEff|CapPrm|CapBnd)" /proc/self/status; read done <&3';
  const execution = spawnIsolated(['/bin/sh', '-c', script, marker], { policy: readOnly() });
  // Seen from the host while it runs: the program's real, effective, saved and fs uids.
  let hostStatus = null;
  const isShell = (pid) => {
    try { return fs.readFileSync(`/proc/${pid}/comm`, 'utf8') === 'sh\n'; } catch { return false; }
  };
  await eventually(() => {
    const program = pidsWithMarker(marker).find(isShell);
    if (program !== undefined) hostStatus = fs.readFileSync(`/proc/${program}/status`, 'utf8');
    return hostStatus !== null;
  }, 10_000);
  execution.protocol.end('done\n');
  assert.ok(hostStatus, 'the sandboxed shell is visible from the host');
  const { stderr, result } = await runToEnd(execution);
  const { uid, gid, uidAllocation } = result.receipt.confinement.planned;
  if (process.geteuid() === 0) {
    // A root provider's run without a workspace of its own: a leased per-run uid.
    assert.equal(uidAllocation, 'per-run');
    assert.ok(uid >= RUN_UID_FIRST && uid < RUN_UID_FIRST + 0x10000, `uid ${uid}`);
    assert.equal(gid, uid);
  } else {
    // A non-root provider's run: a leased id of its subordinate range, never its own.
    assert.equal(uidAllocation, 'subordinate-per-run');
    assert.notEqual(uid, process.geteuid());
  }
  const field = (text, name) => new RegExp(`^${name}:\\s+(.*)$`, 'm').exec(text)?.[1].split(/\s+/).map(Number);
  assert.notEqual(uid, 0);
  assert.deepEqual(field(hostStatus, 'Uid'), Array(4).fill(uid), hostStatus);
  // Seen from inside: never uid 0, and every capability set empty.
  assert.ok(field(stderr, 'Uid').every((u) => u !== 0), stderr);
  for (const set of ['CapEff', 'CapPrm', 'CapBnd']) assert.match(stderr, new RegExp(`^${set}:\\s+0+$`, 'm'), `${set} in ${stderr}`);
});

test('concurrent runs of a root provider without a shared workspace each get a host uid of their own', { skip: process.geteuid() === 0 ? false : 'needs root: a non-root provider runs every sandbox as itself' }, async () => {
  const runs = Array.from({ length: 8 }, () => runToEnd(spawnIsolated(['/bin/sh', '-c', 'sleep 0.3; grep ^Uid: /proc/self/status'], { policy: workspaceWrite() })));
  const uids = (await Promise.all(runs)).map(({ result }) => result.receipt.confinement.planned.uid);
  assert.equal(new Set(uids).size, uids.length, `uids: ${uids}`);
  assert.ok(uids.every((uid) => uid >= RUN_UID_FIRST && uid < RUN_UID_FIRST + 0x10000), `uids: ${uids}`);
});

test('runs on a workspace owned by a reserved owner uid share it, and each keeps working on what the last left', { skip: process.geteuid() === 0 ? false : 'needs root: a non-root provider runs every sandbox as itself' }, async () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-ws-'));
  const owner = SANDBOX_UID + 7;
  fs.chownSync(workspace, owner, owner);
  try {
    const first = await runToEnd(spawnIsolated(['/bin/sh', '-c', 'echo one > /workspace/f; mkdir /workspace/d; chmod 600 /workspace/f'], { policy: workspaceWrite(), workspace }));
    assert.equal(first.result.returncode, 0, first.stderr);
    const second = await runToEnd(spawnIsolated(['/bin/sh', '-c', 'echo two >> /workspace/f && rmdir /workspace/d && cat /workspace/f'], { policy: workspaceWrite(), workspace }));
    assert.equal(second.result.returncode, 0, second.stderr);
    assert.equal(second.stderr, 'one\ntwo\n');
    for (const { result } of [first, second]) {
      assert.deepEqual([result.receipt.confinement.planned.uid, result.receipt.confinement.planned.gid, result.receipt.confinement.planned.uidAllocation], [owner, owner, 'workspace-owner']);
    }
    assert.equal(fs.statSync(path.join(workspace, 'f')).uid, owner, 'what the sandbox wrote is owned by the workspace owner on the host');
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
});

test('an executable under a 0700 root-owned directory still launches', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-private-'));
  fs.chmodSync(dir, 0o700);
  const exe = path.join(dir, 'echo-fd3');
  fs.copyFileSync(fixture('echo-fd3'), exe);
  fs.chmodSync(exe, 0o755);
  try {
    const execution = spawnIsolated([exe], { policy: readOnly() });
    execution.protocol.end('ping\n');
    const { result, protocol } = await runToEnd(execution);
    assert.equal(result.returncode, 0);
    assert.equal(protocol, 'ping\n');
    assert.equal(result.receipt.command.executable, exe);
    assert.match(result.receipt.command.executableSha256, /^[0-9a-f]{64}$/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the receipt names the backend, the policy digest and the outcome', async () => {
  const { result } = await runToEnd(spawnIsolated(['/bin/sh', '-c', 'exit 7'], { policy: readOnly(), invocationId: 'receipt-test-1' }));
  const { receipt } = result;
  assert.equal(result.returncode, 7);
  assert.equal(receipt.receiptVersion, 2);
  assert.equal(receipt.invocationId, 'receipt-test-1');
  assert.equal(receipt.backend.name, 'bubblewrap');
  assert.match(receipt.backend.version, /^\d+\.\d+/);
  assert.match(receipt.policy.digest, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(receipt.outcome, { status: 'exited', exitCode: 7, signal: null });
  assert.deepEqual(receipt.confinement.planned.namespaces, ['user', 'ipc', 'pid', 'net', 'uts', 'cgroup']);
  assert.deepEqual(receipt.confinement.mismatches, []);
  assert.equal(receipt.stop.requested, false);
  assert.equal(receipt.stop.containmentConfirmed, true);
  assert.ok(Date.parse(receipt.endedAt) >= Date.parse(receipt.startedAt));
});
