'use strict';

// Sections 5 and 6: many runs at once, and what they cost in memory.
//   5  runs/s of cold run("return 1") with 1, 2, 4, 8, 16 in flight
//      (admission maxConcurrent = in flight); the baseline is 1 in flight
//   6  RSS of an idle sandboxed runner (and of its whole sandbox: two bwrap
//      processes + the runner) vs an idle `sleep` child; Node-side memory per
//      in-flight run (each blocked in a tool call) vs per plain child process
//      holding a socketpair

const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { createCodeMode, createPool, readOnly, runnerPath } = require('..');
const { sectionRows, sleep, nowMs } = require('./stats');

const LEVELS = [1, 2, 4, 8, 16];

async function concurrency({ rounds, runsPerLevel, levels = LEVELS }) {
  const samples = new Map(levels.map((n) => [n, []]));
  for (let round = 0; round < rounds; round += 1) {
    for (const inFlight of levels) {
      const total = Math.max(runsPerLevel, inFlight * 2);
      const mode = createCodeMode({ tools: [], admission: { maxConcurrent: inFlight, maxQueued: total } });
      const started = nowMs();
      const results = await Promise.all(Array.from({ length: total }, () => mode.run('return 1')));
      const seconds = (nowMs() - started) / 1000;
      if (!results.every((r) => r.ok)) throw new Error('a concurrent run failed');
      samples.get(inFlight).push(total / seconds);
    }
  }
  return sectionRows('5 concurrency', 'runs/s', levels.map((n) => [`${n} in flight`, samples.get(n)]));
}

function statusKiB(pid, field) {
  try {
    const line = fs.readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) : NaN;
  } catch {
    return NaN;
  }
}

function children(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** bwrap (outer) → bwrap (pid 1 in the sandbox) → env/runner: every process of one sandbox. */
function sandboxTree(pid) {
  const all = [pid];
  for (let i = 0; i < all.length && all.length < 16; i += 1) all.push(...children(all[i]));
  return all;
}

/** VmRSS (KiB) of idle pooled runners, and of their whole sandboxes, vs idle `sleep` children. */
async function idleRss({ count }) {
  const pool = createPool({ command: [runnerPath], policy: readOnly() }, { size: count });
  const sleepers = Array.from({ length: count }, () => spawn('/usr/bin/sleep', ['60'], { stdio: 'ignore' }));
  try {
    while (pool.stats().idle < count) await sleep(5);
    await sleep(300); // every runner has reached its blocking read of fd 3
    const taken = Array.from({ length: count }, () => pool.take());
    const trees = taken.map((execution) => sandboxTree(execution.pid));
    const runner = trees.map((tree) => statusKiB(tree.at(-1), 'VmRSS'));
    const whole = trees.map((tree) => tree.reduce((sum, pid) => sum + statusKiB(pid, 'VmRSS'), 0));
    const sleeping = sleepers.map((child) => statusKiB(child.pid, 'VmRSS'));
    await Promise.all(taken.map((execution) => execution.stop()));
    return sectionRows('6 idle RSS', 'KiB', [
      ['sleep(1) child', sleeping],
      ['cordon-runner idle', runner],
      ['whole sandbox idle', whole],
    ]);
  } finally {
    for (const child of sleepers) child.kill('SIGKILL');
    await pool.close();
  }
}

const heapNow = () => {
  // Twice: the first pass can leave garbage a finalizer only just released.
  globalThis.gc?.();
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return { rss: usage.rss / 1024, js: (usage.heapUsed + usage.external + usage.arrayBuffers) / 1024 };
};

/** Node memory per in-flight run: `inFlight` runs each blocked inside a tool call. */
async function nodePerRun(inFlight) {
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  let waiting = 0;
  const block = { name: 'block', description: 'wait', effect: 'read', inputSchema: { type: 'object' }, handler: () => { waiting += 1; return gate; } };
  const mode = createCodeMode({ tools: [block], admission: { maxConcurrent: inFlight }, limits: { timeoutMs: 60000 } });
  await mode.run('return 1'); // warm code paths and caches before the baseline
  const before = heapNow();
  const runs = Array.from({ length: inFlight }, () => mode.run('await tools.block({}); return 1'));
  while (waiting < inFlight) await sleep(5);
  const during = heapNow();
  release(1);
  await Promise.all(runs);
  return { rss: (during.rss - before.rss) / inFlight, js: (during.js - before.js) / inFlight };
}

/**
 * The in-process alternative: `inFlight` quickjs-emscripten runtimes + contexts
 * held at once. Their heaps live in the (already grown, never shrunk) wasm
 * memory, so RSS cannot see them: each runtime's own count (memory_used_size)
 * plus the JS-side handles is what one costs.
 */
async function nodePerQuickJs(QuickJS, inFlight) {
  const before = heapNow();
  const held = Array.from({ length: inFlight }, () => {
    const runtime = QuickJS.newRuntime();
    const context = runtime.newContext();
    context.evalCode('1').dispose();
    return { runtime, context };
  });
  const during = heapNow();
  let wasmBytes = 0;
  for (const { runtime, context } of held) {
    const usage = runtime.computeMemoryUsage();
    wasmBytes += context.dump(usage).memory_used_size;
    usage.dispose();
    context.dispose();
    runtime.dispose();
  }
  return ((during.js - before.js) * 1024 + wasmBytes) / 1024 / inFlight;
}

async function memory({ rounds, inFlight, idleCount }) {
  const { getQuickJS } = require('quickjs-emscripten');
  const QuickJS = await getQuickJS();
  await nodePerQuickJs(QuickJS, 1); // grow the wasm heap once, outside the samples
  const perRun = [];
  const perQuickJs = [];
  for (let i = 0; i < rounds; i += 1) {
    perRun.push(await nodePerRun(inFlight));
    perQuickJs.push(await nodePerQuickJs(QuickJS, inFlight));
  }
  return [
    ...(await idleRss({ count: idleCount })),
    ...sectionRows(`6 Node memory per in-flight run (${inFlight} in flight)`, 'KiB', [
      ['quickjs-emscripten ctx held (heap)', perQuickJs],
      ['cordon run: JS heap+external', perRun.map((m) => m.js)],
      ['cordon run: RSS', perRun.map((m) => m.rss)],
    ]),
  ];
}

module.exports = { concurrency, memory, statusKiB, sandboxTree };
