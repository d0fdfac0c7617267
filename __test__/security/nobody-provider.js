'use strict';

// A provider of uid 65534 ("nobody", no cgroup) needs to load the package and
// run Node, from any checkout location: a clone under a 0700 /root is not
// readable by that uid. So it runs from a world-readable temp copy of what
// require('cordon') loads (the package files, the addon, the runtime
// dependency closure) and, when that uid cannot execute the running Node, of
// the Node binary too. Made once per process, removed at exit.
// `nobodyTestTree` adds what the security suites need to run as that uid
// (scripts/test.js's non-root pass): these tests, their shared helpers, the
// skip reporter and the built executables the package starts.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const NOBODY_UID = 65534;

/** What `require('cordon')` loads from the package root (lib/ is copied whole). */
const PACKAGE_FILES = ['package.json', 'index.js', 'binding.js', 'lib'];

/** The package's runtime dependencies, transitively, as installed in node_modules. */
function dependencyClosure() {
  const seen = new Set();
  const queue = Object.keys(require(path.join(ROOT, 'package.json')).dependencies ?? {});
  while (queue.length > 0) {
    const name = queue.shift();
    if (seen.has(name)) continue;
    seen.add(name);
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'));
    queue.push(...Object.keys(manifest.dependencies ?? {}));
  }
  return [...seen];
}

/** Makes every directory 0755 and every file world-readable (executables stay executable). */
function openUp(dir) {
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop();
    fs.chmodSync(current, 0o755);
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) fs.chmodSync(full, fs.statSync(full).mode | 0o444);
    }
  }
}

/** Can `uid` execute `file` (every directory on the way included)? */
function canExecute(file, uid) {
  const run = spawnSync(file, ['--version'], { uid, gid: uid, cwd: '/', timeout: 30_000 });
  return run.status === 0;
}

/** A world-readable copy of the package and its runtime dependencies; returns its path. */
function copyPackage(into) {
  const pkg = path.join(into, 'cordon');
  for (const name of PACKAGE_FILES) fs.cpSync(path.join(ROOT, name), path.join(pkg, name), { recursive: true });
  for (const name of fs.readdirSync(ROOT).filter((n) => n.endsWith('.node'))) fs.copyFileSync(path.join(ROOT, name), path.join(pkg, name));
  for (const name of dependencyClosure()) {
    fs.cpSync(path.join(ROOT, 'node_modules', name), path.join(pkg, 'node_modules', name), { recursive: true });
  }
  return pkg;
}

/** Test files and the built executables, beside the copied package. */
const TEST_TREE = [
  '__test__/security', '__test__/spawn-support.js', '__test__/remote-support.js', '__test__/sessions-support.js', 'scripts/skip-reporter.mjs',
];
const EXECUTABLES = ['cordon-runner', 'cordon-egress-relay', 'cordon-exec-agent'];

function copyTestTree(pkg) {
  for (const name of TEST_TREE) fs.cpSync(path.join(ROOT, name), path.join(pkg, name), { recursive: true });
  const release = path.join(require('../../lib/platform-package').cargoTargetDir(), 'release');
  for (const name of EXECUTABLES.filter((n) => fs.existsSync(path.join(release, n)))) {
    fs.mkdirSync(path.join(pkg, 'target', 'release'), { recursive: true });
    fs.copyFileSync(path.join(release, name), path.join(pkg, 'target', 'release', name));
  }
}

let provider = null;

/**
 * {node, pkg}: the Node to run and the package directory to require, for
 * uid 65534. `scratch`: where to make it (default: a temp dir removed when
 * this process exits); `tests`: copy the test tree too.
 */
function nobodyProvider({ scratch = null, tests = false } = {}) {
  if (provider && !scratch) return provider;
  const owned = scratch === null;
  if (owned) {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-nobody-provider-'));
    process.on('exit', () => fs.rmSync(scratch, { recursive: true, force: true }));
  }
  const pkg = copyPackage(scratch);
  if (tests) copyTestTree(pkg);
  let node = process.execPath;
  if (!canExecute(node, NOBODY_UID)) {
    node = path.join(scratch, 'node');
    fs.copyFileSync(process.execPath, node);
  }
  openUp(scratch);
  if (!owned) return { node, pkg };
  provider = { node, pkg };
  return provider;
}

module.exports = { nobodyProvider };
