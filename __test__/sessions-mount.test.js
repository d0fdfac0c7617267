'use strict';

// A root provider's workspace mount and unmount (lib/sessions/workspace.js,
// mount-tool.js): mount(8) and umount(8) run as child processes the event
// loop does not wait for, with the same refusals as before: a mount that
// fails leaves nothing and is ERR_CORDON_SESSION_QUOTA_UNAVAILABLE with
// mount(8)'s words; a busy mount is emptied and detached lazily.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { sessionsSkipReason, mountedAt, unmountLeft } = require('./sessions-support');
const { prepareRoot, createWorkspace, removeWorkspace, workspacePath } = require('../lib/sessions/workspace');
const { loadBinding } = require('../lib/native');

const skip = sessionsSkipReason();

function rootFor(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-mount-'));
  fs.chmodSync(dir, 0o711);
  t.after(() => {
    unmountLeft(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return prepareRoot(dir);
}

const native = () => loadBinding();
const deps = () => ({
  removeTree: { tree: (d, max) => native().removeTree(d, max), contents: (d, max) => native().emptyTree(d, max) },
  killUid: (uid, userns) => native().killUidProcesses(uid, userns),
});
/** An owner id of the launcher's range that no session of this test claims. */
const ownerUid = () => native().WORKSPACE_OWNER_UID_FIRST + native().WORKSPACE_OWNER_UIDS - 2;

test('creating a workspace mounts it while the event loop turns: the JavaScript thread does not wait for mount(8)', { skip }, async (t) => {
  const root = rootFor(t);
  let turns = 0;
  let done = false;
  const spin = () => {
    turns += 1;
    if (!done) setImmediate(spin);
  };
  setImmediate(spin);
  // With execFileSync the whole create ran in one turn: `turns` stayed 0 until it resolved.
  await createWorkspace({ root, key: 'k1', ownerUid: ownerUid(), quotaBytes: 1 << 20 });
  const during = turns;
  done = true;
  const dir = workspacePath(root.path, 'k1', false);
  assert.ok(during > 0, `the event loop turned ${during} times while the workspace was mounted`);
  assert.equal(mountedAt(dir), true);
  assert.deepEqual(await removeWorkspace({ workspace: dir, ownerUid: ownerUid() }, deps(), { sweep: false }), { removed: true, detail: null });
  assert.equal(mountedAt(dir), false);
  assert.deepEqual(fs.readdirSync(root.path), [], 'the key directory went with it');
});

test('a mount that fails is ERR_CORDON_SESSION_QUOTA_UNAVAILABLE with mount(8)\'s words and leaves nothing', { skip }, async (t) => {
  const root = rootFor(t);
  // uid=4294967295 is no uid: the kernel refuses the tmpfs option.
  await assert.rejects(createWorkspace({ root, key: 'bad', ownerUid: 4294967295, quotaBytes: 1 << 20 }), (error) => {
    assert.equal(error.code, 'ERR_CORDON_SESSION_QUOTA_UNAVAILABLE');
    assert.match(error.message, /^mount a 1048576-byte tmpfs at .*\/bad\/ws: mount: /);
    return true;
  });
  assert.deepEqual(fs.readdirSync(root.path), [], 'no key directory, no mount left');
});

test('a busy workspace is emptied and unmounted lazily, with umount(8)\'s words in the report', { skip }, async (t) => {
  const root = rootFor(t);
  await createWorkspace({ root, key: 'busy', ownerUid: ownerUid(), quotaBytes: 1 << 20 });
  const dir = workspacePath(root.path, 'busy', false);
  fs.writeFileSync(path.join(dir, 'left.txt'), 'x');
  fs.mkdirSync(path.join(dir, 'sub'));
  // A process whose cwd is inside keeps the mount busy.
  const holder = spawn('/bin/sleep', ['300'], { cwd: path.join(dir, 'sub'), stdio: 'ignore' });
  t.after(() => holder.kill('SIGKILL'));
  await new Promise((resolve) => holder.once('spawn', resolve));
  const report = await removeWorkspace({ workspace: dir, ownerUid: ownerUid() }, deps(), { sweep: false });
  assert.equal(report.removed, true, report.detail);
  assert.match(report.detail, /^emptied, then unmounted lazily: umount: .*busy/);
  assert.equal(mountedAt(dir), false);
  assert.deepEqual(fs.readdirSync(root.path), []);
});

test('a mount tool that cannot be spawned rejects at once and leaves no timer keeping the provider alive', async () => {
  // Node 22 cleared spawn's own `timeout` timer only at 'exit', which a failed
  // spawn never emits: a provider with nothing left to do then exited 10 s late.
  const script = `
    const started = Date.now();
    require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'sessions', 'mount-tool.js'))})
      .runMountTool('/nonexistent/cordon-mount', ['x'])
      .then(() => console.log('resolved'), (e) => console.log('rejected', e.code, Date.now() - started));
  `;
  const started = Date.now();
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  await new Promise((resolve) => child.on('close', resolve));
  assert.match(out, /^rejected ENOENT/);
  assert.ok(Date.now() - started < 5000, `the provider exited ${Date.now() - started} ms after it started`);
});
