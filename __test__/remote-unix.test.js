'use strict';

// cordon/remote against a real `cordon host` child process on a Unix socket
// in a temp directory: results, streams, stop, refusals, and the client's
// bounds when the host dies or stops answering.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { connectRemote } = require('../lib/remote');
const { runToEnd, collect, firstLine, pidsWithMarker, eventually } = require('./spawn-support');
const { startHost, ROOT } = require('./remote-support');

let host;
test.before(async () => { host = await startHost(); });
test.after(() => host?.stop());

test('a program run through the host resolves wait() with the shape of a local run', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['true'], { policy: remote.readOnly() });
  const { result } = await runToEnd(execution);
  const local = await require('..').spawnIsolated(['/bin/true'], { policy: require('..').readOnly() }).wait();
  assert.deepEqual(Object.keys(result).sort(), Object.keys(local).sort());
  assert.equal(result.returncode, 0);
  assert.equal(result.signal, null);
  assert.deepEqual(result.networkReceipts, []);
  assert.equal(result.receipt.outcome.status, 'exited');
  assert.equal(typeof result.receipt.invocationId, 'string');
  assert.ok(Number.isInteger(execution.pid) && execution.pid > 0);
  assert.equal(execution.remote.host.transport, 'unix');
});

test('fd 3 round-trips through the host, end() half-closes, and the program\'s stdout arrives on stderr', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['echo-fd3'], { policy: remote.readOnly() });
  const payload = Buffer.alloc(3 * 1024 * 1024 + 17, 7); // many times the 256 KiB window, both ways
  for (let i = 0; i < payload.length; i += 1) payload[i] = i % 251;
  execution.protocol.end(payload);
  const { result, stderr } = await (async () => {
    const [res, protocol, err] = await Promise.all([execution.wait(), collect(execution.protocol), collect(execution.stderr)]);
    assert.ok(protocol.equals(payload), `echoed ${protocol.length} of ${payload.length} bytes`);
    return { result: res, stderr: err.toString() };
  })();
  assert.equal(result.returncode, 0);
  assert.match(stderr, /diagnostic on stdout/);
});

test('uploaded workspace files are the sandbox\'s /workspace', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['sh', '-c', 'cat notes/hello.txt >&3; pwd >&3'], {
    policy: remote.readOnly(), workspace: { files: { 'notes/hello.txt': 'uploaded\n' } },
  });
  const { result, protocol } = await runToEnd(execution);
  assert.equal(result.returncode, 0);
  assert.equal(protocol, 'uploaded\n/workspace\n');
});

test('uploads are the run\'s alone: another local user finds their directory in mountinfo and cannot open it (R12-1)', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['sh', '-c', 'read go <&3; cat secret.txt >&3'], {
    policy: remote.readOnly(), workspace: { files: { 'secret.txt': 'tenant-secret\n' } },
  });
  const workspaces = path.join(host.dir, 'state', 'workspaces');
  // What any local user reads while the run lives: the bind's source in a
  // sandbox process's mountinfo (its root field, relative to its file system).
  const marker = `/${path.basename(host.dir)}/state/workspaces/ws-`;
  let found = null;
  for (const deadline = Date.now() + 10_000; !found && Date.now() < deadline;) {
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
      let text = '';
      try { text = fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8'); } catch { continue; }
      const root = text.split('\n').map((line) => line.split(' ')[3]).find((r) => r?.includes(marker));
      if (root) { found = path.join(workspaces, path.basename(root)); break; }
    }
    if (!found) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(found, 'the run\'s upload directory is named in some mountinfo');
  const stat = fs.statSync(found);
  assert.equal(stat.mode & 0o007, 0, `the upload directory is mode ${(stat.mode & 0o777).toString(8)}`);
  assert.equal(stat.uid, process.getuid(), 'the host owns it');
  if (process.getuid() === 0) {
    // Another local user (not the run's uid): the path is known, the door is shut.
    const as = (cmd) => spawnSync('setpriv', ['--reuid=65533', '--regid=65533', '--clear-groups', ...cmd], { encoding: 'utf8' });
    assert.equal(as(['test', '-x', workspaces]).status, 0, 'control: the other user traverses workspaces/');
    const read = as(['cat', path.join(found, 'secret.txt')]);
    assert.notEqual(read.status, 0, `another local user read the upload: ${read.stdout}`);
    assert.match(read.stderr, /Permission denied/);
    assert.notEqual(as(['ls', found]).status, 0);
  }
  execution.protocol.end('go\n');
  const { result, protocol } = await runToEnd(execution);
  assert.equal(result.returncode, 0);
  assert.equal(protocol, 'tenant-secret\n', 'the run itself reads its upload through its grant');
});

