#!/usr/bin/env node
'use strict';

// The `cordon` command: a shim that execs the native `cordon` (crates/cli),
// shipped beside cordon-runner in the platform package (a checkout: its
// target/release build). Every subcommand — `run`, `doctor` — is native, so
// Python or Go providers can call the same binary directly. Stdio is
// inherited (no copy in between); SIGINT/SIGTERM/SIGHUP are passed on, so
// `cordon run`'s stop ladder runs; the native status is ours.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const { nativeExecutable } = require('../lib/platform-package');

/** The status for a command we could not start at all (as a shell's 127). */
const EXIT_NOT_FOUND = 127;
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function main() {
  const native = nativeExecutable('cordon');
  if (!fs.existsSync(native)) {
    process.stderr.write(`cordon: the native cordon binary is missing at ${native}\n`
      + '  fix: npm install cordon on a supported platform (docs: README "Platform support"),\n'
      + '       or in a checkout: cargo build --release -p cordon-cli\n');
    process.exitCode = EXIT_NOT_FOUND;
    return;
  }
  const child = spawn(native, process.argv.slice(2), { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`cordon: cannot start ${native}: ${error.message}\n`);
    process.exitCode = EXIT_NOT_FOUND;
  });
  child.on('exit', (code, signal) => {
    for (const name of FORWARDED_SIGNALS) process.off(name, forward);
    process.exitCode = code ?? 128 + (require('node:os').constants.signals[signal] ?? 0);
  });
}

main();
