'use strict';

// TypeScript in model-written programs: types are stripped before the runner
// sees the code, in one worker thread shared by the process, with a deadline.
// The provider's event loop only posts the source and reads the answer; the
// parser (amaro, swc in WebAssembly) never runs on it. Steps per source:
//   1. post {id, code} to the worker (started on first use, unref'd)
//   2. answer within stripDeadlineMs(code) → stripped code, or the parser's error
//   3. past the deadline → the worker is terminated (the other sources it held
//      are posted again to a fresh one) and this source fails STRIP_TIMEOUT
// Jobs run one at a time in the worker; admission bounds how many wait.

const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

/**
 * The budget of one source in the worker, queueing included: a base plus a
 * share per MiB, because swc's cost grows faster than the size (measured on a
 * loaded 2-core machine: 64 KiB ~15 ms, 1 MiB ~0.3 s, 4 MiB ~2 s, 16 MiB ~7 s).
 * It is the worker thread's CPU time (Linux: /proc/self/task/<tid>/schedstat),
 * so a machine busy with other work does not fail a source early; wall time is
 * still capped at WALL_FACTOR × the budget. Without the thread's CPU time it is
 * wall time.
 */
const STRIP_BASE_DEADLINE_MS = 5000;
const STRIP_DEADLINE_MS_PER_MIB = 1500;
const WALL_FACTOR = 10;
/** The worker's own heap: a 16 MiB source and swc's AST fit with room to spare. */
const WORKER_HEAP_MB = 512;

const WORKER_PATH = path.join(__dirname, 'strip-types-worker.js');
/** Characters per message each way: copying one costs well under a millisecond. */
const CHUNK_CHARS = 256 * 1024;

let worker = null;
/** The current worker's Linux tid (from its ready message), or null. */
let workerTid = null;
/** Whether the current worker has reported ready (its start-up, a thread and amaro's wasm, is done). */
let workerReady = false;
/** The current worker's CPU ms when it reported ready, or null. */
let workerReadyCpuMs = null;
let nextId = 1;

/** ms the worker thread has spent on a CPU, or null when unreadable. */
function workerCpuMs() {
  if (workerTid === null) return null;
  try {
    return Number(fs.readFileSync(`/proc/self/task/${workerTid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}
/** id → {code, resolve, timer}: every source posted to the current worker and not yet answered. */
const pending = new Map();

function spawnWorker() {
  const spawned = new Worker(WORKER_PATH, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  workerTid = null;
  workerReady = false;
  workerReadyCpuMs = null;
  spawned.on('message', ({ id, part, last, ready, tid, ...answer }) => {
    if (ready) {
      if (worker === spawned) {
        workerTid = Number.isSafeInteger(tid) ? tid : null;
        workerReady = true;
        workerReadyCpuMs = workerCpuMs();
      }
      return undefined;
    }
    // The stripped code comes back in pieces, like the source went out.
    if (part === undefined) return settle(id, answer);
    const job = pending.get(id);
    if (!job) return undefined;
    job.parts.push(part);
    if (last) return settle(id, { code: job.parts.join('') });
    // Pulled one piece at a time: pieces posted together would all be read in one task.
    spawned.postMessage({ id, more: true });
    return undefined;
  });
  // A crash (heap limit, a bug in the parser) fails what it held; the next source starts a new worker.
  spawned.on('error', (error) => dropWorker(spawned, { error: { code: 'WorkerFailed', message: String(error?.message ?? error).slice(0, 200) } }));
  spawned.on('exit', () => dropWorker(spawned, { error: { code: 'WorkerFailed', message: 'the type-stripping worker exited' } }));
  return spawned;
}

function settle(id, answer) {
  const job = pending.get(id);
  if (!job) return;
  pending.delete(id);
  clearTimeout(job.timer);
  // Idle, the worker must not keep the provider's process alive; busy, it must.
  if (pending.size === 0) worker?.unref();
  job.resolve(answer);
}

function dropWorker(which, answer) {
  if (worker !== which) return;
  worker = null;
  for (const id of [...pending.keys()]) settle(id, answer);
}

/** The worker is stuck on `id`: fail that source, replace the worker, re-post the others. */
function onDeadline(id, deadlineMs) {
  const stuck = worker;
  const others = [...pending.entries()].filter(([other]) => other !== id);
  settle(id, { error: { code: 'STRIP_TIMEOUT', message: `type stripping took longer than its ${deadlineMs} ms budget` } });
  worker = null;
  for (const [other] of others) pending.delete(other);
  stuck?.terminate().catch(() => {});
  for (const [, job] of others) {
    clearTimeout(job.timer);
    post(job.code, job.budgetMs).then(job.resolve);
  }
}

/** The deadline for one source: STRIP_BASE_DEADLINE_MS + STRIP_DEADLINE_MS_PER_MIB per MiB (UTF-16 units as a proxy). */
function stripDeadlineMs(code) {
  return STRIP_BASE_DEADLINE_MS + Math.ceil((code.length / (1024 * 1024)) * STRIP_DEADLINE_MS_PER_MIB);
}

function post(code, budgetMs) {
  return new Promise((resolve) => {
    worker ??= spawnWorker();
    const id = nextId;
    nextId += 1;
    const deadlineMs = budgetMs ?? stripDeadlineMs(code);
    const started = { wallMs: performance.now(), cpuMs: workerCpuMs() };
    const check = () => {
      const job = pending.get(id);
      if (!job) return;
      // A source posted before the worker was ready waited for its start-up,
      // which is not the source's: its CPU clock starts at the worker's ready.
      started.cpuMs ??= workerReadyCpuMs;
      const cpuNow = workerCpuMs();
      const cpuUsed = started.cpuMs === null || cpuNow === null ? null : cpuNow - started.cpuMs;
      const wallUsed = performance.now() - started.wallMs;
      const starting = !workerReady;
      // Time the worker waited for a CPU is not its own, nor its start-up on a
      // busy machine (a first source failed STRIP_TIMEOUT at 5 s of wall time
      // under load): wait on, up to the wall cap.
      if (((cpuUsed !== null && cpuUsed < deadlineMs) || starting) && wallUsed < WALL_FACTOR * deadlineMs) {
        job.timer = setTimeout(check, Math.max(10, cpuUsed === null ? 50 : deadlineMs - cpuUsed));
        return;
      }
      onDeadline(id, deadlineMs);
    };
    const timer = setTimeout(check, deadlineMs);
    pending.set(id, { code, budgetMs, resolve, timer, parts: [] });
    worker.ref();
    sendInChunks(worker, id, code);
  });
}

/**
 * Post the source in CHUNK_CHARS pieces, yielding to the event loop between
 * them: one postMessage copies its string synchronously (~40 ms for 16 MiB).
 */
async function sendInChunks(target, id, code) {
  for (let start = 0; start < code.length || start === 0; start += CHUNK_CHARS) {
    if (worker !== target || !pending.has(id)) return; // replaced or settled meanwhile
    const end = start + CHUNK_CHARS;
    target.postMessage({ id, part: code.slice(start, end), last: end >= code.length });
    if (end < code.length) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Strip TypeScript types from a program, keeping every line and column.
 * Never rejects.
 * @param {string} code
 * @param {{stripDeadlineMs?: number}} [options] a budget other than stripDeadlineMs(code) (tests force the timeout with it)
 * @returns {Promise<{code: string} | {error: {code: string, message: string, line?: number|null, column?: number|null}}>}
 */
function stripTypes(code, options = {}) {
  return post(code, options.stripDeadlineMs);
}

module.exports = { stripTypes, stripDeadlineMs };
