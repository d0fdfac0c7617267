'use strict';

// Session commands in the warm sandbox: results, timeouts that kill the
// command's group and keep the session, the shared output cap, background
// handles, the concurrency bound, a full workspace, and an exec agent that
// is killed, lies, or is impersonated (docs/sessions.md).

const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { sessionsSkipReason, managerFor, marker, pidsWithMarker, scope } = require('./sessions-support');
const { eventually } = require('./spawn-support');
const { MAX_CHUNK_BYTES } = require('../lib/sessions/agent-frames');

const skip = sessionsSkipReason();

test('exec returns exit code, stdout, stderr and duration, with cwd, env and stdin applied', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('exec'), 'u');
  await session.exec(['/bin/mkdir', '-p', 'sub/dir']);
  const result = await session.exec({ shell: 'bash', script: 'pwd; echo "$GREETING"; cat; echo oops >&2; exit 3' }, { cwd: 'sub/dir', env: { GREETING: 'hi' }, stdin: 'from stdin\n' });
  assert.equal(result.exitCode, 3);
  assert.equal(result.signal, null);
  assert.equal(result.stdout, '/workspace/sub/dir\nhi\nfrom stdin\n');
  assert.equal(result.stderr, 'oops\n');
  assert.equal(result.truncated, false);
  assert.equal(result.timedOut, false);
  assert.ok(result.durationMs > 0);
  const byName = await session.exec(['ls', '-d', '.']);
  assert.equal(byName.stdout, '.\n', 'a bare program name resolves through the command PATH');
  await assert.rejects(session.exec(['/no/such/program']), { code: 'ERR_CORDON_SESSION_COMMAND_FAILED' });
  await assert.rejects(session.exec(['/bin/true'], { cwd: '../..' }), { code: 'ERR_CORDON_SESSION_PATH_REFUSED' });
  await assert.rejects(session.exec(['/bin/true'], { colour: 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  await assert.rejects(session.exec('/bin/true'), { code: 'ERR_CORDON_INVALID_COMMAND' });
  assert.equal((await session.exec(['/bin/true'])).exitCode, 0, 'the session still works');
});

test('a command runs in /workspace by default (the agent\'s own directory, inherited without a chdir) and in its cwd otherwise, whatever ran before; a missing program or cwd is a coded failure', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('cwd'), 'u');
  await session.exec(['/bin/mkdir', '-p', 'a/b']);
  assert.equal((await session.exec(['/bin/pwd'])).stdout, '/workspace\n');
  assert.equal((await session.exec(['/bin/pwd'], { cwd: 'a/b' })).stdout, '/workspace/a/b\n');
  assert.equal((await session.exec(['/bin/pwd'], { cwd: '.' })).stdout, '/workspace\n', 'the previous cwd did not stick');
  assert.equal((await session.exec(['pwd'])).stdout, '/workspace\n', 'a bare name too');
  await assert.rejects(session.exec(['/no/such/program']), { code: 'ERR_CORDON_SESSION_COMMAND_FAILED' });
  await assert.rejects(session.exec(['/bin/true'], { cwd: 'missing' }), { code: 'ERR_CORDON_SESSION_COMMAND_FAILED' });
  assert.equal((await session.exec(['/bin/true'])).exitCode, 0, 'the session still works');
});

test('a command that never ends is killed at timeoutMs with its whole process group, and the session stays usable', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('timeout'), 'u');
  const tag = marker('hang');
  // 3 s: bash must start both and say so before the kill, on a loaded machine too.
  const result = await session.exec({ shell: 'bash', script: `(exec -a ${tag} sleep 300) & (exec -a ${tag} sleep 300) & echo started; wait` }, { timeoutMs: 3000 });
  assert.equal(result.timedOut, true);
  assert.equal(result.signal, 'SIGKILL');
  assert.equal(result.stdout, 'started\n');
  assert.ok(await eventually(() => pidsWithMarker(tag).length === 0, 10_000), 'every process of the group is gone');
  assert.equal((await session.exec(['/bin/echo', 'still here'])).stdout, 'still here\n');
});

