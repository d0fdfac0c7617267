'use strict';

// A prewarmed sandbox pool: `size` sandboxes already spawned with one fixed
// command, policy and option set, each waiting (idle, blocked on its fd 3)
// for whoever takes it. A taken sandbox leaves the pool for good: it serves
// exactly one caller and is never handed out again, so nothing of one run
// (memory, globals, processes, /tmp) can reach another. The pool refills in
// the background, one spawn at a time, and never holds more than `size`
// sandboxes (idle + starting); a sandbox that dies while idle is dropped and
// replaced. Spawn failures back off exponentially instead of spinning.
//
// Per-run options that are about time (deadlineMs, signal) are armed when a
// sandbox is taken, not when it was spawned: an idle sandbox is not running
// anybody's code. invocationId is chosen at spawn (it names the control root),
// so it is the pool's, not the caller's.

const crypto = require('node:crypto');
const { CordonError } = require('./errors');
const { STOP_TRIGGER_KEYS, checkStopTriggers, armStopTriggers } = require('./stop-triggers');

/** Upper bound on `size`: each idle sandbox is two processes and a control root. */
const MAX_POOL_SIZE = 64;
/** First refill retry after a failed spawn (or an idle death); doubles up to the cap. */
const BACKOFF_START_MS = 50;
const BACKOFF_MAX_MS = 5000;
/** An idle sandbox that lived at least this long before dying does not count as a spawn failure. */
const HEALTHY_LIFETIME_MS = 1000;

/** Pools with idle sandboxes; closed by one process-wide 'beforeExit' listener. */
const openPools = new Set();
function closeOpenPools() {
  for (const pool of openPools) pool.close();
}
function trackOpen(pool, open) {
  if (open) {
    if (openPools.size === 0) process.on('beforeExit', closeOpenPools);
    openPools.add(pool);
  } else if (openPools.delete(pool) && openPools.size === 0) {
    process.off('beforeExit', closeOpenPools);
  }
}

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkPoolOptions(poolOptions) {
  if (poolOptions === null || typeof poolOptions !== 'object' || Array.isArray(poolOptions)) throw invalid('pool options must be an object such as {size: 2}');
  for (const key of Object.keys(poolOptions)) {
    if (key !== 'size') throw invalid(`unknown pool option "${key}"; known: size`);
  }
  const { size } = poolOptions;
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_POOL_SIZE) throw invalid(`pool.size must be an integer from 1 to ${MAX_POOL_SIZE}, got ${String(size)}`);
  return size;
}

/**
 * What the pool itself rules out; every other key and value is the
 * launcher's to check, and it does so when the first sandbox is spawned,
 * synchronously in createPool().
 */
function checkSpawnOptions(spawnOptions) {
  if (spawnOptions === null || typeof spawnOptions !== 'object' || Array.isArray(spawnOptions)) throw invalid('spawnOptions must be an object such as {command, policy}');
  for (const key of Object.keys(spawnOptions)) {
    if (STOP_TRIGGER_KEYS.includes(key)) throw invalid(`spawnOptions.${key} is not a pool option (it is per run: pass it to take())`);
    if (key === 'invocationId') throw invalid('spawnOptions.invocationId is not a pool option: the pool names each sandbox it spawns');
  }
  const { command, ...options } = spawnOptions;
  if (!Array.isArray(command) || command.length === 0 || !command.every((arg) => typeof arg === 'string')) {
    throw new CordonError('ERR_CORDON_INVALID_COMMAND', 'spawnOptions.command must be a non-empty array of strings');
  }
  // A private copy: the caller mutating its object later must not change what the pool spawns.
  return { command: Object.freeze([...command]), options: Object.freeze({ ...options }) };
}

function checkTakeOptions(takeOptions, maxDeadlineMs) {
  if (takeOptions === null || typeof takeOptions !== 'object' || Array.isArray(takeOptions)) throw invalid('take options must be an object');
  for (const key of Object.keys(takeOptions)) {
    if (!STOP_TRIGGER_KEYS.includes(key)) throw invalid(`unknown take option "${key}"; known: ${STOP_TRIGGER_KEYS.join(', ')}`);
  }
  return checkStopTriggers(takeOptions, '', maxDeadlineMs);
}

