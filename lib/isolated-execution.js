'use strict';

// The JavaScript side of one sandboxed execution: the `protocol` Duplex (fd 3,
// read on this thread's own event loop by the addon: src/loop_reader.rs) and
// the `stderr` Readable (a launcher pump thread), and the idempotent
// wait()/stop() pair. Flow control: each Readable grants the
// native reader one chunk per _read() (fd 3's chunks are pulled from the loop:
// _onLoop); a write sends what the socket takes at once and keeps the rest
// (the caller's Buffer, not a copy) until fd 3 is writable, its callback
// waiting for the last byte; before fd 3 is polled here (or where a launcher
// thread reads it) at most the addon's WRITE_QUEUE_DEPTH writes are queued
// natively, and a write's callback waits until an earlier one was accepted by
// the kernel. Memory per stream stays ~ highWaterMark + 2 chunks.
//
// The seam is typed by the addon (src/lib.rs): event kinds, stream ids, write
// results and the write window are read from the binding, never restated here.
// Every event arrives as onEvent(kind, chunk, message, settled); `settled`
// carries the receipt as an object (it is never parsed here).

const { AsyncResource } = require('node:async_hooks');
const { Duplex, Readable } = require('node:stream');
const { CordonError } = require('./errors');

/** Stream buffers (bytes): one native read chunk. */
const HIGH_WATER_MARK = 64 * 1024;
/**
 * stderr kept while nothing consumes it (bytes); past it, chunks are dropped and
 * counted, so a program is never stalled by a stderr its caller never reads.
 */
const UNREAD_STDERR_KEPT_BYTES = HIGH_WATER_MARK;

let seam = null;
/**
 * What this module needs of the binding, read once. `writesInFlight`: writes
 * handed to the native writer before the next one waits for a WriteDone —
 * the launcher's whole queue (2 today), so JS can queue the next chunk while
 * the writer thread still sends the previous one instead of idling for a
 * thread hop per chunk (relay ~0.43x -> ~0.5x of a raw net.Socket), and never
 * more, so the stream never meets ERR_CORDON_WRITE_QUEUE_FULL.
 */
function seamOf(binding) {
  if (seam === null || seam.binding !== binding) {
    seam = Object.freeze({
      binding,
      // Frozen copies: the binding's enum objects are writable.
      EV: Object.freeze({ ...binding.EventKind }),
      STREAM: Object.freeze({ ...binding.StreamId }),
      WRITE: Object.freeze({ ...binding.WriteResult }),
      writesInFlight: binding.WRITE_QUEUE_DEPTH,
      LOOP: Object.freeze({ ...binding.LoopEvent }),
      // Writes keep a full socket's rest (NativeExecution.writeSome).
      writeSome: typeof binding.LoopEvent === 'object',
    });
  }
  return seam;
}

/** What the native handle threw for a write (a full queue: ERR_CORDON_WRITE_QUEUE_FULL), as a CordonError. */
function writeRefused(error) {
  return new CordonError(error?.code ?? 'ERR_CORDON_WRITE_QUEUE_FULL', String(error?.message ?? error), { cause: error });
}

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
    /** { rest, callback }: bytes a full socket had no room for (_writeSome). */
    this._rest = null;
  }

  _read() {
    this._execution._grant(this._execution._seam.STREAM.Protocol);
  }

  _write(chunk, encoding, callback) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding);
    const { _native: native, _seam: seam } = this._execution;
    if (native !== null && seam.writeSome) return this._writeSome(native, buffer, callback);
    let result;
    try {
      result = native === null ? seam.WRITE.Ended : native.write(buffer);
    } catch (error) {
      return callback(writeRefused(error)); // loud: the stream errors (docs/errors.md)
    }
    // Sent: the socket took it on this thread, no WriteDone follows. Ended: the
    // execution is over, the bytes are dropped (docs/errors.md).
    if (result !== seam.WRITE.Queued) return callback();
    this._queued(callback);
  }

  /**
   * What the socket takes at once goes now; a rest it had no room for stays
   * here until fd 3 is writable (LoopEvent.Writable), as net.Socket keeps it,
   * instead of a copy for the writer thread and a WriteDone hop. The callback
   * waits for the last byte, so later writes and the half-close stay behind.
   */
  _writeSome(native, buffer, callback, isRest = false) {
    let sent;
    try {
      // isRest: the launcher counted a kept rest when the run ended, so it does not count it again.
      sent = native.writeSome(buffer, isRest);
    } catch (error) {
      return callback(writeRefused(error));
    }
    if (sent === buffer.length) return callback();
    if (sent < 0) return this._queued(callback);
    const rest = buffer.subarray(sent);
    if (!native.awaitWritable()) {
      // Nothing will tell us: the writer takes the rest (and its WriteDone follows).
      let result;
      try {
        result = native.writeRest(rest);
      } catch (error) {
        return callback(writeRefused(error));
      }
      return result === this._execution._seam.WRITE.Queued ? this._queued(callback) : callback();
    }
    this._rest = { rest, callback };
  }

  /** fd 3 is writable again: write what it had no room for. */
  _writable() {
    const kept = this._rest;
    this._rest = null;
    if (kept === null) return;
    const native = this._execution._native;
    if (native === null) return kept.callback(); // the run is over: dropped
    this._writeSome(native, kept.rest, kept.callback, true);
  }

  /** A write handed to the native writer: a WriteDone follows. */
  _queued(callback) {
    this._writesInFlight += 1;
    if (this._writesInFlight < this._execution._seam.writesInFlight) return callback();
    this._pendingWrite = callback;
  }

  _final(callback) {
    const { _native: native, _seam: seam } = this._execution;
    let result;
    try {
      result = native === null ? seam.WRITE.Ended : native.shutdownWrite();
    } catch (error) {
      return callback(writeRefused(error));
    }
    if (result === seam.WRITE.Queued) this._pendingFinal = callback;
    else callback();
  }

  /**
   * destroy() (or an error that destroys the stream) half-closes fd 3, as
   * end() does, so a program reading to EOF ends instead of waiting for its
   * deadline (round 16r, R16r-1). A kept rest is dropped (the launcher still
   * knows it and counts it in protocolInDiscarded at the run's end); what the
   * writer thread already holds goes first. Reading stops, as for a paused
   * stream: the program's further writes wait in fd 3 until the run ends.
   */
  _destroy(error, callback) {
    const dropped = this._rest;
    this._rest = null;
    const native = this._execution._native;
    if (native !== null && !this.writableFinished && this._pendingFinal === null) {
      try {
        native.shutdownWrite();
      } catch {
        // The run is over or its writer refused: nothing is left to close.
      }
    }
    callback(error);
    dropped?.callback(); // its write ends, as one after the run's end does
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

  /** The run is over: a kept rest is dropped, as a write after the end is (docs/errors.md). */
  _dropRest() {
    const kept = this._rest;
    this._rest = null;
    kept?.callback();
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
    this._execution._grant(this._execution._seam.STREAM.Stderr);
  }
}

