'use strict';

// Section 10: what ICU4X Intl costs the runner (issue 20). The same
// measurements for two runner binaries, interleaved in one run: the runner
// before ICU4X (hand-written en-US/UTC Intl) as the baseline, given as
// CORDON_BENCH_BASELINE_RUNNER=/path/to/cordon-runner, and this checkout's.
//   spawn → terminal  cold createCodeMode run("return 1") (no pool)
//   first Intl use    cold run of (1234.5).toLocaleString("en-US") (builds Intl)
//   localeCompare     ms to sort 5000 names with a.localeCompare(b), inside a run
//   idle RSS          VmRSS of a pooled runner waiting for `execute`
//   binary size       KiB on disk
// Without the variable only this checkout's runner is measured. A third
// runner, e.g. the previous ICU4X build (compiled data linked in, before the
// blob), joins the same interleaved rounds with
// CORDON_BENCH_PREVIOUS_RUNNER=/path/to/cordon-runner.

const fs = require('node:fs');
const { createCodeMode, createPool, readOnly, runnerPath } = require('..');
const { sectionRows, sleep, nowMs } = require('./stats');
const { statusKiB, sandboxTree } = require('./load');

const INTL_PROGRAM = 'return (1234.5).toLocaleString("en-US")';
// 5000 names sorted with localeCompare, timed inside the run (ms).
const SORT_PROGRAM = `const names = Array.from({ length: 5000 }, (_, i) => ['Zoë', 'émile', 'Adam', 'ångström', 'bob'][i % 5] + ((i * 7919) % 5000));
  const started = Date.now(); names.sort((a, b) => a.localeCompare(b)); return Date.now() - started;`;

function runners() {
  const given = (variable, name) => {
    const path = process.env[variable];
    if (!path) return [];
    if (!fs.existsSync(path)) throw new Error(`${variable}: no file at ${path}`);
    return [{ name, path }];
  };
  return [
    ...given('CORDON_BENCH_BASELINE_RUNNER', 'hand-written Intl (baseline)'),
    ...given('CORDON_BENCH_PREVIOUS_RUNNER', 'ICU4X Intl (previous build)'),
    { name: 'ICU4X Intl (this checkout)', path: runnerPath },
  ];
}

async function timeRun(mode, code) {
  const started = nowMs();
  const result = await mode.run(code);
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  return nowMs() - started;
}

/** `read(pid)` of `count` idle pooled runners of `path`; by default VmRSS (KiB). */
async function idleRss(path, count, read = (pid) => statusKiB(pid, 'VmRSS')) {
  const pool = createPool({ command: [path], policy: readOnly() }, { size: count });
  try {
    while (pool.stats().idle < count) await sleep(5);
    await sleep(300); // every runner has reached its blocking read of fd 3
    const taken = Array.from({ length: count }, () => pool.take());
    const rss = taken.map((execution) => read(sandboxTree(execution.pid).at(-1)));
    await Promise.all(taken.map((execution) => execution.stop()));
    return rss;
  } finally {
    await pool.close();
  }
}

async function intl({ iterations, warmup, rssRounds }) {
  const list = runners();
  const modes = list.map((r) => createCodeMode({ tools: [], admission: { maxConcurrent: 1 }, runner: { path: r.path } }));
  const cold = list.map(() => []);
  const firstUse = list.map(() => []);
  const sorting = list.map(() => []);
  const rss = list.map(() => []);
  for (let i = 0; i < warmup + iterations; i += 1) {
    for (let r = 0; r < list.length; r += 1) {
      const a = await timeRun(modes[r], 'return 1');
      const b = await timeRun(modes[r], INTL_PROGRAM);
      const sorted = await modes[r].run(SORT_PROGRAM);
      if (!sorted.ok) throw new Error(`sort run failed: ${JSON.stringify(sorted.error)}`);
      if (i >= warmup) { cold[r].push(a); firstUse[r].push(b); sorting[r].push(sorted.result); }
    }
  }
  for (let round = 0; round < rssRounds; round += 1) {
    for (let r = 0; r < list.length; r += 1) rss[r].push(...(await idleRss(list[r].path, 2)));
  }
  await Promise.all(modes.map((mode) => mode.close()));
  const size = list.map((r) => [fs.statSync(r.path).size / 1024]);
  return [
    ...sectionRows('10 Intl: spawn→terminal', 'ms', list.map((r, i) => [r.name, cold[i]])),
    ...sectionRows('10 Intl: first Intl use', 'ms', list.map((r, i) => [r.name, firstUse[i]])),
    ...sectionRows('10 Intl: sort 5000 names by localeCompare', 'ms', list.map((r, i) => [r.name, sorting[i]])),
    ...sectionRows('10 Intl: idle runner RSS', 'KiB', list.map((r, i) => [r.name, rss[i]])),
    ...sectionRows('10 Intl: runner binary', 'KiB', list.map((r, i) => [r.name, size[i]])),
  ];
}

module.exports = { intl, idleRss };