class SandboxPool {
  constructor({ spawnIsolated, maxDeadlineMs }, spawnOptions, size) {
    this.spawnIsolated = spawnIsolated;
    this.maxDeadlineMs = maxDeadlineMs;
    this.command = spawnOptions.command;
    this.options = spawnOptions.options;
    this.size = size;
    this.idle = []; // oldest first: the one most likely to have finished starting
    this.live = new Set(); // every sandbox the pool still owns (idle), for close()
    this.running = new Set(); // taken and not yet ended: refills wait for them (refillOne)
    this.endedRuns = 0; // ends of taken runs not yet answered by a refill
    this.closed = false;
    this.closing = null;
    this.refillTimer = null;
    this.failures = 0;
    this.lastError = null;
    this.counters = { spawned: 0, taken: 0, idleDeaths: 0, spawnFailures: 0, coldTakes: 0 };
  }

  /** The first sandbox is spawned synchronously: a bad command or policy throws at creation. */
  prime() {
    this.addIdle(this.spawnOne());
    trackOpen(this, true);
    this.scheduleRefill(0);
  }

  addIdle(execution) {
    execution._hold(false); // idle: nobody's work is waiting on it
    this.idle.push(execution);
    this.live.add(execution);
  }

  /** One spawn per turn of the event loop: a burst of takes never blocks a caller on N spawns. */
  scheduleRefill(delayMs) {
    if (this.idle.length >= this.size) {
      this.endedRuns = 0; // a full pool has answered every ended run
      return;
    }
    if (this.closed || this.refillTimer !== null) return;
    const fire = () => {
      this.refillTimer = null;
      this.refillOne();
    };
    this.refillTimer = delayMs === 0 ? setImmediate(fire) : setTimeout(fire, delayMs);
    this.refillTimer.unref?.(); // a pending refill alone must not keep the process alive
  }

  refillOne() {
    if (this.closed || this.idle.length >= this.size) {
      this.endedRuns = 0;
      return;
    }
    // While taken runs are in flight and a sandbox is idle: one refill per
    // ended run, no more (refillAfter). Every refill answers one ended run,
    // gated or not: a run that ended while none other ran must not leave a
    // credit that later lets refills chain beside running ones.
    if (this.running.size > 0 && this.idle.length > 0 && this.endedRuns === 0) return;
    this.endedRuns = Math.max(0, this.endedRuns - 1);
    let execution;
    try {
      execution = this.spawnOne();
    } catch (error) {
      this.lastError = error;
      this.counters.spawnFailures += 1;
      this.scheduleRefill(this.backoff());
      return;
    }
    this.addIdle(execution);
    this.scheduleRefill(0);
  }

  /**
   * Measured (docs/performance.md): a sandbox starting next to a running one
   * delays it several-fold on two cores (bwrap's namespace and mount setup
   * competes for the CPUs with the run and its teardown).
   * So while taken sandboxes are running and another is still idle, a refill
   * starts only when one of them ends (one per end, on a later turn of the
   * event loop than the caller's own continuation, so a caller's next take
   * comes first), and the pool tops up fully only once none is running; with
   * none left idle the next take would be cold anyway, so one refill starts now.
   * A run ends here at its wait(), or earlier when its owner delivered the
   * caller's result before the teardown (Code Mode's resultBeforeTeardown,
   * `_resultDelivered`): the refill's fork then overlaps that teardown, which
   * the caller's result does not wait for, instead of the caller's next run (docs/performance.md
   * › "Change: an early result starts the pool's refill"). A result that
   * waits for the teardown keeps the refill after it: there, the two would
   * compete on the result's path.
   */
  refillAfter(taken) {
    this.running.add(taken);
    const ended = () => {
      if (!this.running.delete(taken)) return;
      this.endedRuns += 1;
      this.scheduleRefill(0);
    };
    taken.wait().then(ended, ended);
    taken._whenResultDelivered?.().then(ended); // a remote host's execution has none
    if (this.idle.length === 0) this.scheduleRefill(0);
  }

