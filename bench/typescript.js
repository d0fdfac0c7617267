'use strict';

// Section 7: what TypeScript support costs per run. A 4 KiB model-style
// TypeScript program (interfaces, annotations, generics, `as`) is stripped
// (lib/code-mode/strip-types.js: amaro strip-only in a worker thread, the
// source posted and the answer pulled back) vs the same amaro call on this
// thread (what the worker hop adds), and a whole run of that program vs the
// same program already written as JavaScript (the run's share of stripping).

const amaro = require('amaro');
const { createCodeMode } = require('..');
const { stripTypes } = require('../lib/code-mode/strip-types');
const { sectionRows, nowMs } = require('./stats');

const UNIT = `interface Order { id: string; total: number; items: Array<{ sku: string; qty: number }> }
type Summary<T> = { count: number; first: T | null };
function summarize<T>(items: T[]): Summary<T> { return { count: items.length, first: items[0] ?? null }; }
const orders: Order[] = [{ id: "o1", total: 12.5, items: [{ sku: "kb", qty: 1 }] }] as Order[];
const s = summarize<Order>(orders) satisfies Summary<Order>;
acc.push(s.count + (s.first?.total ?? 0));
`;
/** A ~4 KiB program: UNIT repeated, each copy in its own block. */
const TS_PROGRAM = `const acc: number[] = [];\n${`{\n${UNIT}}\n`.repeat(Math.floor(4096 / (UNIT.length + 4)))}return acc.length;`;

async function typescript({ runs, warmup = 0 }) {
  const js = (await stripTypes(TS_PROGRAM)).code;
  if (js === undefined) throw new Error('the bench program did not strip');
  const mode = createCodeMode({ tools: [] });
  const samples = { inThread: [], worker: [], runJs: [], runTs: [] };
  for (let i = 0; i < warmup + runs; i += 1) {
    const keep = i >= warmup;
    let t = nowMs();
    amaro.transformSync(`async function f(){${TS_PROGRAM}\n}`, { mode: 'strip-only' });
    const inThread = nowMs() - t;
    t = nowMs();
    await stripTypes(TS_PROGRAM);
    const worker = nowMs() - t;
    t = nowMs();
    const a = await mode.run(js);
    const runJs = nowMs() - t;
    t = nowMs();
    const b = await mode.run(TS_PROGRAM);
    const runTs = nowMs() - t;
    if (!a.ok || !b.ok) throw new Error(`bench run failed: ${JSON.stringify(a.error ?? b.error)}`);
    if (keep) { samples.inThread.push(inThread); samples.worker.push(worker); samples.runJs.push(runJs); samples.runTs.push(runTs); }
  }
  const kib = (Buffer.byteLength(TS_PROGRAM) / 1024).toFixed(1);
  return [
    ...sectionRows(`7 TypeScript strip (${kib} KiB)`, 'ms', [
      ['amaro strip-only, this thread', samples.inThread],
      ['cordon stripTypes (worker)', samples.worker],
    ]),
    ...sectionRows(`7 TypeScript run (${kib} KiB)`, 'ms', [
      ['cold run, same program as JS', samples.runJs],
      ['cold run, TypeScript', samples.runTs],
    ]),
  ];
}

module.exports = { typescript, TS_PROGRAM };
