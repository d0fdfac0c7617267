'use strict';

// Section 9: what timers cost. One run of a 1000-iteration
// `await new Promise((r) => setTimeout(r, 0))` loop in Code Mode vs the same
// loop in this Node process (the baseline: Node also makes a 0 ms delay
// 1 ms), and the same Code Mode run without the loop (`return 1`), so that
// the per-iteration cost is (loop − return 1) / 1000. Interleaved, one pool
// so that spawn costs the same in both Code Mode rows.

const { createCodeMode } = require('..');
const { sectionRows, nowMs } = require('./stats');

const loop = (n) => `for (let i = 0; i < ${n}; i++) await new Promise((r) => setTimeout(r, 0));\nreturn 1;`;

async function nodeLoop(n) {
  for (let i = 0; i < n; i += 1) await new Promise((r) => setTimeout(r, 0));
}

async function timers({ runs, iterations, warmup = 0 }) {
  const mode = createCodeMode({ tools: [], limits: { timeoutMs: 60000 } });
  const samples = { node: [], codeMode: [], empty: [] };
  try {
    for (let i = 0; i < warmup + runs; i += 1) {
      const keep = i >= warmup;
      let t = nowMs();
      await nodeLoop(iterations);
      const node = nowMs() - t;
      t = nowMs();
      const looped = await mode.run(loop(iterations));
      const codeMode = nowMs() - t;
      t = nowMs();
      const empty = await mode.run('return 1;');
      const emptyMs = nowMs() - t;
      if (!looped.ok || !empty.ok) throw new Error(`bench run failed: ${JSON.stringify(looped.error ?? empty.error)}`);
      if (keep) { samples.node.push(node); samples.codeMode.push(codeMode); samples.empty.push(emptyMs); }
    }
  } finally {
    await mode.close();
  }
  const perIteration = samples.codeMode.map((ms, i) => ((ms - samples.empty[i]) * 1000) / iterations);
  const nodePerIteration = samples.node.map((ms) => (ms * 1000) / iterations);
  return [
    ...sectionRows(`11 timers: ${iterations} x setTimeout(0)`, 'ms', [
      ['Node, this process', samples.node],
      ['Code Mode run (cold)', samples.codeMode],
      ['Code Mode run of `return 1`', samples.empty],
    ]),
    ...sectionRows('11 timers per iteration', 'µs', [
      ['Node', nodePerIteration],
      ['Code Mode (run − return 1) / n', perIteration],
    ]),
  ];
}

module.exports = { timers };