class IsolatedExecution {
  /** @param binding the addon (index.js loads it): the seam's enums and window come from it. */
  constructor(binding) {
    this._seam = seamOf(binding);
    this._native = null;
    this.protocol = new ProtocolStream(this);
    this.stderr = new StderrStream(this);
    this.pid = undefined;
    this.stderrDroppedBytes = 0;
    this._waitPromise = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    // wait() may never be called: a rejection must not become unhandled.
    this._waitPromise.catch(() => {});
    this._stopPromise = null;
    /** The receipt's head (docs/receipts.md › "Before the end") once the program was observed. */
    this.receiptHead = null;
    /** sha256 of the receipt's canonical JSON, from the launcher, once wait() resolves (index.d.ts). */
    this.receiptDigest = null;
    this._headPromise = new Promise((resolve) => { this._resolveHead = resolve; });
    this._deliveredPromise = new Promise((resolve) => { this._resolveDelivered = resolve; });
  }

  /**
   * Called once by spawnIsolated after the native launch returned. fd 3's
   * chunks are pulled: the addon calls _pullProtocol from the event loop when
   * a granted chunk waits (no event-queue hop, one copy: src/loop_reader.rs).
   */
  _attach(native) {
    this._native = native;
    this.pid = native.pid ?? undefined;
    // Bound to the caller's async context, as a threadsafe function's calls
    // are: the addon calls it from the loop with N-API's empty context, in
    // which AsyncLocalStorage lost the spawner's store and, on Node 22, one
    // run's enterWith() showed in another's listener (round 15r, R15r-3).
    native.pullProtocol?.(AsyncResource.bind((event, error) => this._onLoop(event, error), 'CordonProtocol'));
  }

  /**
   * Called by the addon from the event loop (LoopEvent): a granted chunk
   * waits on fd 3, fd 3 is writable again, or an earlier call threw (a 'data'
   * listener's), caught by N-API: rethrown from a callback of our own so it
   * is an uncaughtException as from any I/O callback.
   */
  _onLoop(event, error) {
    const { LOOP } = this._seam;
    if (event === LOOP.Readable) this._pullProtocol();
    else if (event === LOOP.Writable) this.protocol._writable();
    else if (event === LOOP.Thrown) setImmediate(() => { throw error; });
  }

  /** A granted chunk waits on fd 3: take it. */
  _pullProtocol() {
    const stream = this.protocol;
    // Up to 256 KiB when the chunk goes straight to 'data' listeners (nothing
    // buffered), else one 64 KiB chunk: what the stream keeps stays bounded.
    const atOnce = stream.readableFlowing === true && stream.readableLength === 0;
    const chunk = this._native?.readProtocol(atOnce);
    if (chunk) stream.push(chunk);
  }

  _grant(stream) {
    this._native?.grant(stream);
  }

