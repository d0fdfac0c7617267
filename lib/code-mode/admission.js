'use strict';

// Admission control: at most `maxConcurrent` sandboxes alive, at most
// `maxQueued` runs waiting, each for at most `queueTimeoutMs`. Past either
// bound a run is refused at once with ERR_CORDON_ADMISSION rather than piling
// up memory and processes. The caller releases a slot only once its sandbox is
// fully gone (wait() settled), so "in flight" counts processes, not promises.

const { CordonError } = require('../errors');

const DEFAULT_ADMISSION = Object.freeze({ maxConcurrent: 4, maxQueued: 16, queueTimeoutMs: 30000 });
const ADMISSION_RANGES = Object.freeze({
  maxConcurrent: [1, 1024],
  maxQueued: [0, 100000],
  queueTimeoutMs: [1, 3600 * 1000],
});

class AdmissionAbortedError extends Error {
  constructor() {
    super('the run was cancelled while waiting for admission');
    this.name = 'AbortError';
  }
}

function resolveAdmission(options) {
  if (options === undefined) return DEFAULT_ADMISSION;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'admission must be an object such as {maxConcurrent: 4}');
  }
  const resolved = { ...DEFAULT_ADMISSION };
  for (const key of Object.keys(options)) {
    const range = ADMISSION_RANGES[key];
    if (!Object.prototype.hasOwnProperty.call(ADMISSION_RANGES, key)) {
      throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `unknown admission option "${key}"`, { details: { key } });
    }
    const value = options[key];
    if (!Number.isSafeInteger(value) || value < range[0] || value > range[1]) {
      throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `admission.${key} must be an integer from ${range[0]} to ${range[1]}`, { details: { key, value } });
    }
    resolved[key] = value;
  }
  return Object.freeze(resolved);
}

class Admission {
  constructor(options) {
    this.options = resolveAdmission(options);
    this.active = 0;
    this.queue = [];
  }

  /** A release function that frees the slot once; later calls do nothing. */
  makeRelease() {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.admitQueued();
    };
  }

  admitQueued() {
    while (this.active < this.options.maxConcurrent && this.queue.length > 0) {
      const waiter = this.queue.shift();
      waiter.settle();
      this.active += 1;
      waiter.resolve(this.makeRelease());
    }
  }

  /**
   * Wait for a slot.
   * @param {AbortSignal} [signal] aborting while queued rejects with an AbortError
   * @returns {Promise<() => void>} the slot's release function
   */
  acquire(signal) {
    const { maxConcurrent, maxQueued, queueTimeoutMs } = this.options;
    if (this.active < maxConcurrent && this.queue.length === 0) {
      this.active += 1;
      return Promise.resolve(this.makeRelease());
    }
    if (this.queue.length >= maxQueued) {
      return Promise.reject(new CordonError('ERR_CORDON_ADMISSION',
        `admission refused: ${this.active} runs in flight (maxConcurrent ${maxConcurrent}) and ${this.queue.length} queued (maxQueued ${maxQueued})`,
        { details: { reason: 'queue-full', active: this.active, queued: this.queue.length } }));
    }
    return new Promise((resolve, reject) => this.enqueue(resolve, reject, signal, queueTimeoutMs));
  }

  enqueue(resolve, reject, signal, queueTimeoutMs) {
    const waiter = { resolve };
    const leave = (error) => {
      const index = this.queue.indexOf(waiter);
      if (index !== -1) this.queue.splice(index, 1);
      waiter.settle();
      reject(error);
    };
    const timer = setTimeout(() => leave(new CordonError('ERR_CORDON_ADMISSION',
      `admission refused: no slot freed within queueTimeoutMs ${queueTimeoutMs}`,
      { details: { reason: 'queue-timeout', queueTimeoutMs } })), queueTimeoutMs);
    const onAbort = () => leave(new AdmissionAbortedError());
    signal?.addEventListener('abort', onAbort, { once: true });
    waiter.settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    this.queue.push(waiter);
  }

  /** Current load, for tests and metrics. */
  stats() {
    return { active: this.active, queued: this.queue.length, ...this.options };
  }
}

module.exports = { Admission, AdmissionAbortedError, DEFAULT_ADMISSION };