test('a Code Mode run on the host calls a tool whose handler runs in this process', async () => {
  const remote = connectRemote({ socket: host.socket });
  const seen = [];
  const mode = remote.createCodeMode({
    tools: [{
      name: 'math.add', description: 'adds', effect: 'read',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      handler: ({ a, b }) => { seen.push(process.pid); return a + b; },
    }],
  });
  const result = await mode.run('const s = await tools["math.add"]({ a: 2, b: 40 }); return { s };');
  assert.equal(result.ok, true, JSON.stringify(result.error));
  assert.deepEqual(result.result, { s: 42 });
  assert.deepEqual(seen, [process.pid]);
  assert.equal(result.metrics.toolCalls, 1);
  assert.equal(result.receipt.outcome.status, 'exited');
});

test('stop() runs the host\'s ladder: a program that ignores SIGTERM and its grandchild are gone when it settles', async () => {
  const remote = connectRemote({ socket: host.socket });
  const marker = `cordon-remote-stop-${process.pid}-${Date.now()}`;
  const execution = remote.spawnIsolated(['ignore-sigterm-fork', marker], { policy: remote.readOnly(), stop: { graceMs: 200, forceMs: 1000 } });
  execution.stderr.resume();
  assert.equal(await firstLine(execution.protocol), 'ready');
  assert.equal(execution.stop(), execution.stop());
  await execution.stop();
  const result = await execution.wait();
  assert.equal(result.signal, 'SIGKILL');
  assert.equal(result.receipt.stop.gracefulStopAttempted, true);
  assert.equal(result.receipt.stop.forcedStopAttempted, true);
  assert.equal(result.receipt.stop.containmentConfirmed, true);
  assert.ok(await eventually(() => pidsWithMarker(marker).length === 0, 5000), 'the grandchild outlived stop()');
});

test('an AbortSignal stops a remote run', async () => {
  const remote = connectRemote({ socket: host.socket });
  const controller = new AbortController();
  const execution = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly(), signal: controller.signal, stop: { graceMs: 100, forceMs: 1000 } });
  setTimeout(() => controller.abort(), 200);
  const result = await execution.wait();
  assert.equal(result.receipt.stop.requested, true);
  assert.equal(result.receipt.stop.gracefulStopAttempted, true);
  assert.equal(result.returncode, 143); // sleep's SIGTERM, as seen through the sandbox's env(1)
});

test('deadlineMs is the host launcher\'s: the ladder runs and the receipt says "deadline"', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly(), deadlineMs: 300, stop: { graceMs: 100, forceMs: 1000 } });
  const result = await execution.wait();
  assert.equal(result.receipt.stop.reason, 'deadline');
  assert.equal(result.receipt.remote.transport, 'unix');
});

test('past the host\'s session cap the run is refused with a code and a retry-after', async (t) => {
  const small = await startHost({ admission: { maxSessions: 1, retryAfterMs: 1234 } });
  t.after(() => small.stop());
  const remote = connectRemote({ socket: small.socket });
  const first = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly(), stop: { graceMs: 100, forceMs: 1000 } });
  assert.ok(await eventually(() => first.pid !== undefined, 10_000), 'the first run started');
  const second = remote.spawnIsolated(['true'], { policy: remote.readOnly() });
  const error = await second.wait().then(() => null, (e) => e);
  assert.ok(error, 'the second run was refused');
  assert.match(error.code, /^ERR_CORDON_/);
  assert.equal(error.details.refused, true);
  assert.equal(error.retryAfterMs, 1234);
  await first.stop();
});

test('a host killed mid-run rejects wait() with ERR_CORDON_REMOTE_DISCONNECTED, well before the client\'s bound', { timeout: 60_000 }, async (t) => {
  const doomed = await startHost();
  t.after(() => doomed.stop());
  const remote = connectRemote({ socket: doomed.socket }, { slackMs: 60_000 });
  const execution = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly() });
  assert.ok(await eventually(() => execution.pid !== undefined, 10_000), 'the run started');
  const started = Date.now();
  doomed.child.kill('SIGKILL');
  await assert.rejects(execution.wait(), { code: 'ERR_CORDON_REMOTE_DISCONNECTED' });
  assert.ok(Date.now() - started < 30_000, 'settled by the connection loss, not a timer');
});

// A host killed while bwrap set a run up can leave the run's namespace init
// behind (crates/launcher/src/host/orphan_init.rs; the provider-side probe
// is security/orphan-init.test.js). The next host kills it as it starts,
// before it listens, not at its first launch. The orphan is made by hand:
// a bwrap whose init waits for its release (--userns-block-fd, never
// written), its outer bwrap then killed, as the dead host's would be.
test('a starting host kills the namespace init of a sandbox whose outer bwrap died before releasing it', { timeout: 60_000 }, async (t) => {
  const uid = process.geteuid() === 0 ? 0x7001ffff - Math.floor(Math.random() * 32) : process.geteuid();
  const outer = spawn('/usr/bin/bwrap', ['--unshare-user', '--unshare-pid', '--unshare-net', '--userns-block-fd', '3', '--info-fd', '4',
    '--ro-bind', '/', '/', '/bin/sleep', '60'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], uid, gid: uid });
  let info = '';
  for await (const chunk of outer.stdio[4]) {
    info += chunk;
    if (info.endsWith('}\n')) break;
  }
  const init = JSON.parse(info)['child-pid'];
  const exited = new Promise((resolve) => outer.on('exit', resolve));
  outer.kill('SIGKILL');
  await exited;
  const alive = () => {
    try {
      return !fs.readFileSync(`/proc/${init}/stat`, 'utf8').split(') ')[1].startsWith('Z');
    } catch {
      return false;
    }
  };
  t.after(() => { if (alive()) process.kill(init, 'SIGKILL'); });
  assert.ok(alive(), `the orphaned init ${init} waits`);
  const next = await startHost();
  t.after(() => next.stop());
  assert.ok(await eventually(() => !alive(), 2_000), `the init ${init} is gone once the host listens: ${next.output()}`);
  assert.match(next.output(), /killed \d+ sandbox\(es\) whose provider died/);
});

