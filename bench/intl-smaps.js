'use strict';

// Section 10's idle RSS by a second method: /proc/<pid>/smaps_rollup of idle
// pooled runners (the bench reads VmRSS from /proc/<pid>/status), with the
// split the rollup gives: private dirty (what each runner costs alone) and
// shared/clean file pages. Runners interleaved, round by round:
//
//   node bench/intl-smaps.js [--rounds 5] RUNNER...
//
// (each RUNNER a cordon-runner binary; none given: this checkout's). Prints
// the median of each field per runner (bench/stats.js's), in KiB.

const fs = require('node:fs');
const path = require('node:path');
const { runnerPath } = require('..');
const { idleRss } = require('./intl');
const { quantile } = require('./stats');

const FIELDS = ['Rss', 'Pss', 'Private_Dirty', 'Private_Clean', 'Shared_Clean', 'Anonymous'];

function rollup(pid) {
  const text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return Object.fromEntries(FIELDS.map((field) => [field, Number(text.match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'))[1])]));
}

async function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--rounds');
  const rounds = at >= 0 ? Number(args.splice(at, 2)[1]) : 5;
  const paths = args.length > 0 ? args.map((p) => path.resolve(p)) : [runnerPath];
  const samples = paths.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    for (let i = 0; i < paths.length; i += 1) samples[i].push(...(await idleRss(paths[i], 2, rollup)));
  }
  console.log(['runner', ...FIELDS].join('\t'));
  paths.forEach((runner, i) => {
    console.log([runner, ...FIELDS.map((field) => quantile(samples[i].map((s) => s[field]), 0.5))].join('\t'));
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
