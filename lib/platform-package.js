'use strict';

// Where this platform's native files live. An installed cordon gets them
// from its per-platform optional dependency (`cordon-linux-x64-gnu`, …:
// the napi addon, `cordon-runner` and the `cordon` CLI, see npm/); a
// checkout gets them from its own cargo build (`target/release/`, or
// `$CARGO_TARGET_DIR/release/` when cargo was told to build elsewhere).

const path = require('node:path');

const ROOT = path.join(__dirname, '..');

/** glibc or musl: the napi-rs platform suffix of a Linux package. */
function linuxLibc() {
  const header = process.report?.getReport?.().header;
  return header?.glibcVersionRuntime ? 'gnu' : 'musl';
}

/** The napi-rs platform key of this process, e.g. "linux-x64-gnu", "darwin-arm64". */
function platformKey() {
  const base = `${process.platform}-${process.arch}`;
  return process.platform === 'linux' ? `${base}-${linuxLibc()}` : base;
}

/** The installed platform package's directory, or null (e.g. in a checkout). */
function platformPackageDir() {
  try {
    return path.dirname(require.resolve(`cordon-${platformKey()}/package.json`, { paths: [ROOT] }));
  } catch {
    return null;
  }
}

/**
 * Cargo's target directory for this checkout: `$CARGO_TARGET_DIR` (relative
 * to the checkout, as cargo reads it from there) when set, else `target/`.
 */
function cargoTargetDir() {
  const dir = process.env.CARGO_TARGET_DIR;
  return dir ? path.resolve(ROOT, dir) : path.join(ROOT, 'target');
}

/**
 * Absolute path of a native executable shipped by cordon ("cordon-runner",
 * "cordon"): the platform package's when installed, else the checkout's build.
 * @param {string} name
 */
function nativeExecutable(name) {
  const dir = platformPackageDir();
  return dir === null ? path.join(cargoTargetDir(), 'release', name) : path.join(dir, name);
}

module.exports = { platformKey, platformPackageDir, nativeExecutable, cargoTargetDir };
