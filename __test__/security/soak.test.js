'use strict';

// The soak: many sandboxes, several in flight, mixing programs that finish
// normally (one terminal frame on fd 3), crash, run into their deadline, or
// are stopped. Afterwards: no terminal frame lost, and no control root,
// process, descriptor or zombie left behind; RSS stable.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { setTimeout: sleep } = require('node:timers/promises');

const h = require('./harness');

/** Runs in total (CORDON_SOAK_RUNS overrides, e.g. for a quick local pass). */
const RUNS = Number(process.env.CORDON_SOAK_RUNS ?? 1000);
/** Sandboxes in flight at once. */
const IN_FLIGHT = 8;
/** Runs before the baselines are taken, so lazily created runtime state is not counted. */
const WARM_UP = 16;
/** Allowed RSS growth across the soak (the process must not grow per run). */
const MAX_RSS_GROWTH_BYTES = 64 * 2 ** 20;

const skip = h.skipReason();

/** Run `i`'s kind: half normal, the rest crashing, timing out or stopped. */
function kindOf(i) {
  return ['normal', 'crash', 'normal', 'deadline', 'normal', 'stopped', 'normal', 'crash'][i % 8];
}

/** Every run's cgroup directories, from the receipts: all must be gone. */
const cgroupPaths = [];

function noteCgroup(run) {
  cgroupPaths.push(...(run.receipt?.confinement?.planned?.cgroup?.paths ?? []));
  return run;
}

async function runOne(i) {
  const kind = kindOf(i);
  switch (kind) {
    case 'normal': {
      const run = noteCgroup(await h.attack(['frame', String(i)]));
      return { kind, ok: run.returncode === 0 && run.protocol.text === `{"type":"done","n":${i}}\n` };
    }
    case 'crash': {
      const run = noteCgroup(await h.attack(['crash']));
      return { kind, ok: run.returncode !== 0 || run.signal !== null };
    }
    case 'deadline': {
      const run = noteCgroup(await h.attack(['hang'], { deadlineMs: 50, stop: { graceMs: 200, forceMs: 1000 } }));
      return { kind, ok: run.receipt.stop.reason === 'deadline' };
    }
    default: {
      const run = noteCgroup(await h.attack(['hang'], {}, async (execution, started) => {
        await started;
        execution.stop();
      }));
      return { kind, ok: run.receipt.stop.requested === true };
    }
  }
}

async function pool(count, start, worker) {
  const results = [];
  let next = start;
  const lanes = Array.from({ length: IN_FLIGHT }, async () => {
    while (next < start + count) {
      const i = next;
      next += 1;
      results.push(await worker(i));
    }
  });
  await Promise.all(lanes);
  return results;
}

test(`soak: ${RUNS} mixed runs, ${IN_FLIGHT} in flight, nothing lost or leaked`, {
  skip: skip ?? false,
  timeout: 15 * 60_000,
}, async () => {
  h.probe();
  await pool(WARM_UP, 0, runOne);
  await sleep(200);
  const fds = h.openFdCount();
  const rss = process.memoryUsage().rss;
  const started = Date.now();
  const results = await pool(RUNS, WARM_UP, runOne);
  const seconds = (Date.now() - started) / 1000;
  // What the last runs leave is removed asynchronously (control roots,
  // cgroups, descriptors): wait for it, up to 10 s; a leak stays.
  const settled = () => h.controlRoots().length === 0 && h.processesWith(h.probe()).length === 0
    && h.zombieChildren().length === 0 && cgroupPaths.every((p) => !fs.existsSync(p));
  for (let i = 0; i < 500 && !settled(); i += 1) await sleep(20);
  const fdsAfter = await h.settledFdCount(fds);
  const byKind = {};
  for (const { kind, ok } of results) {
    byKind[kind] ??= { runs: 0, failed: 0 };
    byKind[kind].runs += 1;
    if (!ok) byKind[kind].failed += 1;
  }
  const rssGrowth = process.memoryUsage().rss - rss;
  const summary = {
    runs: results.length,
    seconds,
    byKind,
    lostTerminalFrames: byKind.normal.failed,
    leakedControlRoots: h.controlRoots().length,
    leakedProcesses: h.processesWith(h.probe()).length,
    zombies: h.zombieChildren().length,
    cgroups: cgroupPaths.length,
    leakedCgroups: cgroupPaths.filter((p) => fs.existsSync(p)).length,
    fdDelta: fdsAfter - fds,
    rssGrowthMiB: Math.round(rssGrowth / 2 ** 20),
  };
  console.log(`soak: ${JSON.stringify(summary)}`);
  assert.equal(results.length, RUNS);
  for (const [kind, { failed }] of Object.entries(byKind)) assert.equal(failed, 0, `${kind} runs failed`);
  assert.equal(summary.leakedControlRoots, 0);
  assert.equal(summary.leakedProcesses, 0);
  assert.equal(summary.zombies, 0);
  assert.equal(summary.leakedCgroups, 0);
  assert.ok(summary.fdDelta <= 0, `descriptors grew by ${summary.fdDelta}`);
  assert.ok(rssGrowth < MAX_RSS_GROWTH_BYTES, `RSS grew ${summary.rssGrowthMiB} MiB`);
});
