'use strict';

// The package is usable as require('cordon') and import … from 'cordon',
// with the same objects either way.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const NAMES = ['spawnIsolated', 'readOnly', 'workspaceWrite', 'profile', 'runnerPath'];

test('require("cordon") exposes spawnIsolated, the policy presets and an absolute runnerPath', () => {
  const cordon = require('cordon');
  assert.equal(cordon, require('..'));
  for (const name of NAMES) assert.ok(name in cordon, name);
  assert.ok(path.isAbsolute(cordon.runnerPath));
});

test('in a checkout, runnerPath is the workspace build (no platform package installed)', () => {
  const { platformPackageDir } = require('../lib/platform-package');
  assert.equal(platformPackageDir(), null, 'this checkout has no cordon-<platform> package in node_modules');
  // Where cargo builds: $CARGO_TARGET_DIR (relative to the checkout) or target/.
  const target = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
  assert.equal(require('cordon').runnerPath, path.join(target, 'release', 'cordon-runner'));
  assert.ok(fs.statSync(require('cordon').runnerPath).isFile(), 'npm run build put the runner there');
});

test('runnerPath follows CARGO_TARGET_DIR, relative to the checkout as cargo reads it', () => {
  const script = `process.stdout.write(require(${JSON.stringify(root)}).runnerPath)`;
  const run = (dir) => execFileSync(process.execPath, ['-e', script], { cwd: '/', env: { ...process.env, CARGO_TARGET_DIR: dir } }).toString();
  assert.equal(run('/opt/cargo-out'), '/opt/cargo-out/release/cordon-runner');
  assert.equal(run('build/cargo'), path.join(root, 'build', 'cargo', 'release', 'cordon-runner'));
});

test('import from "cordon" gives the same named exports as require', () => {
  const script = `import * as esm from 'cordon'; import { createRequire } from 'node:module';
    const cjs = createRequire(import.meta.url)('cordon');
    const names = ${JSON.stringify(NAMES)};
    console.log(JSON.stringify(names.map((n) => esm[n] === cjs[n] && esm.default[n] === cjs[n])));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root }).toString();
  assert.deepEqual(JSON.parse(out), NAMES.map(() => true));
});