  /**
   * Receives every launcher event, in order, on the JS thread, as the addon
   * calls it: (kind, chunk, message, settled) — see EventKind in src/lib.rs.
   */
  _onEvent(kind, chunk, message, settled) {
    const { EV } = this._seam;
    switch (kind) {
      case EV.ProtocolData: this.protocol.push(chunk); break;
      case EV.StderrData: this._stderrData(chunk); break;
      case EV.ProtocolEnd:
        this._end(this.protocol);
        // fd 3's end closes the loop's poll handle, and its writable watch with
        // it: a rest kept for that watch goes to the writer thread now (round
        // 15r, R15r-1: it was never sent once the sandbox half-closed fd 3).
        this.protocol._writable();
        break;
      case EV.StderrEnd: this._end(this.stderr); break;
      case EV.WriteDone: this.protocol._writeDone(); break;
      case EV.ShutdownDone: this.protocol._settleFinal(); break;
      case EV.Finished: this._finish(settled); break;
      case EV.Failed: this._fail(settled); break;
      case EV.Observed: this._observed(settled.receipt); break;
      default: break;
    }
  }

  /**
   * Ordinary backpressure once anything consumes stderr (readableFlowing is no
   * longer null). Before that, the first UNREAD_STDERR_KEPT_BYTES are buffered
   * and the rest dropped and counted, with a grant per chunk so the pump (and the
   * program writing) never waits on a reader that does not exist.
   */
  _stderrData(chunk) {
    const stream = this.stderr;
    if (stream.readableFlowing !== null) {
      stream.push(chunk);
      return;
    }
    if (stream.readableLength >= UNREAD_STDERR_KEPT_BYTES) {
      this.stderrDroppedBytes += chunk.length;
      this._grant(this._seam.STREAM.Stderr);
      return;
    }
    // A full buffer stops _read(): grant the next chunk here (it will be dropped if still unread).
    if (!stream.push(chunk)) this._grant(this._seam.STREAM.Stderr);
  }

  _end(stream) {
    if (!stream.readableEnded && !stream._cordonEnded) {
      stream._cordonEnded = true;
      stream.push(null);
    }
  }

  _observed(receipt) {
    this.receiptHead = receipt;
    this._resolveHead(receipt);
  }

  _settle() {
    this._resolveHead(null); // no-op when the head came
    this._end(this.protocol);
    this._end(this.stderr);
    this.protocol._settleWrite();
    this.protocol._dropRest();
    this.protocol._settleFinal();
  }

  /**
   * The launcher settles a run as Finished only with its receipt (one without
   * is Failed with ERR_CORDON_RECEIPT_UNAVAILABLE: crates/launcher/src/receipt/run_result.rs).
   */
  _finish({ returncode, signal, receipt, receiptDigest }) {
    // The launcher's digest of this receipt (sha256 of its canonical JSON): Code
    // Mode's audit record takes it instead of hashing the receipt on the JS thread.
    this.receiptDigest = receiptDigest ?? null;
    this._settle();
    this._resolve({
      returncode: returncode ?? null,
      signal: signal ?? null,
      receipt,
      // One per stream attempt of a mediated run (docs/network.md); [] otherwise.
      networkReceipts: Array.isArray(receipt.networkReceipts) ? receipt.networkReceipts : [],
    });
  }

  /** A missing receipt is `{}`, never a success. */
  _fail({ code, message, receipt }) {
    this._settle();
    this._reject(new CordonError(code, message, { details: { receipt: receipt ?? {} } }));
  }

  /**
   * Bytes written to `protocol` (their callbacks succeeded) after the run's
   * receipt was composed: the program had ended and the news was on its way.
   * Dropped, and in neither of the receipt's counters, which were final
   * (round 16b, R16b-1; docs/receipts.md).
   */
  get protocolDroppedBytes() {
    return this._native?.protocolDroppedBytes ?? 0;
  }

  /** Resolves after bwrap is reaped, both streams ended and the receipt was read. Same promise every call. */
  wait() {
    return this._waitPromise;
  }

  /**
   * Resolves with the receipt's head as soon as the launcher observed the
   * program (for a pooled sandbox: before it is taken), or with null when the
   * run settled without one. Same promise every call.
   */
  observed() {
    return this._headPromise;
  }

  /**
   * The owner's caller has its result before the run's end (Code Mode's
   * resultBeforeTeardown): nothing it waits for depends on the teardown.
   * lib/pool.js counts the run as ended for its refill from here.
   */
  _resultDelivered() {
    this._resolveDelivered();
  }

  /** Resolves at `_resultDelivered()`; never, if it is not called. */
  _whenResultDelivered() {
    return this._deliveredPromise;
  }

  /** Runs the stop ladder once; resolves when the execution has settled. Same promise every call. */
  stop() {
    this._requestStop('stop');
    return this._stopPromise;
  }

  /**
   * Whether this execution keeps the event loop alive (from spawn it does).
   * lib/pool.js lets go of idle sandboxes and holds a taken or stopped one.
   */
  _hold(held) {
    this._native?.hold(held);
  }

  /** Arms a deadline `ms` from now on the launcher's own timer (reason "deadline"). */
  _stopAfter(ms) {
    this._native?.stopAfter(ms);
  }

  _requestStop(reason) {
    if (this._stopPromise === null) {
      this._native?.stop(reason);
      this._stopPromise = this._waitPromise.then(() => undefined, () => undefined);
    }
  }
}

module.exports = { IsolatedExecution };
