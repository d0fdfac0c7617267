'use strict';

// How long the provider's event loop was blocked while some work ran, for the tests that bound
// it (issue 11 §1: nothing a model sends stalls the provider for more than 50 ms).
//
// Two things make a raw wall-clock gap a poor witness on a shared CI machine, and both are
// handled here rather than by loosening the bound:
// - time the kernel kept this thread runnable but off every CPU is the machine's doing, not
//   the payload's: it is read from /proc/thread-self/schedstat and subtracted;
// - a one-off stall on the CPU (a major GC of a heap 500 earlier tests grew, a page-fault storm
//   after a neighbour's build evicted us) does not repeat, while a payload that blocks the loop
//   blocks it every time it is sent. `leastStall` re-sends a payload that went over the bound
//   and keeps the least of its worst stalls: a real blocker still fails every attempt.

const fs = require('node:fs');
const { PerformanceObserver } = require('node:perf_hooks');

const TICK_MS = 10;

/**
 * This thread's scheduler counters (ns): time on a CPU and time runnable but waiting for one.
 * Linux only (/proc/thread-self, 3.17+), like the sandbox itself.
 */
function schedstat() {
  const [onCpuNs, runWaitNs] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
  return { onCpuNs, runWaitNs };
}

/**
 * Measure the event loop while `work` runs. For every 10 ms tick: the wall gap past the period,
 * and the stall — the same gap minus the time this thread waited on the runqueue. Returns the
 * work's value and the worst of each (ms), with the on-CPU time of the worst tick and the
 * longest GC pause seen.
 */
async function measureLoop(work) {
  let last = performance.now();
  let lastSched = schedstat();
  const worst = { gapMs: 0, stallMs: 0, runWaitMs: 0, onCpuMs: 0, gcMs: 0 };
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) worst.gcMs = Math.max(worst.gcMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  const sample = () => {
    const now = performance.now();
    const sched = schedstat();
    const gapMs = now - last - TICK_MS;
    const runWaitMs = (sched.runWaitNs - lastSched.runWaitNs) / 1e6;
    worst.gapMs = Math.max(worst.gapMs, gapMs);
    if (gapMs - runWaitMs > worst.stallMs) {
      worst.stallMs = gapMs - runWaitMs;
      worst.onCpuMs = (sched.onCpuNs - lastSched.onCpuNs) / 1e6; // of the worst tick
    }
    worst.runWaitMs = Math.max(worst.runWaitMs, runWaitMs);
    last = now;
    lastSched = sched;
  };
  const ticker = setInterval(sample, TICK_MS);
  try {
    const value = await work();
    // The stretch since the last tick, taken now: a block in the same task that settles the
    // work would otherwise end unseen, the interval cleared before it could fire again.
    sample();
    return { value, ...worst };
  } finally {
    clearInterval(ticker);
    gc.disconnect();
  }
}

/**
 * Run `work` under measureLoop; while its worst stall is over `boundMs`, run it again, up to
 * `attempts` times in all. Returns the measurement with the least stall, plus `attempts` (how
 * many were made) and `stalls` (each attempt's worst stall, ms).
 */
async function leastStall(work, boundMs, attempts = 3) {
  let best;
  const stalls = [];
  for (let i = 0; i < attempts; i++) {
    const measured = await measureLoop(work);
    stalls.push(Math.round(measured.stallMs));
    if (!best || measured.stallMs < best.stallMs) best = measured;
    if (best.stallMs <= boundMs) break;
  }
  return { ...best, attempts: stalls.length, stalls };
}

module.exports = { TICK_MS, schedstat, measureLoop, leastStall };
