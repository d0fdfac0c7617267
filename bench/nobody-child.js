'use strict';

// A provider process of uid 65534 ("nobody") for a benchmark run as root:
// it runs `script` (JS; `pkg` is the package to require) from the
// world-readable copy of the package (__test__/security/nobody-provider.js)
// under util-linux's setpriv, and answers each line written to its stdin
// with one JSON line on its stdout. The timing happens in the child, with
// the same code as the root side, so the pipe round trip is not counted.

const { spawn } = require('node:child_process');
const readline = require('node:readline');
const { nobodyProvider } = require('../__test__/security/nobody-provider');

const NOBODY_UID = 65534;

/** Starts `script(pkg)` as uid 65534; `ask(line)` resolves with its JSON reply, `close()` ends its stdin. */
function nobodyChild(script) {
  const { node, pkg } = nobodyProvider();
  const child = spawn('/usr/bin/setpriv', ['--reuid', String(NOBODY_UID), '--regid', String(NOBODY_UID), '--clear-groups', '--', node, '-e', script(pkg)], {
    cwd: '/', stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: process.env.PATH },
  });
  const replies = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => replies.shift()?.resolve(JSON.parse(line)));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    for (const reply of replies.splice(0)) reply.reject(new Error(`the uid-65534 provider exited (${signal ?? code}) before it answered`));
    resolve();
  }));
  return {
    ask: (line) => new Promise((resolve, reject) => { replies.push({ resolve, reject }); child.stdin.write(`${line}\n`); }),
    close: () => {
      child.stdin.end();
      return exited;
    },
  };
}

module.exports = { nobodyChild, NOBODY_UID };
