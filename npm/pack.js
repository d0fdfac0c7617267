#!/usr/bin/env node
'use strict';

// Packs cordon for npm: the main package and one per-platform package.
//   node npm/pack.js [--platform linux-x64-gnu] [--out DIR]
// Steps (after `npm run build`, which generates binding.js and the binaries):
// 1. stage the platform package: copy the addon (`cordon.<platform>.node`),
//    `cordon-runner`, `cordon`, `cordon-egress-relay` and `cordon-exec-agent` into npm/<platform>/,
//    mode 0755 for the executables; check that every file its manifest lists
//    is there; `npm pack` it;
// 2. stage the main package: the files `npm pack` would ship, and a manifest
//    with `optionalDependencies` on every platform package at this version;
//    `npm pack` that.
// Why stage the main manifest: the platform packages are not in the registry
// until published, so the checkout's package.json cannot list them (npm ci
// refuses a lockfile without them); napi-rs's `napi prepublish` adds them at
// publish time the same way. Prints {"main": tgz, "platform": tgz} as JSON.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { cargoTargetDir } = require('../lib/platform-package');

const ROOT = path.join(__dirname, '..');
/** npm/<platform> → the Rust target triple it is built for (package.json `napi.targets`). */
const TRIPLES = Object.freeze({
  'linux-x64-gnu': 'x86_64-unknown-linux-gnu',
  'linux-arm64-gnu': 'aarch64-unknown-linux-gnu',
  'linux-x64-musl': 'x86_64-unknown-linux-musl',
  'linux-arm64-musl': 'aarch64-unknown-linux-musl',
});
/** The executables of a platform package (the relay: mediated network, docs/network.md). */
const EXECUTABLES = ['cordon-runner', 'cordon', 'cordon-egress-relay', 'cordon-exec-agent'];
/** No lifecycle scripts (the checkout's prepack refuses a plain `npm pack`); output is the JSON report only. */
const NPM_PACK = ['pack', '--json', '--ignore-scripts'];

function fail(message) {
  throw new Error(`npm/pack.js: ${message}`);
}

/** Where cargo put the binaries for `triple`: <target dir>/<triple>/release, else the host build. */
function releaseDir(triple) {
  const target = cargoTargetDir();
  const cross = path.join(target, triple, 'release');
  return fs.existsSync(path.join(cross, 'cordon-runner')) ? cross : path.join(target, 'release');
}

function copyInto(from, dir, mode) {
  if (!fs.existsSync(from)) fail(`${from} is missing: run \`npm run build\` first`);
  const to = path.join(dir, path.basename(from));
  fs.copyFileSync(from, to);
  fs.chmodSync(to, mode);
}

function npmPack(dir, out) {
  const report = JSON.parse(execFileSync('npm', [...NPM_PACK, '--pack-destination', out], { cwd: dir, encoding: 'utf8' }));
  return path.join(out, report[0].filename);
}

/** Step 1. */
function packPlatform(platform, out) {
  const triple = TRIPLES[platform] ?? fail(`unknown platform ${platform}; known: ${Object.keys(TRIPLES).join(', ')}`);
  const dir = path.join(__dirname, platform);
  copyInto(path.join(ROOT, `cordon.${platform}.node`), dir, 0o644);
  for (const name of EXECUTABLES) copyInto(path.join(releaseDir(triple), name), dir, 0o755);
  // A file the manifest lists but the directory lacks is silently left out by npm pack.
  const { files } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const absent = files.filter((file) => !fs.existsSync(path.join(dir, file)));
  if (absent.length > 0) fail(`npm/${platform} lacks ${absent.join(', ')}`);
  return npmPack(dir, out);
}

/** Step 2. */
function packMain(out) {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const listed = JSON.parse(execFileSync('npm', [...NPM_PACK, '--dry-run'], { cwd: ROOT, encoding: 'utf8' }))[0].files;
  if (!listed.some((file) => file.path === 'binding.js')) fail('binding.js is missing: run `npm run build` first');
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-pack-'));
  try {
    for (const { path: file } of listed) {
      fs.mkdirSync(path.join(stage, path.dirname(file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(stage, file));
      fs.chmodSync(path.join(stage, file), fs.statSync(path.join(ROOT, file)).mode & 0o777);
    }
    const platforms = Object.keys(TRIPLES).map((platform) => require(path.join(__dirname, platform, 'package.json')).name);
    manifest.optionalDependencies = Object.fromEntries(platforms.map((name) => [name, manifest.version]));
    delete manifest.scripts.prepack; // the staged package is complete: nothing to refuse
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    return npmPack(stage, out);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

function parseArgs(argv) {
  const args = { platform: 'linux-x64-gnu', out: ROOT };
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--platform') args.platform = argv[i + 1];
    else if (argv[i] === '--out') args.out = path.resolve(argv[i + 1]);
    else fail(`unknown argument ${argv[i]}; usage: node npm/pack.js [--platform P] [--out DIR]`);
  }
  return args;
}

if (require.main === module) {
  const { platform, out } = parseArgs(process.argv.slice(2));
  fs.mkdirSync(out, { recursive: true });
  process.stdout.write(`${JSON.stringify({ main: packMain(out), platform: packPlatform(platform, out) })}\n`);
}

module.exports = { packMain, packPlatform, TRIPLES };
