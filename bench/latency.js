'use strict';

// Sections 1 and 2: how long one run takes, cold and pooled, each
// interleaved with its peers in the same loop (so load drifts hit all alike).
//   1  cold createCodeMode().run("return 1")  vs  raw bwrap /bin/true (launcher's
//      flags)  vs  child_process.spawn('/bin/true'); spawnIsolated(['/bin/true'])
//      alone says how much of the difference is the launcher's
//   2  pooled run("return 1")  vs  quickjs-emscripten new context + eval in
//      this process  vs  spawning `node -e 0`

const { createCodeMode, spawnIsolated, readOnly } = require('..');
const { BWRAP, rawBwrap, timeChild } = require('./peers');
const { sectionRows, sleep, nowMs } = require('./stats');

async function timeRun(mode) {
  const started = nowMs();
  const result = await mode.run('return 1');
  if (!result.ok) throw new Error(`run failed: ${JSON.stringify(result.error)}`);
  return nowMs() - started;
}

async function timeSpawnIsolated() {
  const started = nowMs();
  const execution = spawnIsolated(['/bin/true'], { policy: readOnly() });
  execution.protocol.resume();
  execution.stderr.resume();
  const { returncode } = await execution.wait();
  if (returncode !== 0) throw new Error(`spawnIsolated(/bin/true) exited ${returncode}`);
  return nowMs() - started;
}

async function cold({ iterations, warmup }) {
  const mode = createCodeMode({ tools: [], admission: { maxConcurrent: 1 } });
  const raw = rawBwrap('/bin/true');
  const samples = { cold: [], bwrap: [], spawn: [], launcher: [] };
  try {
    for (let i = 0; i < warmup + iterations; i += 1) {
      const keep = i >= warmup;
      const a = await timeRun(mode);
      const b = await timeChild(BWRAP, raw.argv);
      const c = await timeChild('/bin/true', []);
      const d = await timeSpawnIsolated();
      if (keep) { samples.cold.push(a); samples.bwrap.push(b); samples.spawn.push(c); samples.launcher.push(d); }
    }
  } finally {
    raw.cleanup();
  }
  return sectionRows('1 cold run', 'ms', [
    ['raw bwrap /bin/true', samples.bwrap],
    ['cordon run("return 1") cold', samples.cold],
    ['spawnIsolated /bin/true', samples.launcher],
    ['spawn /bin/true', samples.spawn],
  ]);
}

/**
 * A prewarmed pool of 2. Between iterations (untimed) the pool is let to refill
 * and its new sandbox to finish starting: the pooled figure is for a run that
 * finds a waiting sandbox, as in an agent loop where runs are seconds apart.
 */
async function pooled({ iterations, warmup, settleMs }) {
  const { getQuickJS } = require('quickjs-emscripten');
  const QuickJS = await getQuickJS();
  const mode = createCodeMode({ tools: [], pool: { size: 2 } });
  const samples = { pooled: [], quickjs: [], node: [] };
  try {
    for (let i = 0; i < warmup + iterations; i += 1) {
      while (mode.poolStats().idle < 2) await sleep(5);
      await sleep(settleMs);
      const keep = i >= warmup;
      const a = await timeRun(mode);
      const b = timeQuickJs(QuickJS);
      const c = await timeChild(process.execPath, ['-e', '0']);
      if (keep) { samples.pooled.push(a); samples.quickjs.push(b); samples.node.push(c); }
    }
  } finally {
    await mode.close();
  }
  return sectionRows('2 pooled run', 'ms', [
    ['quickjs-emscripten ctx+eval', samples.quickjs],
    ['cordon run("return 1") pooled', samples.pooled],
    ['spawn node -e 0', samples.node],
  ]);
}

/** In-process: a new runtime + context, eval "1", dispose (what an in-process sandbox pays per run). */
function timeQuickJs(QuickJS) {
  const started = nowMs();
  const runtime = QuickJS.newRuntime();
  const context = runtime.newContext();
  const handle = context.unwrapResult(context.evalCode('(function(){ return 1 })()'));
  const value = context.getNumber(handle);
  handle.dispose();
  context.dispose();
  runtime.dispose();
  if (value !== 1) throw new Error('quickjs-emscripten returned the wrong value');
  return nowMs() - started;
}

module.exports = { cold, pooled };