  backoff() {
    this.failures += 1;
    return Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** Math.min(this.failures - 1, 16));
  }

  spawnOne() {
    const execution = this.spawnIsolated([...this.command], { ...this.options, invocationId: `pool-${crypto.randomUUID()}` });
    this.counters.spawned += 1;
    const spawnedAt = Date.now();
    // Nobody reads an idle sandbox's streams; a dying runner's last words must not be held forever.
    execution.stderr.on('error', () => {});
    execution.protocol.on('error', () => {});
    execution.wait().then(() => this.onEnd(execution, spawnedAt), (error) => this.onEnd(execution, spawnedAt, error));
    return execution;
  }

  /** A sandbox ended. If it was still idle, it died waiting: drop it and refill. */
  onEnd(execution, spawnedAt, error) {
    const wasIdle = this.live.delete(execution);
    if (!wasIdle) return;
    this.idle.splice(this.idle.indexOf(execution), 1);
    if (this.closed) return;
    this.counters.idleDeaths += 1;
    if (error) this.lastError = error;
    if (Date.now() - spawnedAt >= HEALTHY_LIFETIME_MS) {
      this.failures = 0;
      this.scheduleRefill(0);
    } else {
      this.scheduleRefill(this.backoff()); // died young: something is wrong with the spawn, do not spin
    }
  }

  /**
   * The oldest idle sandbox, removed from the pool for good; when none is idle,
   * a sandbox spawned now (cold). Either way a refill is scheduled.
   * @param {{deadlineMs?: number, signal?: AbortSignal}} [takeOptions]
   */
  take(takeOptions = {}) {
    const triggers = checkTakeOptions(takeOptions, this.maxDeadlineMs);
    if (this.closed) throw new CordonError('ERR_CORDON_CLOSED', 'the sandbox pool is closed');
    let execution = this.idle.shift();
    if (execution) {
      this.live.delete(execution);
      this.failures = 0;
    } else {
      execution = this.spawnOne(); // throws the real spawn error to the caller
      this.counters.coldTakes += 1;
    }
    execution._hold(true); // the caller's now: its run keeps the process alive
    this.counters.taken += 1;
    this.refillAfter(execution);
    // Counted from the take, the time the caller's work starts: an idle
    // sandbox is not running anybody's code.
    armStopTriggers(execution, triggers);
    return execution;
  }

  stats() {
    return {
      size: this.size,
      idle: this.idle.length,
      closed: this.closed,
      ...this.counters,
      lastError: this.lastError ? { code: this.lastError.code, message: this.lastError.message } : null,
    };
  }

  /** Stop every sandbox the pool still holds and wait until each has ended (receipt read, control root gone). */
  close() {
    if (this.closing) return this.closing;
    this.closed = true;
    if (this.refillTimer !== null) {
      clearTimeout(this.refillTimer);
      clearImmediate(this.refillTimer);
      this.refillTimer = null;
    }
    trackOpen(this, false);
    const held = [...this.live];
    this.idle.length = 0;
    this.live.clear();
    // Held while stopping: their ends must be seen (receipts read, control roots removed).
    for (const execution of held) execution._hold(true);
    this.closing = Promise.all(held.map((execution) => execution.stop())).then(() => undefined);
    return this.closing;
  }
}

/**
 * Bind the pool to a spawnIsolated: the addon's (index.js) or a remote host's
 * (lib/remote). lib/ never loads the addon itself. `maxDeadlineMs()` is the
 * ceiling of a take()'s deadlineMs, asked when one is given.
 * @param {{spawnIsolated: Function, maxDeadlineMs: () => number}} api
 */
function bindPool({ spawnIsolated, maxDeadlineMs }) {
  /**
   * @param {{command: string[], policy: object, workspace?: string, env?: object,
   *   stop?: object, bwrapPath?: string}} spawnOptions
   * @param {{size: number}} poolOptions
   */
  function createPool(spawnOptions, poolOptions) {
    const size = checkPoolOptions(poolOptions);
    const checked = checkSpawnOptions(spawnOptions);
    const pool = new SandboxPool({ spawnIsolated, maxDeadlineMs }, checked, size);
    pool.prime();
    return Object.freeze({
      /** A waiting sandbox, now the caller's alone (never handed out again); cold-spawned when none is idle. */
      take: (takeOptions) => pool.take(takeOptions),
      /** {size, idle, closed, spawned, taken, idleDeaths, spawnFailures, coldTakes, lastError} */
      stats: () => pool.stats(),
      /** Stops every sandbox still in the pool and resolves once each has ended. Idempotent. */
      close: () => pool.close(),
      size,
    });
  }
  return { createPool };
}

module.exports = { bindPool, MAX_POOL_SIZE };