test('a host stopped with SIGSTOP fails the call at the client\'s bound with ERR_CORDON_REMOTE_TIMEOUT, never a hang', { timeout: 60_000 }, async (t) => {
  const frozen = await startHost();
  t.after(() => frozen.stop());
  const remote = connectRemote({ socket: frozen.socket }, { slackMs: 1500 });
  const execution = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly(), deadlineMs: 2000 });
  assert.ok(await eventually(() => execution.pid !== undefined, 10_000), 'the run started');
  frozen.child.kill('SIGSTOP');
  await assert.rejects(execution.wait(), { code: 'ERR_CORDON_REMOTE_TIMEOUT' });
  await execution.stop(); // settled: stop() resolves at once
  frozen.child.kill('SIGCONT');
});

test('cordon/remote runs a Code Mode program with the native addon removed from the package', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-no-addon-'));
  t.after(() => fs.rmSync(scratch, { recursive: true, force: true }));
  const pkg = path.join(scratch, 'node_modules', 'cordon');
  fs.mkdirSync(pkg, { recursive: true });
  for (const entry of ['package.json', 'index.js', 'index.d.ts', 'lib']) fs.cpSync(path.join(ROOT, entry), path.join(pkg, entry), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(pkg, 'node_modules')); // ajv, amaro: its JS dependencies
  const leftovers = spawnSync('find', [pkg, '-path', `${pkg}/node_modules`, '-prune', '-o', '(', '-name', '*.node', '-o', '-name', 'binding.js', ')', '-print'], { encoding: 'utf8' });
  assert.equal(leftovers.stdout, '', 'the copy holds no addon');
  const script = `
    const { connectRemote } = require('cordon/remote');
    const remote = connectRemote({ socket: ${JSON.stringify(host.socket)} });
    const mode = remote.createCodeMode({ tools: [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: (a) => a }] });
    mode.run('return (await tools.echo({ n: 7 })).n * 6;').then((r) => {
      const native = Object.keys(require.cache).filter((f) => f.endsWith('.node') || f.endsWith('binding.js'));
      process.stdout.write(JSON.stringify({ ok: r.ok, result: r.result, error: r.error, native }));
    });`;
  fs.writeFileSync(path.join(scratch, 'main.js'), script);
  const run = spawnSync(process.execPath, ['main.js'], { cwd: scratch, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.deepEqual(out, { ok: true, result: 42, native: [] }, run.stdout);
});

test('a prewarmed remote pool hands out a waiting sandbox, and Code Mode with a pool runs on it', async () => {
  const remote = connectRemote({ socket: host.socket });
  const pool = remote.createPool({ command: ['echo-fd3'], policy: remote.readOnly() }, { size: 1 });
  try {
    assert.ok(await eventually(() => pool.stats().idle === 1, 10_000), JSON.stringify(pool.stats()));
    const execution = pool.take({ deadlineMs: 20_000 });
    execution.protocol.end('pooled\n');
    const { result, protocol } = await runToEnd(execution);
    assert.equal(result.returncode, 0);
    assert.equal(protocol, 'pooled\n');
  } finally {
    await pool.close();
  }
  const mode = remote.createCodeMode({ tools: [], pool: { size: 1 } });
  try {
    const run = await mode.run('return 6 * 7;');
    assert.equal(run.ok, true, JSON.stringify(run.error));
    assert.equal(run.result, 42);
    assert.equal(mode.poolStats().taken, 1);
  } finally {
    await mode.close();
  }
});

test('close() stops what the client still runs and refuses new runs with ERR_CORDON_CLOSED', async () => {
  const remote = connectRemote({ socket: host.socket });
  const execution = remote.spawnIsolated(['sleep', '30'], { policy: remote.readOnly(), stop: { graceMs: 100, forceMs: 1000 } });
  assert.ok(await eventually(() => execution.pid !== undefined, 10_000), 'the run started');
  await remote.close();
  const result = await execution.wait();
  assert.equal(result.receipt.stop.requested, true);
  assert.throws(() => remote.spawnIsolated(['true'], { policy: remote.readOnly() }), { code: 'ERR_CORDON_CLOSED' });
});
