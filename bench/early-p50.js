'use strict';

// The pooled early path measured directly: p50 and p10 of `run("return 1")`
// with createCodeMode({pool: {size: 2}, resultBeforeTeardown: true}), from
// run() to its result, the runs --gap-ms apart (the pool refills between
// them; `final` is awaited untimed). docs/performance.md › "Goals of issue
// 23 not met" and "Change: the early result's own work moved off its path".
//
//   node bench/early-p50.js [--runs 300] [--gap-ms 15] [--rounds 1] [checkout ...]
//
// Each checkout (default: this one) is a built cordon (`npm run build`);
// with several, each round runs every checkout once, in a child process of
// its own, in turn, so a load drift hits each alike. The gap matters: a
// longer one lets the vCPUs halt and the caches go cold between runs.

const path = require('node:path');
const { execFileSync } = require('node:child_process');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const checkouts = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));

async function child(checkout, runs, gapMs) {
  const { createCodeMode } = require(checkout);
  const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
  const mode = createCodeMode({ tools: [], pool: { size: 2 }, resultBeforeTeardown: true });
  await mode.run('return 1'); // warm the JS paths and the launcher's caches
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    await sleep(gapMs);
    const started = process.hrtime.bigint();
    const result = await mode.run('return 1');
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
    await result.final;
  }
  await mode.close();
  times.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ p50: times[times.length >> 1], p10: times[Math.floor(times.length / 10)] }));
}

function main() {
  const runs = option('--runs', 300);
  const gapMs = option('--gap-ms', 15);
  const rounds = option('--rounds', 1);
  const builds = (checkouts.length ? checkouts : [path.resolve(__dirname, '..')]).map((c) => path.resolve(c));
  console.log(`pooled run("return 1"), resultBeforeTeardown: ${runs} runs ${gapMs} ms apart per sample, ms`);
  console.log('| round | checkout | load | p50 | p10 |');
  console.log('| ---: | --- | ---: | ---: | ---: |');
  for (let round = 1; round <= rounds; round += 1) {
    for (const checkout of builds) {
      const load = require('node:os').loadavg()[0].toFixed(2);
      const out = execFileSync(process.execPath, [__filename, '--child', checkout, String(runs), String(gapMs)], { encoding: 'utf8' });
      const { p50, p10 } = JSON.parse(out);
      console.log(`| ${round} | ${checkout} | ${load} | ${p50.toFixed(3)} | ${p10.toFixed(3)} |`);
    }
  }
}

if (args[0] === '--child') {
  child(args[1], Number(args[2]), Number(args[3])).catch((error) => { console.error(error); process.exit(1); });
} else {
  main();
}
