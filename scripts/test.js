#!/usr/bin/env node
'use strict';

// The test command behind `npm test` and .ci/run, in three steps:
//   1. `cargo test --workspace` (unless --node-only): Rust skips append to
//      $CORDON_SKIP_LOG (and panic under CI instead);
//   2. the Node suite with the running Node (`process.execPath`, so
//      `/path/to/node24 scripts/test.js --node-only` tests Node 24), with the
//      spec reporter on stdout and scripts/skip-reporter.mjs recording skips;
//   3. a summary: how many tests skipped and why. Under CI=true any skip is a
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

function readLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

let status = 0;
try {
  if (!nodeOnly) status = run('cargo', ['test', '--workspace']);
  if (status === 0) {
    console.log(`# Node suite on Node ${process.version} (${process.execPath})`);
    status = run(process.execPath, [
      '--test', '--test-concurrency=1',
      '--test-reporter=spec', '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(__dirname, 'skip-reporter.mjs')}`, `--test-reporter-destination=${nodeLog}`,
      ...testFiles(targets.length ? targets : ['__test__']),
    ]);
  }
  const skips = [...readLog(rustLog).map((s) => ({ ...s, suite: 'cargo' })), ...readLog(nodeLog).map((s) => ({ ...s, suite: `node ${process.version}` }))];
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