test('a command that floods stdout and stderr is capped on both together before retention, and the session stays usable', { skip }, async (t) => {
  const { manager } = managerFor(t, { outputBytes: 64 * 1024 });
  const session = await manager.acquire(scope('flood'), 'u');
  const result = await session.exec({ shell: 'bash', script: 'head -c 3000000 /dev/zero | tr "\\0" o & head -c 3000000 /dev/zero | tr "\\0" e >&2; wait' });
  assert.equal(result.exitCode, 0);
  assert.equal(result.truncated, true);
  assert.equal(result.stdout.length + result.stderr.length, 64 * 1024, 'exactly the cap is kept, across both streams');
  // R11-5: the agent sends nothing past the chunk that crossed the cap.
  assert.ok(result.outputBytes > 64 * 1024 && result.outputBytes <= 64 * 1024 + MAX_CHUNK_BYTES, `the host received ${result.outputBytes} bytes`);
  const small = await session.exec(['/bin/echo', 'ok']);
  assert.deepEqual([small.stdout, small.truncated], ['ok\n', false]);
});

test('output past the cap never reaches the provider: background `yes` floods for seconds, the host receives at most the cap plus one chunk (R11-5)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('yes'), 'u');
  const cap = 1 << 20;
  // Before the fix the agent forwarded ~3 GB in 5 s, decoded and dropped on the provider's CPU.
  const floods = await Promise.all([1, 2].map(() => session.start({ shell: 'bash', script: 'timeout 3 yes; true' })));
  const results = await Promise.all(floods.map((flood) => flood.wait()));
  for (const result of results) {
    assert.equal(result.exitCode, 0);
    assert.equal(result.truncated, true);
    assert.equal(result.stdout.length, cap, 'exactly the cap is kept');
    assert.match(result.stdout, /^(y\n)+$/);
    assert.ok(result.outputBytes > cap && result.outputBytes <= cap + MAX_CHUNK_BYTES, `the host received ${result.outputBytes} bytes`);
  }
  const exact = await session.exec({ shell: 'bash', script: `head -c ${cap} /dev/zero | tr "\\0" x` });
  assert.deepEqual([exact.stdout.length, exact.truncated, exact.outputBytes], [cap, false, cap], 'output of exactly the cap is whole and not truncated');
  const oneMore = await session.exec({ shell: 'bash', script: `head -c ${cap} /dev/zero | tr "\\0" x; sleep 0.2; echo -n y` });
  assert.deepEqual([oneMore.stdout.length, oneMore.truncated, oneMore.outputBytes], [cap, true, cap + 1], 'one byte past the cap, sent after the cap was reached, still marks it truncated');
});

test('start() runs a command in the background: its (Unix socket) server is reachable from the next command, and kill() ends it', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('bg'), 'u');
  let listening;
  const ready = new Promise((resolve) => { listening = resolve; });
  const server = await session.start(['/usr/bin/python3', '-c', [
    'import socket', 's=socket.socket(socket.AF_UNIX)', "s.bind('server.sock')", 's.listen()', 'print("listening", flush=True)',
    'while True:', '  c,_=s.accept()', '  c.sendall(b"hello from the background\\n")', '  c.close()',
  ].join('\n')], { onStdout: (chunk) => String(chunk).includes('listening') && listening() });
  await ready;
  assert.ok(Number.isInteger(server.pid) && server.pid > 0);
  const client = await session.exec(['/usr/bin/python3', '-c', [
    'import socket', 'c=socket.socket(socket.AF_UNIX)', "c.connect('server.sock')", 'print(c.recv(100).decode(), end="")',
  ].join('\n')]);
  assert.equal(client.stdout, 'hello from the background\n', client.stderr);
  server.kill('SIGKILL');
  const ended = await server.wait();
  assert.equal(ended.signal, 'SIGKILL');
  assert.match(ended.stdout, /listening/);
});

test('commands past maxCommands are refused with ERR_CORDON_SESSION_BUSY, and admitted again once one ends', { skip }, async (t) => {
  const { manager } = managerFor(t, { maxCommands: 2 });
  const session = await manager.acquire(scope('busy'), 'u');
  const a = await session.start(['/bin/sleep', '30']);
  const b = await session.start(['/bin/sleep', '30']);
  await assert.rejects(session.exec(['/bin/true']), { code: 'ERR_CORDON_SESSION_BUSY' });
  a.kill('SIGKILL');
  await a.wait();
  assert.equal((await session.exec(['/bin/true'])).exitCode, 0);
  b.kill('SIGKILL');
});

