'use strict';
// Runs a probe of this directory as a uid-65534 provider (a world-readable
// copy of the package and the test tree, removed at exit):
//   node nobody.js dgram-err.js   (env passed through: R15_LINGER, R15_N, R15_MODES)
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { nobodyProvider } = require('../../nobody-provider');
const probe = process.argv[2] || 'dgram-err.js';
const { node, pkg } = nobodyProvider({ tests: true });
const file = path.join(pkg, '__test__/security/findings/round16n', probe);
const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', node, file], {
  cwd: '/', stdio: 'inherit', timeout: 170_000,
  env: { ...process.env, R14_PKG: pkg, R14_RELAY: path.join(pkg, 'target/release/cordon-egress-relay') },
});
process.exitCode = r.status ?? 1;
