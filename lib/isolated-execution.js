'use strict';

// The JavaScript side of one sandboxed execution: the `protocol` Duplex and
// the `stderr` Readable fed by the launcher's pump threads, and the
// idempotent wait()/stop() pair. Flow control: each Readable grants the
// native reader one chunk per _read(); at most WRITES_IN_FLIGHT writes are
// queued natively, and a write's callback waits until an earlier one was
// accepted by the kernel. Memory per stream stays ~ highWaterMark + 2 chunks.

const { Duplex, Readable } = require('node:stream');
const { CordonError } = require('./errors');

// Event kinds and stream ids: mirror of src/lib.rs.
const EV = Object.freeze({
  PROTOCOL_DATA: 0,
  STDERR_DATA: 1,
  PROTOCOL_END: 2,
  STDERR_END: 3,
  WRITE_DONE: 4,
  SHUTDOWN_DONE: 5,
  FINISHED: 6,
  FAILED: 7,
});
const STREAM_PROTOCOL = 0;
const STREAM_STDERR = 1;
/** Stream buffers (bytes): one native read chunk. */
const HIGH_WATER_MARK = 64 * 1024;
/**
 * Writes handed to the native writer before the next one waits for a
 * WRITE_DONE (chunks): 2 lets JS queue the next chunk while the writer thread
 * is still sending the previous one, instead of idling for a thread hop per
 * chunk (relay ~0.43x -> ~0.5x of a raw net.Socket). It must not exceed the
 * launcher's WRITE_QUEUE_DEPTH (crates/launcher/src/supervisor.rs, 2): a full
 * queue refuses the write and its bytes would be dropped.
 */
const WRITES_IN_FLIGHT = 2;

class ProtocolStream extends Duplex {
  constructor(execution) {
    super({
      allowHalfOpen: true,
      readableHighWaterMark: HIGH_WATER_MARK,
      writableHighWaterMark: HIGH_WATER_MARK,
    });
    this._execution = execution;
    this._pendingWrite = null;
    this._pendingFinal = null;
    this._writesInFlight = 0;
  }

  _read() {
    this._execution._grant(STREAM_PROTOCOL);
  }

  _write(chunk, encoding, callback) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding);
    if (!this._execution._native?.write(buffer)) return callback(); // the execution is over: bytes dropped (docs/receipts.md)
    this._writesInFlight += 1;
    if (this._writesInFlight < WRITES_IN_FLIGHT) return callback();
    this._pendingWrite = callback;
  }

  _final(callback) {
    if (this._execution._native?.shutdownWrite()) this._pendingFinal = callback;
    else callback();
  }

  _writeDone() {
    this._writesInFlight = Math.max(0, this._writesInFlight - 1);
    this._settleWrite();
  }

  _settleWrite() {
    const callback = this._pendingWrite;
    this._pendingWrite = null;
    callback?.();
  }

  _settleFinal() {
    const callback = this._pendingFinal;
    this._pendingFinal = null;
    callback?.();
  }
}

class StderrStream extends Readable {
  constructor(execution) {
    super({ highWaterMark: HIGH_WATER_MARK });
    this._execution = execution;
  }

  _read() {
    this._execution._grant(STREAM_STDERR);
  }
}

class IsolatedExecution {
  constructor() {
    this._native = null;
    this.protocol = new ProtocolStream(this);
    this.stderr = new StderrStream(this);
    this.pid = undefined;
    this._cleanups = [];
    this._waitPromise = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    // wait() may never be called: a rejection must not become unhandled.
    this._waitPromise.catch(() => {});
    this._stopPromise = null;
  }

  /** Called once by spawnIsolated after the native launch returned. */
  _attach(native) {
    this._native = native;
    this.pid = native.pid ?? undefined;
  }

  _grant(stream) {
    this._native?.grant(stream);
  }

  /** Runs `fn` when the execution settles (timers, abort listeners). */
  _onSettle(fn) {
    this._cleanups.push(fn);
  }

  /** Receives every launcher event, in order, on the JS thread. */
  _onEvent(kind, buffer, text) {
    switch (kind) {
      case EV.PROTOCOL_DATA: this.protocol.push(buffer); break;
      case EV.STDERR_DATA: this.stderr.push(buffer); break;
      case EV.PROTOCOL_END: this._end(this.protocol); break;
      case EV.STDERR_END: this._end(this.stderr); break;
      case EV.WRITE_DONE: this.protocol._writeDone(); break;
      case EV.SHUTDOWN_DONE: this.protocol._settleFinal(); break;
      case EV.FINISHED: this._finish(JSON.parse(text)); break;
      case EV.FAILED: this._fail(JSON.parse(text)); break;
      default: break;
    }
  }

  _end(stream) {
    if (!stream.readableEnded && !stream._cordonEnded) {
      stream._cordonEnded = true;
      stream.push(null);
    }
  }

  _settle() {
    this._end(this.protocol);
    this._end(this.stderr);
    this.protocol._settleWrite();
    this.protocol._settleFinal();
    for (const cleanup of this._cleanups.splice(0)) cleanup();
  }

  _finish({ returncode, signal, receipt }) {
    this._settle();
    const parsed = parseReceipt(receipt);
    if (Object.keys(parsed).length === 0) {
      // The launcher fails such a run itself (ERR_CORDON_RECEIPT_UNAVAILABLE); this holds the
      // rule at the seam too: a run without a readable receipt is never a success.
      const status = signal ? `signal ${signal}` : `exit code ${returncode}`;
      this._reject(new CordonError('ERR_CORDON_RECEIPT_UNAVAILABLE',
        `the run's receipt is missing or unreadable (the program ended with ${status})`,
        { details: { receipt: {}, returncode: returncode ?? null, signal: signal ?? null } }));
      return;
    }
    this._resolve({
      returncode: returncode ?? null,
      signal: signal ?? null,
      receipt: parsed,
      // One per stream attempt of a mediated run (docs/network.md); [] otherwise.
      networkReceipts: Array.isArray(parsed.networkReceipts) ? parsed.networkReceipts : [],
    });
  }

  _fail({ code, message, receipt }) {
    this._settle();
    this._reject(new CordonError(code, message, { details: { receipt: parseReceipt(receipt) } }));
  }

  /** Resolves after bwrap is reaped, both streams ended and the receipt was read. Same promise every call. */
  wait() {
    return this._waitPromise;
  }

  /** Runs the stop ladder once; resolves when the execution has settled. Same promise every call. */
  stop() {
    this._requestStop('stop');
    return this._stopPromise;
  }

  _requestStop(reason) {
    if (this._stopPromise === null) {
      this._native?.stop(reason);
      this._stopPromise = this._waitPromise.then(() => undefined, () => undefined);
    }
  }
}

/** A missing or unreadable receipt is `{}`, never a success. */
function parseReceipt(text) {
  if (typeof text !== 'string') return {};
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

module.exports = { IsolatedExecution };
