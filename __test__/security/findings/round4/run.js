'use strict';
// Runs the round-4 attacker in a real sandbox: node run.js <attack> [args…]
// Env: POLICY=<preset or JSON>, CORDON_WORKSPACE=<dir>. Prints the sandbox's
// stderr and the outcome.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const cordon = require('../../../..');

function build() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-round4-'));
  fs.chmodSync(dir, 0o755);
  const out = path.join(dir, 'r4probe');
  execFileSync('cc', ['-static', '-O1', '-Wall', '-Werror', '-o', out, path.join(__dirname, '..', '..', 'round4.c')]);
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return out;
}

async function run(args, options = {}) {
  const execution = cordon.spawnIsolated([build(), ...args], options);
  let text = '';
  execution.stderr.on('data', (c) => { text += c; process.stderr.write(c); });
  execution.protocol.resume();
  const outcome = await execution.wait();
  return { outcome, text };
}

module.exports = { build, run };

if (require.main === module) {
  const raw = process.env.POLICY ?? 'readOnly';
  const policy = raw.startsWith('{') ? JSON.parse(raw) : cordon[raw]();
  const options = { policy };
  if (process.env.CORDON_WORKSPACE) options.workspace = process.env.CORDON_WORKSPACE;
  run(process.argv.slice(2), options).then(({ outcome }) => {
    console.log(JSON.stringify({ returncode: outcome.returncode, signal: outcome.signal, uid: outcome.receipt?.uidAllocation ?? outcome.receipt?.identity }));
  });
}