test('a command that fills the workspace hits the quota (ENOSPC), the host is unaffected, and the session stays usable', { skip }, async (t) => {
  const { manager } = managerFor(t, { workspaceBytes: 4 << 20 });
  const session = await manager.acquire(scope('full'), 'u');
  const result = await session.exec({ shell: 'bash', script: 'head -c 64000000 /dev/zero > big; echo "rc=$?"; stat -c %s big' });
  assert.match(result.stderr, /No space left on device/);
  assert.ok(Number(result.stdout.split('\n')[1]) <= 4 << 20, result.stdout);
  await assert.rejects(session.writeFile('more.txt', Buffer.alloc(1 << 20)), { code: 'ERR_CORDON_SESSION_WORKSPACE_FULL' });
  await session.exec(['/bin/rm', 'big']);
  assert.equal((await session.exec({ shell: 'bash', script: 'echo fits > small; cat small' })).stdout, 'fits\n');
});

test('with the defaults, filling the workspace ends in ENOSPC, not an OOM kill; a command OOM-killed next leaves the agent serving, the session and its files alive (round 9, R9-3)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('fill-default'), 'u');
  await session.writeFile('notes.md', 'the conversation so far\n');
  // 10 MB files until the workspace refuses one: what a model downloading a data set does.
  const fill = await session.exec({ shell: 'bash', script: 'i=0; while head -c 10000000 /dev/zero > part$i 2>/dev/null; do i=$((i+1)); done; echo "$i"; df -B1 --output=size /workspace | tail -1' }, { timeoutMs: 120_000 });
  assert.equal(fill.signal, null, `the fill was not killed: ${fill.stderr}`);
  const [parts, size] = fill.stdout.trim().split('\n').map(Number);
  assert.ok(parts >= 10 && size <= 128 << 20, `stopped by the quota, at most half the preset's 256 MiB memory ceiling: ${fill.stdout}`);
  // Anonymous memory past the ceiling with the workspace full: the OOM killer takes the command.
  const hog = await session.exec({ shell: 'bash', script: 'x=$(head -c 300000000 /dev/zero | tr "\\0" a); echo ${#x}' }, { timeoutMs: 120_000 });
  assert.equal(hog.signal, 'SIGKILL', `the hog was OOM-killed: ${hog.exitCode} ${hog.stderr}`);
  assert.equal((await session.exec(['echo', 'next'])).stdout, 'next\n', 'the agent serves the next command');
  assert.equal(String(await session.readFile('notes.md')), 'the conversation so far\n');
  const receipt = await session.end();
  assert.equal(receipt.endReason, 'end');
  assert.equal(receipt.failure, null);
});

test('filling /workspace, /tmp and /dev/shm together ends in ENOSPC on each: the agent serves the next command and the files are kept (round 9, R9-3, the triple fill)', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('fill-three'), 'u');
  await session.writeFile('notes.md', 'the conversation so far\n');
  // 10 MB files into each tmpfs until it refuses one; with the defaults the three reached the whole 256 MiB ceiling.
  const script = 'for d in /workspace /tmp /dev/shm; do i=0; while head -c 10000000 /dev/zero > $d/part$i 2>/dev/null; do i=$((i+1)); done; echo "$d $i $(df -B1 --output=used $d | tail -1)"; done';
  const fill = await session.exec({ shell: 'bash', script }, { timeoutMs: 120_000 });
  assert.equal(fill.signal, null, `the fill was not killed: ${fill.stdout} ${fill.stderr}`);
  assert.equal(fill.exitCode, 0, fill.stderr);
  t.diagnostic(fill.stdout.trim().replaceAll('\n', '; '));
  const used = Object.fromEntries(fill.stdout.trim().split('\n').map((line) => line.split(' ')).map(([mount, , bytes]) => [mount, Number(bytes)]));
  assert.deepEqual(Object.keys(used), ['/workspace', '/tmp', '/dev/shm'], fill.stdout);
  const total = used['/workspace'] + used['/tmp'] + used['/dev/shm'];
  assert.ok(total <= 192 << 20, `the three together leave a quarter of the 256 MiB ceiling to the agent and a command: ${fill.stdout}`);
  assert.equal((await session.exec(['echo', 'ok'])).stdout, 'ok\n', 'the agent serves the next command');
  assert.equal(String(await session.readFile('notes.md')), 'the conversation so far\n', 'a file written before the fill is kept');
  const receipt = await session.end();
  assert.equal(receipt.endReason, 'end');
  assert.equal(receipt.failure, null);
});

