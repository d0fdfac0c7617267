'use strict';

// A bounded pool of validator threads shared by every Code Mode instance of
// the process, for the two steps over model-controlled bytes whose cost is not
// bounded by their size on the main thread:
// - argument validation runs the provider's schema over the model's data; some
//   keywords cost far more than the data's size (Ajv's `uniqueItems` is
//   quadratic, a `pattern` can backtrack exponentially), so it never runs on
//   the provider's event loop unless validation.js can bound it;
// - decoding a large runner frame (frame-decoder.js): parse, duplicate-key and
//   depth scan, and the count of values and keys that decides whether the
//   main thread may parse it too.
//
// Bounds:
// - threads: POOL_THREADS workers, started on demand, ended after IDLE_MS idle;
// - time: each request gets BUDGET_MS of a worker's CPU time (Linux; wall time
//   elsewhere) from the moment the worker takes it (and has started: loading
//   ajv is not the request's time), and at most MAX_WALL_FACTOR × that of wall
//   time when the machine starves it; past either the worker is terminated (V8
//   interrupts even a backtracking regex) and the call fails with
//   VALIDATION_TIMEOUT. A worker gets STARTUP_MS to start;
// - memory: each worker's heap is capped (WORKER_HEAP_MB); a worker that runs
//   out dies and the call fails with VALIDATION_FAILED;
// - queue: at most MAX_QUEUED requests wait; past it a call fails at once with
//   VALIDATION_BUSY. A request whose run gave up (signal aborted) leaves the
//   queue at once, or, if a worker is on it, that worker is terminated.
// The main thread's own cost per request is a postMessage of strings (the
// frame text, the schema text) or, without frame text, of the arguments.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');

/** Two threads at least, so one request at its budget does not stall every other run. */
const POOL_THREADS = Math.min(4, Math.max(2, (os.availableParallelism?.() ?? os.cpus().length) - 1));
/** CPU time a worker may spend on one request (compile on first use + parse + check); see overrun(). */
const BUDGET_MS = 1000;
/** A validator thread that has not loaded its modules after this long is given up (its job fails). */
const STARTUP_MS = 10_000;
/** Extra budget for decoding a large frame, per MiB of it. */
const DECODE_MS_PER_MIB = 500;
/** Requests waiting for a worker; 8 outstanding calls × 64 runs before anyone is refused. */
const MAX_QUEUED = 512;
/** Workers with nothing to do for this long are ended (their heaps are freed). */
const IDLE_MS = 10_000;
/** Per-worker heap: a maximal default frame parses in a few tens of MiB. */
const WORKER_HEAP_MB = 256;
const WORKER_PATH = path.join(__dirname, 'validator-worker.js');

/** A starved validator gets its CPU budget within this many times the budget of wall time. */
const MAX_WALL_FACTOR = 10;
/** Shortest re-arm of an unspent budget (the /proc read is cheap, but not free). */
const MIN_RECHECK_MS = 20;

/**
 * CPU time (ms) the kernel has charged to one thread of this process, from
 * /proc/self/task/<tid>/schedstat (its first field: ns on a CPU); null when unreadable.
 */
