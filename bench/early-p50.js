'use strict';

// The pooled early path measured directly: p50 and p10 of `run("return 1")`
// with createCodeMode({pool: {size: 2}, resultBeforeTeardown: true}), from
// run() to its result, the runs --gap-ms apart (the pool refills between
// them; `final` is awaited untimed). docs/performance.md › "Goals of issue
// 23 not met" and "Change: the early result's own work moved off its path".
//
//   node bench/early-p50.js [--runs 300] [--gap-ms 15 | --no-gap] [--rounds 1] [--network] [checkout ...]
//
// --no-gap: each run starts in the continuation of the previous one's
// `final`, with no timer between them (--gap-ms 0 still waits a timer turn).
//
// --network: the Code Mode has a `network` allowlist (a local HTTP server,
// which one fetch reaches before the timed runs), so every run asks for the
// fetch extension (docs/performance.md › "Change: fetch.js compiled before
// execute when the host will use it").
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
const FLAGS = new Set(['--network', '--no-gap']);
const checkouts = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--') && !FLAGS.has(args[i - 1])));

/** A local HTTP server and the allowlist that reaches it. */
async function localNetwork() {
  const http = require('node:http');
  const server = http.createServer((request, response) => response.end('hi')).listen(0, '127.0.0.1');
  await new Promise((resolve) => { server.once('listening', resolve); });
  const { port } = server.address();
  return { server, url: `http://127.0.0.1:${port}/`, network: { allow: [`127.0.0.1:${port}`], allowPrivate: true } };
}

async function child(checkout, runs, gapMs, withNetwork) {
  const { createCodeMode } = require(checkout);
  const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
  const local = withNetwork ? await localNetwork() : null;
  const mode = createCodeMode({ tools: [], pool: { size: 2 }, resultBeforeTeardown: true, ...(local ? { network: local.network } : {}) });
  // Warm the JS paths and the launcher's caches; with --network, prove fetch works.
  const warm = await mode.run(local ? `return await (await fetch(${JSON.stringify(local.url)})).text();` : 'return 1');
  if (!warm.ok || (local && warm.result !== 'hi')) throw new Error(`warm-up run failed: ${JSON.stringify(warm.error)}`);
  await warm.final;
  const times = [];
  for (let i = 0; i < runs; i += 1) {
    if (gapMs >= 0) await sleep(gapMs);
    const started = process.hrtime.bigint();
    const result = await mode.run('return 1');
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
    await result.final;
  }
  await mode.close();
  local?.server.close();
  times.sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ p50: times[times.length >> 1], p10: times[Math.floor(times.length / 10)] }));
}

function main() {
  const runs = option('--runs', 300);
  const gapMs = args.includes('--no-gap') ? -1 : option('--gap-ms', 15);
  const rounds = option('--rounds', 1);
  const withNetwork = args.includes('--network');
  const builds = (checkouts.length ? checkouts : [path.resolve(__dirname, '..')]).map((c) => path.resolve(c));
  console.log(`pooled run("return 1"), resultBeforeTeardown${withNetwork ? ', with a network allowlist' : ''}: ${runs} runs ${gapMs < 0 ? 'back to back' : `${gapMs} ms apart`} per sample, ms`);
  console.log('| round | checkout | load | p50 | p10 |');
  console.log('| ---: | --- | ---: | ---: | ---: |');
  for (let round = 1; round <= rounds; round += 1) {
    for (const checkout of builds) {
      const load = require('node:os').loadavg()[0].toFixed(2);
      const out = execFileSync(process.execPath, [__filename, '--child', checkout, String(runs), String(gapMs), String(withNetwork)], { encoding: 'utf8' });
      const { p50, p10 } = JSON.parse(out);
      console.log(`| ${round} | ${checkout} | ${load} | ${p50.toFixed(3)} | ${p10.toFixed(3)} |`);
    }
  }
}

if (args[0] === '--child') {
  child(args[1], Number(args[2]), Number(args[3]), args[4] === 'true').catch((error) => { console.error(error); process.exit(1); });
} else {
  main();
}
