#!/usr/bin/env node
'use strict';

// The `cordon` command. Subcommands are small functions in this table so a
// later `run` (or a Rust CLI taking over) merges without touching `doctor`.

const USAGE = `usage: cordon doctor [--json] [--bwrap PATH] [--runner PATH]

  doctor   check that this host can run cordon sandboxes; prints each check
           and the exact fix for each failure; exit status 1 if a required
           check fails
`;

/** Parses `--flag value` pairs; unknown flags are usage errors. */
function parseFlags(args, known) {
  const flags = { json: false };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--json') flags.json = true;
    else if (known.includes(arg) && i + 1 < args.length) flags[arg.slice(2)] = args[(i += 1)];
    else throw new Error(`unknown or incomplete option: ${arg}`);
  }
  return flags;
}

function doctorCommand(args) {
  const flags = parseFlags(args, ['--bwrap', '--runner']);
  const cordon = require('..');
  const { formatReport } = require('../lib/doctor.js');
  const runnerPath = flags.runner ?? safeRunnerPath(cordon);
  const report = cordon.doctor({ bwrapPath: flags.bwrap, runnerPath });
  process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}

/** The packaged runner's path, or undefined when it cannot be resolved. */
function safeRunnerPath(cordon) {
  try {
    return typeof cordon.runnerPath === 'function' ? cordon.runnerPath() : cordon.runnerPath;
  } catch {
    return undefined;
  }
}

const COMMANDS = { doctor: doctorCommand };

function main(argv) {
  const [name, ...rest] = argv;
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(USAGE);
    return 2;
  }
  try {
    return command(rest);
  } catch (error) {
    process.stderr.write(`cordon ${name}: ${error.message}\n${USAGE}`);
    return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
