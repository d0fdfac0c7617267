'use strict';

// TypeScript in model-written programs: types are stripped before the runner
// sees the code, in one worker thread shared by the process, with a deadline.
// The provider's event loop only posts the source and reads the answer; the
// parser (amaro, swc in WebAssembly) never runs on it. Steps per source:
//   1. post {id, code} to the worker (started on first use, unref'd)
//   2. answer within STRIP_DEADLINE_MS → stripped code, or the parser's error
//   3. past the deadline → the worker is terminated (the other sources it held
//      are posted again to a fresh one) and this source fails STRIP_TIMEOUT
// Jobs run one at a time in the worker; admission bounds how many wait.

const path = require('node:path');
const { Worker } = require('node:worker_threads');

/** Wall time one source may take in the worker, queueing included (~1 s per 16 MiB here, unloaded). */
const STRIP_DEADLINE_MS = 10000;
/** The worker's own heap: a 16 MiB source and swc's AST fit with room to spare. */
const WORKER_HEAP_MB = 512;

const WORKER_PATH = path.join(__dirname, 'strip-types-worker.js');

let worker = null;
let nextId = 1;
/** id → {code, resolve, timer}: every source posted to the current worker and not yet answered. */
const pending = new Map();

function spawnWorker() {
  const spawned = new Worker(WORKER_PATH, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  spawned.on('message', ({ id, ...answer }) => settle(id, answer));
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
function onDeadline(id) {
  const stuck = worker;
  const others = [...pending.entries()].filter(([other]) => other !== id);
  settle(id, { error: { code: 'STRIP_TIMEOUT', message: `type stripping took longer than ${STRIP_DEADLINE_MS} ms` } });
  worker = null;
  for (const [other] of others) pending.delete(other);
  stuck?.terminate().catch(() => {});
  for (const [, job] of others) {
    clearTimeout(job.timer);
    post(job.code).then(job.resolve);
  }
}

function post(code) {
  return new Promise((resolve) => {
    worker ??= spawnWorker();
    const id = nextId;
    nextId += 1;
    const timer = setTimeout(() => onDeadline(id), STRIP_DEADLINE_MS);
    pending.set(id, { code, resolve, timer });
    worker.ref();
    worker.postMessage({ id, code });
  });
}

/**
 * Strip TypeScript types from a program, keeping every line and column.
 * Never rejects.
 * @param {string} code
 * @returns {Promise<{code: string} | {error: {code: string, message: string, line?: number|null, column?: number|null}}>}
 */
function stripTypes(code) {
  return post(code);
}

module.exports = { stripTypes, STRIP_DEADLINE_MS };
