#!/usr/bin/env node
'use strict';

// The test command behind `npm test` and .ci/run, in three steps:
//   1. `cargo test --workspace` (unless --node-only): Rust skips append to
//      $CORDON_SKIP_LOG (and panic under CI instead);
//   2. the Node suite with the running Node (`process.execPath`, so
//      `/path/to/node24 scripts/test.js --node-only` tests Node 24, minus the
//      NODE_INDEPENDENT suites the first Node ran), with the
//      spec reporter on stdout and scripts/skip-reporter.mjs recording skips;
//   3. as root, and not with --node-only (once per CI run, on the first
//      Node: it tests the launcher's identity logic for a non-root
//      provider, which no Node version changes; ~40-70 s a pass), the
//      security suites that attack the boundary (NONROOT_PASS)
//      a second time with a non-root provider: a Node process of uid 65534
//      runs them from a world-readable copy of the package and the tests
//      (nobody-provider.js; a clone under a 0700 /root is unreadable to it),
//      with CORDON_TEST_PROVIDER=nobody, which the harness reads;
//   4. (not with --node-only: once per CI run, on the first Node) the shared
//      suites of REMOTE_PASS again through a `cordon host` child process on a
//      Unix socket, and those of TLS_PASS through one on 127.0.0.1 under
//      mutual TLS (CORDON_TEST_REMOTE=unix|tls: the test support hands them
//      cordon/remote's client instead of the addon; docs/remote.md). ~2 min;
//   5. a summary: how many tests skipped and why. Under CI=true any skip is a
//      failure (exit 1): CI installs everything every test needs.
// Usage: node scripts/test.js [--node-only] [test files or dirs…]

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const nodeOnly = args.includes('--node-only');
const targets = args.filter((a) => a !== '--node-only');
const underCi = Boolean(process.env.CI) && process.env.CI !== 'false';

const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-test-skips-'));
const rustLog = path.join(logDir, 'rust.jsonl');
const nodeLog = path.join(logDir, 'node.jsonl');
// The running Node first on PATH: tests that start `node` get this version too.
const env = {
  ...process.env,
  CORDON_SKIP_LOG: rustLog,
  PATH: [path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter),
};

