'use strict';

// Round 7 reproductions: each finding's probe is a test in
// __test__/security/sessions-nonroot.test.js (a real uid-65534 provider,
// real holders and sandboxes), run here by its finding id. Run as root after
// `npm run build`: `node __test__/security/findings/round7/repro.js [R7-1 ...]`.
// Prints FIXED or BROKEN per finding.

const path = require('node:path');
const { spawnSync } = require('node:child_process');

const FILE = path.join(__dirname, '..', '..', 'sessions-nonroot.test.js');
const ids = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['R7-1', 'R7-2', 'R7-3'];
for (const id of ids) {
  const run = spawnSync(process.execPath, ['--test', '--test-name-pattern', id, FILE], { encoding: 'utf8', timeout: 300_000 });
  const passed = /^# pass [1-9]/m.test(run.stdout) && /^# fail 0/m.test(run.stdout);
  console.log(`${id}: ${passed ? 'FIXED' : 'BROKEN'}`);
  if (!passed) console.log(run.stdout.split('\n').filter((l) => /not ok|error:|!==|expected|actual/.test(l)).join('\n'));
}
