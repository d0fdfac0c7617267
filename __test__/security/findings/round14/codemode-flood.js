'use strict';
// Probe: a Code Mode program that floods the host over fd 3 — console.log in
// a tight loop, tool calls 8 at a time in a loop (small, and ~900 KiB args),
// deeply nested args — with timeoutMs 2000. Expected: the run ends as
// "timeout" within timeoutMs + the stop ladder, the provider's event loop is
// not held (docs: ≤ ~50 ms per payload), a concurrent timer keeps ticking.
// Control: `while (true) {}` (timeout, no traffic).
const { cordon, delayMonitor, snap, sleep } = require('./h');
const cm = cordon.createCodeMode({
  tools: [{ name: 'echo', description: 'echo', effect: 'read', inputSchema: { type: 'object' }, handler: async (a) => ({ n: JSON.stringify(a).length }) }],
  limits: { timeoutMs: 2000, toolCalls: 100000 },
});
const PROGS = {
  control: 'while (true) {}',
  console: 'for (;;) console.log("x");',
  consoleBig: 'const s = "y".repeat(60000); for (;;) console.log(s);',
  calls: 'for (;;) await Promise.all(Array.from({length: 8}, (_, i) => tools.echo({i})));',
  bigCalls: 'const s = "z".repeat(900000); for (;;) await Promise.all(Array.from({length: 8}, () => tools.echo({s})));',
  deep: 'let a = {}; for (let i = 0; i < 5000; i++) a = {a}; for (;;) await tools.echo({a});',
};
(async () => {
  const res = {};
  for (const [k, code] of Object.entries(PROGS)) {
    const mon = delayMonitor(); const t0 = Date.now();
    const run = await cm.run(code, { mode: 'inspect' });
    res[k] = { ms: Date.now() - t0, ok: run.ok, kind: run.error && run.error.kind, calls: run.metrics && run.metrics.toolCalls, delay: mon.stop() };
    console.log(k, JSON.stringify(res[k]));
  }
  await cm.close();
  const c = res.control;
  const bad = Object.entries(res).filter(([k, r]) => k !== 'control' && (r.ms > c.ms + 2000 || r.delay.maxMs > 200));
  console.log(bad.length ? 'FINDING: ' + bad.map(([k, r]) => `${k}: ${r.ms} ms (control ${c.ms}), loop delay max ${r.delay.maxMs} ms, ${r.kind}`).join('; ') : 'held');
  process.exit(0);
})();