function run(command, argv) {
  const result = spawnSync(command, argv, { cwd: ROOT, env, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/**
 * The test files under `targets` (files as given, directories walked for
 * *.test.js): Node 20 expands a directory argument itself, Node 22+ takes
 * arguments as files or globs only, so the list is made here for every Node.
 */
function testFiles(targets) {
  const files = [];
  const stack = [...targets].reverse();
  while (stack.length > 0) {
    const target = stack.pop();
    if (!fs.statSync(path.resolve(ROOT, target)).isDirectory()) {
      files.push(target);
      continue;
    }
    const entries = fs.readdirSync(path.resolve(ROOT, target), { withFileTypes: true })
      .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
      .sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries.filter((e) => e.isFile() && /\.test\.[cm]?js$/.test(e.name))) files.push(path.join(target, entry.name));
    for (const entry of entries.filter((e) => e.isDirectory()).reverse()) stack.push(path.join(target, entry.name));
  }
  return files;
}

/** The suites run again as a uid-65534 provider (step 3). */
const NONROOT_PASS = ['battery', 'round3', 'network-round', 'sessions-nonroot', 'group-signals'].map((name) => path.join('__test__', 'security', `${name}.test.js`));
const NOBODY_UID = 65534;

/** Node's test runner over `files`, spec on stdout, skips recorded in `log`. */
function nodeTestArgs(files, log, reporterDir = __dirname) {
  return [
    '--test', '--test-concurrency=1',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(reporterDir, 'skip-reporter.mjs')}`, `--test-reporter-destination=${log}`,
    ...files,
  ];
}

/** Step 3: {status, skips} of the non-root pass over the NONROOT_PASS files among `files`. */
function nonRootPass(files) {
  const chosen = NONROOT_PASS.filter((file) => files.some((f) => path.resolve(ROOT, f) === path.resolve(ROOT, file)));
  if (chosen.length === 0 || process.geteuid() !== 0) return { status: 0, skips: [] };
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-nonroot-pass-'));
  try {
    const { nobodyProvider } = require(path.join(ROOT, '__test__', 'security', 'nobody-provider.js'));
    const { node, pkg } = nobodyProvider({ scratch, tests: true });
    const log = path.join(scratch, 'skips.jsonl');
    fs.writeFileSync(log, '');
    fs.chownSync(log, NOBODY_UID, NOBODY_UID);
    console.log(`\n# The same attacks with a non-root provider: uid ${NOBODY_UID}, Node ${node}`);
    const result = spawnSync(node, nodeTestArgs(chosen.map((f) => path.join(pkg, f)), log, path.join(pkg, 'scripts')), {
      cwd: pkg,
      uid: NOBODY_UID,
      gid: NOBODY_UID,
      stdio: 'inherit',
      env: { ...env, CORDON_TEST_PROVIDER: 'nobody', HOME: '/', PATH: [path.dirname(node), env.PATH].join(path.delimiter) },
    });
    if (result.error) throw result.error;
    return { status: result.status ?? 1, skips: readLog(log).map((s) => ({ ...s, file: s.file && path.join(ROOT, path.relative(pkg, s.file)) })) };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The suites run again through a Unix-socket host (step 4): those whose
 * every test holds remotely. docs/remote.md lists the others and why.
 */
const REMOTE_PASS = [
  'spawn-unread-stderr', 'spawn-runner',
  'code-mode-scoping', 'code-mode-events', 'code-mode-console', 'code-mode-result-text', 'code-mode-parallel-calls',
  'code-mode-limits-enforced', 'code-mode-cancel-timeout', 'code-mode-hostile-runner', 'code-mode-concurrency', 'code-mode-ordinary-use',
].map((name) => path.join('__test__', `${name}.test.js`));

/** The TLS pass: the same minus the two slowest suites, to keep step 4 near two minutes. */
const TLS_PASS = REMOTE_PASS.filter((file) => !/code-mode-(hostile-runner|result-text)\./.test(file));

/** Step 4, one transport: {status, skips} of a pass over the `list` files among `files`. */
function remotePass(files, transport, list) {
  const chosen = list.filter((file) => files.some((f) => path.resolve(ROOT, f) === path.resolve(ROOT, file)));
  if (chosen.length === 0) return { status: 0, skips: [] };
  const log = path.join(logDir, `remote-${transport}.jsonl`);
  console.log(`\n# The shared suites again through a cordon host over ${transport} (CORDON_TEST_REMOTE=${transport})`);
  const result = spawnSync(process.execPath, nodeTestArgs(chosen, log), { cwd: ROOT, stdio: 'inherit', env: { ...env, CORDON_TEST_REMOTE: transport } });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, skips: readLog(log).map((s) => ({ ...s, transport })) };
}

/** Step 4: both transports, one after the other. */
function remotePasses(files) {
  const passes = [remotePass(files, 'unix', REMOTE_PASS), remotePass(files, 'tls', TLS_PASS)];
  return { status: passes.find((p) => p.status !== 0)?.status ?? 0, skips: passes.flatMap((p) => p.skips) };
}

function readLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/**
 * Suites whose result cannot depend on the Node running them: `tsc` over
 * declarations and the offline Kubernetes schema check. A --node-only pass
 * over the whole suite (.ci/run, each later Node) leaves them to the first
 * Node's full pass, which keeps CI under 30 minutes.
 */
const NODE_INDEPENDENT = new Set([
  'adapter-types', 'code-mode-declarations', 'code-mode-types', 'remote-types', 'remote-endpoints-types', 'deploy-k8s',
  // Probes of the launcher's closing of passed descriptors (Rust, off the JS
  // thread); fd 3's Node-side reading is attacked by round3/4/14 on each Node.
  'round15', 'round16',
  // Probes that step bwrap with SIGSTOP around a provider's death: what they
  // test is bwrap's, the launcher's sweep and the in-sandbox starter's (each
  // try a fresh provider process; 3-4 minutes of CI per Node).
  'orphan-init',
  // The kernel's OOM choice between a provider and its sandboxes (what sets
  // it is the launcher's, before bwrap's exec).
  'oom-provider',
  // A non-root provider's sandbox identity and the per-uid kernel quotas it
  // separates (the launcher's uid choice and the kernel's accounting), the
  // executable's hash and staging (the launcher's), a session provider killed
  // during bwrap's set-up (as orphan-init), and the egress engine's attack
  // rounds (Rust, on the supervision runtime): ~110 s per Node.
  'identity', 'quotas', 'executable-hash', 'sessions-orphan-init', 'network-round', 'round5',
].map((name) => `${name}.test.js`));

let status = 0;
let nonRoot = { status: 0, skips: [] };
let remote = { status: 0, skips: [] };
try {
  if (!nodeOnly) status = run('cargo', ['test', '--workspace']);
  if (status === 0) {
    console.log(`# Node suite on Node ${process.version} (${process.execPath})`);
    const files = testFiles(targets.length ? targets : ['__test__']).filter((file) => !(nodeOnly && !targets.length && NODE_INDEPENDENT.has(path.basename(file))));
    if (nodeOnly && !targets.length) console.log(`# not again on this Node (their result does not depend on it; the first Node ran them): ${[...NODE_INDEPENDENT].join(', ')}`);
    status = run(process.execPath, nodeTestArgs(files, nodeLog));
    if (!nodeOnly) nonRoot = nonRootPass(files);
    if (status === 0) status = nonRoot.status;
    if (!nodeOnly) remote = remotePasses(files);
    if (status === 0) status = remote.status;
  }
  const skips = [
    ...readLog(rustLog).map((s) => ({ ...s, suite: 'cargo' })),
    ...readLog(nodeLog).map((s) => ({ ...s, suite: `node ${process.version}` })),
    ...nonRoot.skips.map((s) => ({ ...s, suite: `node ${process.version}, uid ${NOBODY_UID} provider` })),
    ...remote.skips.map((s) => ({ ...s, suite: `node ${process.version}, through cordon host (${s.transport})` })),
  ];
  console.log(`\n# ${skips.length} test(s) skipped${skips.length ? ':' : ''}`);
  for (const s of skips) console.log(`#   [${s.suite}] ${path.relative(ROOT, s.file ?? '') || '?'} › ${s.name}: ${s.reason}`);
  if (skips.length > 0 && underCi) {
    console.log('# CI=true: a skip is a failure (CI installs everything the tests need)');
    if (status === 0) status = 1;
  }
} finally {
  fs.rmSync(logDir, { recursive: true, force: true });
}
process.exit(status);