function threadCpuMs(tid) {
  if (tid === null || tid === undefined) return null;
  try {
    return Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

const failure = (code, message) => ({ ok: false, code, message: message.slice(0, 1024) });

class ValidatorPool {
  /**
   * @param {{threads?: number, budgetMs?: number, maxQueued?: number, idleMs?: number, heapMb?: number}} [options] tests shrink them
   */
  constructor(options = {}) {
    this.threads = options.threads ?? POOL_THREADS;
    this.budgetMs = options.budgetMs ?? BUDGET_MS;
    this.maxQueued = options.maxQueued ?? MAX_QUEUED;
    this.idleMs = options.idleMs ?? IDLE_MS;
    this.heapMb = options.heapMb ?? WORKER_HEAP_MB;
    this.slots = Array.from({ length: this.threads }, () => ({ worker: null, job: null }));
    this.queue = [];
    this.seq = 0;
    /** Counters for tests and diagnostics. */
    this.stats = { started: 0, timedOut: 0, crashed: 0, refused: 0 };
  }

  /**
   * Validate tool arguments (validation.js).
   * @param {object} request see validator-worker.js (without seq and kind)
   * @param {AbortSignal} [signal] the call was abandoned: leave the queue, answer RUN_ENDED
   * @returns {Promise<{ok: true} | {ok: false, code: string, message: string}>} never rejects
   */
  validate(request, signal) {
    return this.submit({ kind: 'validate', ...request }, {
      signal,
      budgetMs: this.budgetMs,
      what: `${request.role === 'output' ? 'the result' : 'arguments'} for "${request.name}" could not be validated`,
    });
  }

  /**
   * Decode a large runner line off the main thread (frame-decoder.js). The budget grows
   * with the line (a frame of raised limits parses for longer), from this.budgetMs.
   * @param {Buffer} line
   * @returns {Promise<{ok: true, text: string, weight: object, summary: object} | {ok: false, code: string, message: string}>}
   */
  decode(line) {
    const budgetMs = this.budgetMs + Math.ceil(line.length / (1024 * 1024)) * DECODE_MS_PER_MIB;
    return this.submit({ kind: 'decode', line }, { budgetMs, what: `a ${line.length}-byte runner frame could not be decoded` });
  }

  submit(request, { signal, budgetMs, what }) {
    if (signal?.aborted) return Promise.resolve(failure('RUN_ENDED', 'the run ended before the arguments were validated'));
    if (this.queue.length >= this.maxQueued) {
      this.stats.refused += 1;
      return Promise.resolve(failure('VALIDATION_BUSY', `${this.queue.length} validations are already waiting; try again`));
    }
    return new Promise((resolve) => {
      const job = { request: { ...request, seq: (this.seq += 1) }, resolve, signal, budgetMs, what, timer: null, onAbort: null };
      if (signal) {
        job.onAbort = () => this.abandon(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /**
   * The caller gave up (its run ended): a queued job leaves the queue; a running one has its
   * worker terminated at once — a hostile validation must not hold a thread past its run.
   */
  abandon(job) {
    const at = this.queue.indexOf(job);
    if (at !== -1) this.queue.splice(at, 1);
    const slot = this.slots.find((candidate) => candidate.job === job);
    if (slot) {
      const { worker } = slot;
      slot.job = null;
      slot.worker = null;
      worker.terminate().catch(() => {});
    }
    if (at !== -1 || slot) this.settle(job, failure('RUN_ENDED', 'the run ended before validation finished'));
    if (slot) this.pump();
  }

  settle(job, reply) {
    clearTimeout(job.timer);
    job.signal?.removeEventListener('abort', job.onAbort);
    job.resolve(reply);
  }

  pump() {
    clearTimeout(this.idleTimer);
    for (const slot of this.slots) {
      if (this.queue.length === 0) break;
      if (slot.job) continue;
      this.start(slot, this.queue.shift());
    }
    // Busy, a worker keeps the process alive (someone awaits its answer); idle, it must not.
    for (const slot of this.slots) {
      if (slot.job) slot.worker?.ref();
      else slot.worker?.unref();
    }
    if (this.queue.length === 0 && this.slots.every((slot) => !slot.job)) {
      this.idleTimer = setTimeout(() => this.endIdle(), this.idleMs);
      this.idleTimer.unref();
    }
  }

  start(slot, job) {
    if (!slot.worker) slot.worker = this.spawn(slot);
    slot.job = job;
    // The budget is the job's, not the thread's start-up (loading ajv takes a while on a busy host).
    if (slot.ready) this.arm(slot);
    slot.worker.postMessage(job.request);
  }

  arm(slot) {
    const { job } = slot;
    clearTimeout(job.timer);
    job.startedAt = performance.now();
    job.cpuAtStart = threadCpuMs(slot.tid);
    job.timer = setTimeout(() => this.overrun(slot), job.budgetMs);
  }

  spawn(slot) {
    this.stats.started += 1;
    slot.ready = false;
    slot.tid = null;
    const worker = new Worker(WORKER_PATH, {
      resourceLimits: { maxOldGenerationSizeMb: this.heapMb, maxYoungGenerationSizeMb: Math.min(32, this.heapMb) },
      stdout: false,
      stderr: false,
    });
    // A thread that does not even start is lost like one that dies.
    // (terminate() makes it exit; the 'exit' handler below fails its job)
    const startup = setTimeout(() => worker.terminate().catch(() => {}), STARTUP_MS);
    startup.unref();
    worker.on('message', (reply) => {
      if (reply?.ready === true) {
        clearTimeout(startup);
        if (slot.worker !== worker) return; // replaced meanwhile
        slot.ready = true;
        slot.tid = Number.isSafeInteger(reply.tid) ? reply.tid : null;
        if (slot.worker === worker && slot.job) this.arm(slot);
        return;
      }
      if (slot.worker !== worker || !slot.job || reply?.seq !== slot.job.request.seq) return;
      const { job } = slot;
      slot.job = null;
      const { seq, ...answer } = reply;
      this.settle(job, answer);
      this.pump();
    });
    worker.on('error', () => {}); // 'exit' follows and reports it
    worker.on('exit', () => {
      clearTimeout(startup);
      this.lost(slot, worker);
    });
    // Idle workers must never keep the provider's process alive (pump() refs a busy one).
    // Last: adding a 'message' listener refs the worker's port again (so an earlier
    // unref() left every process that validated off-thread alive for IDLE_MS).
    worker.unref();
    return worker;
  }

  /** The budget ran out: the worker is terminated and replaced on next use. */
  overrun(slot) {
    const { job, worker } = slot;
    if (!job) return;
    // The budget is CPU time when the thread's is readable: a validator starved by a busy
    // machine gets its full budget of work, within MAX_WALL_FACTOR × the budget.
    const cpuMs = threadCpuMs(slot.tid);
    const usedMs = cpuMs === null || job.cpuAtStart === null ? Infinity : cpuMs - job.cpuAtStart;
    const wallMs = performance.now() - job.startedAt;
    if (usedMs < job.budgetMs && wallMs < job.budgetMs * MAX_WALL_FACTOR) {
      job.timer = setTimeout(() => this.overrun(slot), Math.max(MIN_RECHECK_MS, Math.min(job.budgetMs - usedMs, job.budgetMs * MAX_WALL_FACTOR - wallMs)));
      return;
    }
    this.stats.timedOut += 1;
    slot.job = null;
    slot.worker = null;
    worker.terminate().catch(() => {});
    this.settle(job, failure('VALIDATION_TIMEOUT', `${job.what} within ${job.budgetMs} ms${usedMs === Infinity ? '' : ' of CPU time'}`));
    this.pump();
  }

  /** A worker died by itself (heap limit, a crash, no start-up): its job fails, the slot respawns on next use. */
  lost(slot, worker) {
    if (slot.worker !== worker) return; // terminated on purpose
    slot.worker = null;
    const { job } = slot;
    slot.job = null;
    if (job) {
      this.stats.crashed += 1;
      this.settle(job, failure('VALIDATION_FAILED', `${job.what}: the validator thread stopped (out of memory?) before answering`));
    }
    this.pump();
  }

  endIdle() {
    for (const slot of this.slots) {
      if (slot.job || !slot.worker) continue;
      const { worker } = slot;
      slot.worker = null;
      worker.terminate().catch(() => {});
    }
  }

  /** Workers alive now (tests). */
  liveWorkers() {
    return this.slots.filter((slot) => slot.worker).length;
  }
}

let shared = null;
/** The process-wide pool. */
function sharedPool() {
  shared ??= new ValidatorPool();
  return shared;
}

module.exports = { ValidatorPool, sharedPool, POOL_THREADS, BUDGET_MS, MAX_QUEUED };