test('launch option workspaceTmpfsBytes shrinks /tmp to fit a charged workspace; a plain run keeps its sizes; a charge over half the ceiling is refused (round 9, R9-3)', { skip }, async (t) => {
  const { spawnIsolated, readOnly } = require('..');
  const { runToEnd } = require('./spawn-support');
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cordon-charged-'));
  fs.chmodSync(dir, 0o755);
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sizes = async (extra) => {
    const { result, stderr } = await runToEnd(spawnIsolated(['/bin/sh', '-c', 'df -B1 --output=size /tmp /dev/shm | tail -2 >&2'], { policy: readOnly(), workspace: dir, ...extra }));
    assert.equal(result.returncode, 0, stderr);
    return { inside: stderr.trim().split('\n').map(Number), planned: result.receipt.confinement.planned.temp.sizeBytes };
  };
  // Half the preset's 256 MiB ceiling for /tmp and /dev/shm (docs/security.md), as before.
  assert.deepEqual(await sizes({}), { inside: [112 << 20, 16 << 20], planned: 112 << 20 });
  // A session's 128 MiB workspace: the three leave 64 MiB, a quarter of the ceiling.
  assert.deepEqual(await sizes({ workspaceTmpfsBytes: 128 << 20 }), { inside: [48 << 20, 16 << 20], planned: 48 << 20 });
  assert.throws(() => spawnIsolated(['/bin/true'], { policy: readOnly(), workspace: dir, workspaceTmpfsBytes: (128 << 20) + 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /more than half the sandbox's memory ceiling/ });
  assert.throws(() => spawnIsolated(['/bin/true'], { policy: readOnly(), workspaceTmpfsBytes: 1 << 20 }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /needs options.workspace/ });
});

test('a workspace larger than half the sandbox memory ceiling is refused when the manager is created (round 9, R9-3)', { skip }, async (t) => {
  const root = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cordon-sessions-quota-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const { createSessionManager, workspaceWrite } = require('..');
  const base = { secret: crypto.randomBytes(32), root, authorize: () => true };
  assert.throws(() => createSessionManager({ ...base, workspaceBytes: (128 << 20) + 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS', message: /more than half the sandbox's memory ceiling/ });
  const policy = workspaceWrite();
  const larger = { ...policy, resources: { ...policy.resources, memoryBytes: 1 << 30 } };
  assert.throws(() => createSessionManager({ ...base, policy: larger, workspaceBytes: (512 << 20) + 1 }), { code: 'ERR_CORDON_INVALID_OPTIONS' });
  assert.equal(createSessionManager({ ...base, policy: larger, workspaceBytes: 512 << 20 }).size, 0, 'half a raised ceiling is accepted');
});

test('a command that kills the exec agent ends the session with ERR_CORDON_SESSION_AGENT_FAILED and a receipt', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('kill-agent'), 'u');
  const pending = session.exec(['/bin/sleep', '30']);
  await assert.rejects(session.exec({ shell: 'bash', script: 'kill -9 $PPID; sleep 5' }), { code: 'ERR_CORDON_SESSION_AGENT_FAILED' });
  await assert.rejects(pending, { code: 'ERR_CORDON_SESSION_AGENT_FAILED' });
  assert.ok(await eventually(() => session.receipt !== null, 10_000));
  assert.equal(session.receipt.endReason, 'agent-failed');
  assert.equal(session.receipt.failure.code, 'ERR_CORDON_SESSION_AGENT_FAILED');
  assert.equal(session.receipt.workspace.removed, true);
  await assert.rejects(session.exec(['/bin/true']), { code: 'ERR_CORDON_SESSION_ENDED' });
  assert.equal(manager.size, 0);
});

test('a command cannot reach the agent channel to impersonate the agent', { skip }, async (t) => {
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('impersonate'), 'u');
  const result = await session.exec({ shell: 'bash', script: '[ -e /proc/$$/fd/3 ] && echo HAS-FD-3; readlink /proc/$$/fd/* | grep -c socket; (exec 9<>/proc/$PPID/fd/3) 2>&1 && echo OPENED; printf "\\0\\0\\0\\5\\24\\0\\0\\0\\1" >&3 2>&1 || echo no-fd-3' });
  assert.doesNotMatch(result.stdout, /HAS-FD-3|OPENED/);
  assert.match(result.stdout, /^0\n/, 'the command holds no socket at all');
  assert.match(result.stdout, /\/proc\/\d+\/fd\/3: Permission denied/, 'the agent socket cannot be reopened through /proc: the agent is non-dumpable, its /proc/<pid>/fd closed to commands');
  assert.match(result.stdout, /no-fd-3/);
  assert.equal((await session.exec(['/bin/echo', 'ok'])).stdout, 'ok\n');
});

test('an exec agent that lies (a frame announcing 4 GiB) ends the session with ERR_CORDON_SESSION_AGENT_FAILED, a receipt, and no workspace', { skip }, async (t) => {
  const liar = path.join(__dirname, 'fixtures', 'lying-exec-agent');
  const { manager, root } = managerFor(t, { agentPath: liar });
  const session = await manager.acquire(scope('liar'), 'u');
  assert.ok(await eventually(() => session.receipt !== null, 10_000), 'the lie ended the session');
  assert.equal(session.receipt.endReason, 'agent-failed');
  assert.equal(session.receipt.failure.code, 'ERR_CORDON_SESSION_AGENT_FAILED');
  assert.match(session.receipt.failure.message, /invalid frame: frame length 4294967295/);
  assert.equal(session.receipt.sandbox.receipt.stop.containmentConfirmed, true);
  await assert.rejects(session.exec(['/bin/true']), { code: 'ERR_CORDON_SESSION_ENDED' });
  assert.deepEqual(fs.readdirSync(root), []);
  assert.equal(manager.size, 0);
});

test('an exec agent that acknowledges stdin nobody sent ends the session with ERR_CORDON_SESSION_AGENT_FAILED', { skip }, async (t) => {
  const { manager, root } = managerFor(t, { agentPath: path.join(__dirname, 'fixtures', 'acking-exec-agent') });
  const session = await manager.acquire(scope('acker'), 'u');
  await assert.rejects(session.exec(['/bin/true']), (e) => e.code === 'ERR_CORDON_SESSION_AGENT_FAILED' && /STDIN_ACK for command 1/.test(e.message));
  assert.ok(await eventually(() => session.receipt !== null, 10_000), 'the lie ended the session');
  assert.equal(session.receipt.endReason, 'agent-failed');
  assert.deepEqual(fs.readdirSync(root), []);
});

test('stdin streams from an async iterable or a Readable in bounded chunks, each sent after the previous was taken, and a command that never reads holds at most a pipe-full', { skip }, async (t) => {
  const { Readable } = require('node:stream');
  const { manager } = managerFor(t);
  const session = await manager.acquire(scope('stdin-stream'), 'u');
  const piece = crypto.randomBytes(256 * 1024);
  async function* pieces(count, pulled) {
    for (let i = 0; i < count; i += 1) {
      pulled.count += 1;
      yield i % 2 === 0 ? piece : piece.toString('latin1').slice(0, 10); // bytes and strings mixed
    }
  }
  const expected = crypto.createHash('sha256');
  for (let i = 0; i < 32; i += 1) expected.update(i % 2 === 0 ? piece : Buffer.from(piece.toString('latin1').slice(0, 10), 'utf8'));
  const pulled = { count: 0 };
  const hashed = await session.exec(['/usr/bin/sha256sum'], { stdin: pieces(32, pulled) });
  assert.equal(hashed.stdout, `${expected.digest('hex')}  -\n`, hashed.stderr);
  assert.equal(pulled.count, 32);
  const fromReadable = await session.exec(['/usr/bin/wc', '-c'], { stdin: Readable.from([Buffer.alloc(100_000, 1), 'tail']) });
  assert.equal(fromReadable.stdout.trim(), '100004');
  // A command that never reads: the host stops pulling once the pipe (64 KiB) and one chunk in flight are full.
  // Counted when the command prints, while it still holds its stdin: once it
  // has exited, the agent acknowledges the chunks it can no longer write, so
  // the source is pulled until the exit reaches the host (a race with the
  // agent's drain, not data held: CI saw 6 pulls there on Node 24).
  const idle = { count: 0 };
  let whileRunning = null;
  async function* endless() {
    for (;;) {
      idle.count += 1;
      yield Buffer.alloc(32 * 1024);
    }
  }
  const onStdout = () => { whileRunning ??= idle.count; };
  const sleeper = await session.exec({ shell: 'bash', script: 'sleep 1; echo done; sleep 0.5' }, { stdin: endless(), onStdout });
  assert.equal(sleeper.stdout, 'done\n');
  assert.ok(whileRunning !== null && whileRunning <= 5, `pulled ${whileRunning} chunks of 32 KiB from a source nobody read`);
  const afterwards = await session.exec(['/bin/cat'], { stdin: 'still usable' });
  assert.equal(afterwards.stdout, 'still usable');
});
