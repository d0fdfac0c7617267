'use strict';

// Shared helpers of the sessions-*.test.js suites: a manager over a fresh
// sessions root (removed afterwards), and checks that a session left
// nothing behind.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { createSessionManager } = require('..');
const { pidsWithMarker } = require('./spawn-support');

/** Sessions need a root provider (the workspace quota is a tmpfs only root mounts) and bwrap. */
function sessionsSkipReason() {
  if (process.geteuid() !== 0) return 'sessions need a root provider: the workspace quota is a tmpfs only root can mount';
  if (!['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].some((p) => fs.existsSync(p))) return 'bubblewrap is not installed';
  return false;
}

/** A manager over a fresh root; `t.after` ends its sessions and removes the root. */
function managerFor(t, options = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-sessions-test-'));
  const manager = createSessionManager({ secret: crypto.randomBytes(32), root, authorize: () => true, ...options });
  t.after(async () => {
    await manager.endAll();
    // A session whose end() kept its workspace (containment not confirmed) must not outlive the test run.
    unmountLeft(root);
    fs.rmSync(root, { recursive: true, force: true });
  });
  return { manager, root };
}

/** True when `dir` is a mount point in this mount namespace. */
function mountedAt(dir) {
  return fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').some((line) => line.split(' ')[4] === dir);
}

/** A root provider's workspace of session `key` under `root` (lib/sessions/workspace.js workspacePath). */
const workspaceOf = (root, key) => path.join(root, key, 'ws');

/** Detaches every workspace tmpfs left under `root` (a kept workspace must not outlive the test run). */
function unmountLeft(root) {
  for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    for (const dir of [workspaceOf(root, entry), path.join(root, entry)]) {
      if (mountedAt(dir)) execFileSync('/usr/bin/umount', ['-l', dir]);
    }
  }
}

/** A unique marker for a command line, so the test can find its processes on the host. */
const marker = (label) => `cordon-sessions-${label}-${crypto.randomBytes(4).toString('hex')}`;
/**
 * A bash fragment that starts `sleep 300` under the name `tag` in the background
 * and returns only once it runs as sleep: the subshell's exec happens after bash
 * moves on, so a test that looks for the process right after the command
 * returned would otherwise race it (it lost under CI load).
 */
const background = (tag) => `(exec -a ${tag} sleep 300) >/dev/null 2>&1 & until [ "$(cat /proc/$!/comm 2>/dev/null)" = sleep ]; do sleep 0.01; done`;

/**
 * createSessionManager over a slice of the owner range `{first, count}`
 * (else bound like index.js's): to give a manager exactly the uids a test
 * wants it to compete for.
 */
function managerFactoryWithOwners(range) {
  const cordon = require('..');
  const binding = require('../binding.js');
  return require('../lib/sessions').bindSessions({
    spawnIsolated: cordon.spawnIsolated,
    workspaceWrite: cordon.workspaceWrite,
    agentPath: require('../lib/platform-package').nativeExecutable('cordon-exec-agent'),
    removeTree: { tree: (dir, n) => binding.removeTree(dir, n), contents: (dir, n) => binding.emptyTree(dir, n) },
    killUid: (uid, nsId) => binding.killUidProcesses(uid, nsId),
    namespaceId: (pid) => binding.userNamespaceId(pid),
    ownerRange: () => range,
  }).createSessionManager;
}

/** A fresh directory holding a sessions root and a database file; removed (mounts included) after `t`. */
function providerPlace(t, prefix = 'cordon-sessions-place-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o711);
  t.after(() => {
    const root = path.join(dir, 'root');
    unmountLeft(root);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { root: path.join(dir, 'root'), dbFile: path.join(dir, 'sessions.db') };
}

/** Starts fixtures/session-holder.js (another provider process) and resolves once it holds its session: `{child, key, ownerUid}`. */
function startHolder(t, args) {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'session-holder.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /ready ([0-9a-f]{64}) (\d+)/.exec(out);
      if (m) resolve({ child, key: m[1], ownerUid: Number(m[2]) });
    });
    child.on('exit', (code) => reject(new Error(`holder exited ${code}: ${err}`)));
  });
}

const exited = (child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', resolve)));

module.exports = { providerPlace, startHolder, exited, managerFactoryWithOwners, sessionsSkipReason, managerFor, mountedAt, workspaceOf, unmountLeft, marker, background, pidsWithMarker, scope: (conversation, tenant = 'acme') => ({ tenant, conversation }) };
