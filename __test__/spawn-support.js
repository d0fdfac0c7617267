'use strict';

// Shared helpers of the spawn-*.test.js suites: fixture paths, stream
// collection, JSON-lines reading, and the process census used to prove that
// no sandbox process outlives wait().

const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const fixture = (name) => path.join(__dirname, 'fixtures', name);

/**
 * The API under test: this package, or with CORDON_TEST_REMOTE=unix the same
 * run surface through a `cordon host` child process (remote-support.js).
 */
const cordon = require('./remote-support').testRemote() ? require('./remote-support').remoteApi() : require('..');

/** Collects a Readable into one Buffer (resolves at 'end'). */
function collect(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Runs to completion, returning the result and both streams as text. */
async function runToEnd(execution) {
  const [result, protocol, stderr] = await Promise.all([
    execution.wait(), collect(execution.protocol), collect(execution.stderr),
  ]);
  return { result, protocol: protocol.toString(), stderr: stderr.toString() };
}

/** An async iterator of parsed JSON lines read from `stream`. */
function jsonLines(stream) {
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  return (async function* frames() {
    for await (const line of lines) yield JSON.parse(line);
  }());
}

/**
 * Whether `pid` is a provider's pair maker (crates/passed-fds/src/sandbox_pair.rs):
 * named `cordon-pairs` and of this pid namespace, where no sandbox process is
 * (each sandbox has a pid namespace of its own: two or more NSpid entries), so
 * a program that names itself so is not taken for one. It shares its
 * provider's memory, so its command line: scans by command line skip it.
 */
function isPairMaker(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^Name:\tcordon-pairs$/m.test(status) && /^NSpid:\t\d+$/m.test(status);
  } catch {
    return false;
  }
}

/** Host pids whose command line contains `marker` (not a pair maker: isPairMaker). */
function pidsWithMarker(marker) {
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (isPairMaker(entry)) continue;
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      if (cmdline.includes(marker)) found.push(Number(entry));
    } catch { /* exited while we looked */ }
  }
  return found;
}

/** Parent pid of `pid`, or 0 once it is gone. */
function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/**
 * pidsWithMarker limited to this process's descendants: what its own runs
 * left, not other test files' sandboxes running at the same time. (A
 * sandbox's processes live in its bwrap's pid namespace, whose init is a
 * child of the launcher's process: none outlives it, so none is reparented
 * away from this process.)
 */
function ownPidsWithMarker(marker) {
  return pidsWithMarker(marker).filter((pid) => {
    for (let p = parentOf(pid); p > 1; p = parentOf(p)) {
      if (p === process.pid) return true;
    }
    return false;
  });
}

/** Polls `predicate` every 20 ms until true or `timeoutMs` passed. */
async function eventually(predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return predicate();
}

/** The per-uid directory holding control roots, as the launcher chooses it. */
const controlRootBase = () => require('../binding.js').controlRootBase();

/** Control roots currently present under the per-uid base directory. */
function controlRoots() {
  const base = controlRootBase();
  try {
    return fs.readdirSync(base).filter((name) => /^[0-9a-f]{32}$/.test(name)).map((n) => path.join(base, n));
  } catch {
    return [];
  }
}

/** Control roots created by this process (its pid in their owner record). */
function ownControlRoots() {
  return ownControlRootsOf(process.pid);
}

/** Control roots whose owner file names process `pid` (a child provider's). */
function ownControlRootsOf(pid) {
  return controlRoots().filter((root) => {
    try {
      return Number(fs.readFileSync(path.join(root, 'owner'), 'utf8').split(' ')[0]) === pid;
    } catch {
      return false;
    }
  });
}

/** Reads the first line of `stream` (for "ready" handshakes). */
async function firstLine(stream) {
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return null;
}

module.exports = {
  cordon, fixture, collect, runToEnd, jsonLines, pidsWithMarker, ownPidsWithMarker, eventually, controlRootBase, controlRoots, ownControlRoots, ownControlRootsOf,
  firstLine, isPairMaker,
};
