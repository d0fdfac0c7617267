'use strict';

// One remote sandbox on one connection (docs/remote.md): the local
// execution's shape — `protocol`, `stderr`, `pid`, idempotent wait()/stop() —
// over cordon-remote-v1. Steps:
//   1. connect; hello → welcome (a close before welcome: the host refused us)
//   2. upload* → spawn → started | refused
//   3. data / end / stderr / stderr-end / credit / ping / pong, both ways
//   4. exit → wait() resolves what it carries; the host closes
// Every phase is bounded on the client's own clock, so no call can hang on a
// host that stopped answering: a silence watchdog (slackMs without a frame,
// while we ping every slackMs / 2 once running), the deadline (deadlineMs +
// slackMs) and the stop ladder (graceMs + forceMs + slackMs after stop()).
// The outcome is write-once: the first cause wins.

const crypto = require('node:crypto');
const { CordonError } = require('../errors');
const {
  TYPE, STREAM, MAX_DATA_BYTES, INITIAL_WINDOW_BYTES, PING_BYTES,
  encodeControl, encodeData, encodeEmpty, encodeCredit, FrameDecoder,
} = require('./frames');
const { openSocket } = require('./transport');
const { RemoteProtocolStream, RemoteStderrStream, HIGH_WATER_MARK } = require('./streams');
const { checkSignature } = require('./signature');
const { MAX_TIMER_MS } = require('./options');

/** stderr kept while nothing consumes it (bytes); past it, dropped and counted, as a local run does. */
const UNREAD_STDERR_KEPT_BYTES = HIGH_WATER_MARK;

function remoteError(code, message, details) {
  return new CordonError(code, message, details === undefined ? {} : { details });
}

class RemoteExecution {
  /**
   * @param {object} target a checked transport target (transport.js)
   * @param {object} request remoteSpawnRequest()'s result (options.js)
   * @param {{slackMs: number, hostPublicKey: import('node:crypto').KeyObject | null}} settings
   */
  constructor(target, request, { slackMs, hostPublicKey }) {
    this._target = target;
    this._request = request;
    this._slackMs = slackMs;
    this._hostPublicKey = hostPublicKey;
    this.protocol = new RemoteProtocolStream(this);
    this.stderr = new RemoteStderrStream(this);
    this.pid = undefined;
    this.stderrDroppedBytes = 0;
    /** Writes this client dropped because the run was over (docs/remote.md). */
    this.protocolDroppedBytes = 0;
    this._sentBytes = 0; // data bytes sent to the host, for exit.inbound
    /** The host's welcome and started frames: {host, tenant, ceilings, programs, invocationId, clamped}. */
    this.remote = null;
    this._phase = 'connecting'; // → handshake → spawning → running → settled
    this._connected = false;
    this._held = true;
    this._timers = new Map();
    this._sendWindow = INITIAL_WINDOW_BYTES;
    this._writes = []; // {buffer, callback} | {end: true, callback}
    /** Per stream from the host: bytes received and not yet credited back, and how many of those the consumer took. */
    this._inFlight = { protocol: 0, stderr: 0 };
    this._consumed = { protocol: 0, stderr: 0 };
    this._owed = { protocol: 0, stderr: 0 };
    this._stopReason = null;
    this._stopSent = false;
    this._stopPromise = null;
    this._waitPromise = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this._waitPromise.catch(() => {}); // wait() may never be called
  }

  /** Opens the connection and sends hello; called once by spawnIsolated. */
  _start() {
    const socket = openSocket(this._target);
    this._socket = socket;
    this._decoder = new FrameDecoder();
    socket.on('connect', () => { this._connected = true; });
    socket.on('data', (chunk) => this._onBytes(chunk));
    socket.on('error', (error) => { this._socketError ??= error; });
    socket.on('close', () => this._onClose());
    this._phase = 'handshake';
    this._send(encodeControl(TYPE.hello, { v: 1, ...(this._target.token !== undefined ? { token: this._target.token } : {}) }));
    this._heard();
  }

  // ---- receiving ----

  _onBytes(chunk) {
    if (this._phase === 'settled') return;
    let frames;
    try {
      frames = this._decoder.push(chunk);
    } catch (error) {
      this._settleError(error);
      return;
    }
    for (const frame of frames) {
      if (this._phase === 'settled') return;
      this._heard();
      this._onFrame(frame);
    }
  }

  _onFrame(frame) {
    const expect = (phase) => {
      if (this._phase === phase) return true;
      this._settleError(remoteError('ERR_CORDON_REMOTE_PROTOCOL', `the host broke cordon-remote-v1: a ${frame.name} frame in phase ${this._phase}`));
      return false;
    };
    switch (frame.type) {
      case TYPE.welcome: if (expect('handshake')) this._onWelcome(frame.json); break;
      case TYPE.started: if (expect('spawning')) this._onStarted(frame.json); break;
      case TYPE.refused: this._onRefused(frame.json); break;
      case TYPE.data: if (expect('running')) this._onStreamBytes('protocol', frame.bytes); break;
      case TYPE.stderr: if (expect('running')) this._onStreamBytes('stderr', frame.bytes); break;
      case TYPE.end: if (expect('running')) this._endStream(this.protocol); break;
      case TYPE.stderrEnd: if (expect('running')) this._endStream(this.stderr); break;
      case TYPE.credit: if (expect('running') && frame.stream === STREAM.protocol) this._onCredit(frame.credit); break;
      // The host pings only a running sandbox's client: a ping before `started` would keep the
      // silence bound from ever firing while the handshake never ends (round 6, R6-4).
      case TYPE.ping: if (expect('running')) this._send(encodeData(TYPE.pong, frame.bytes)); break;
      case TYPE.pong: break; // any frame counts as a sign of life (_heard)
      case TYPE.exit: if (expect('running')) this._onExit(frame.json); break;
      default:
        this._settleError(remoteError('ERR_CORDON_REMOTE_PROTOCOL', `the host broke cordon-remote-v1: it sent a ${frame.name} frame (client → host only)`));
    }
  }

  _onWelcome(welcome) {
    if (welcome.v !== 1) {
      this._settleError(remoteError('ERR_CORDON_REMOTE_PROTOCOL', `the host speaks cordon-remote-v${String(welcome.v)}; this client speaks v1`));
      return;
    }
    this.remote = { host: welcome.host ?? null, tenant: welcome.tenant ?? null, ceilings: welcome.ceilings ?? {}, programs: welcome.programs ?? [] };
    // A run without deadlineMs gets the host's ceiling (docs/remote.md § spawn.options): bound
    // the wait by it, or a host that keeps pinging holds wait() forever (round 6, R6-4).
    if (this._request.deadlineMs === undefined) {
      const ceiling = welcome.ceilings?.deadlineMs;
      if (!Number.isSafeInteger(ceiling) || ceiling < 1) {
        this._settleError(remoteError('ERR_CORDON_REMOTE_PROTOCOL', 'the host broke cordon-remote-v1: its welcome names no ceilings.deadlineMs'));
        return;
      }
      this._armDeadline(ceiling);
    }
    try {
      for (const upload of this._request.uploads) this._send(encodeControl(TYPE.upload, upload));
      this._send(encodeControl(TYPE.spawn, this._request.spawn));
    } catch (error) {
      this._settleError(error);
      return;
    }
    this._phase = 'spawning';
  }

  _onStarted(started) {
    this._phase = 'running';
    this.pid = Number.isSafeInteger(started.pid) ? started.pid : undefined;
    Object.assign(this.remote, { invocationId: started.invocationId ?? null, clamped: started.clamped ?? {} });
    this._heard(); // arms the ping
    if (this._stopReason !== null) this._sendStop();
    this._pump();
  }

  /** The host refused the run (admission, a bad policy, an unknown program): its code, and when to retry. */
  _onRefused(refused) {
    const code = typeof refused.code === 'string' && /^ERR_CORDON_[A-Z0-9_]+$/.test(refused.code) ? refused.code : 'ERR_CORDON_REMOTE_REFUSED';
    const message = typeof refused.message === 'string' ? refused.message : 'the host refused the run';
    const error = remoteError(code, `${message} (refused by the host)`, {
      refused: true,
      ...(Number.isFinite(refused.retryAfterMs) ? { retryAfterMs: refused.retryAfterMs } : {}),
    });
    if (Number.isFinite(refused.retryAfterMs)) error.retryAfterMs = refused.retryAfterMs;
    this._settleError(error);
  }

  _onExit(exit) {
    this._countInbound(exit.inbound);
    if (exit.error !== undefined) {
      const code = typeof exit.error?.code === 'string' ? exit.error.code : 'ERR_CORDON_SPAWN_FAILED';
      this._settle(() => this._reject(remoteError(code, String(exit.error?.message ?? 'the sandbox failed'), { receipt: exit.receipt ?? {} })));
      return;
    }
    const receipt = exit.receipt !== null && typeof exit.receipt === 'object' ? exit.receipt : {};
    const result = {
      returncode: exit.returncode ?? null,
      signal: exit.signal ?? null,
      receipt,
      networkReceipts: Array.isArray(exit.networkReceipts) ? exit.networkReceipts : [],
    };
    if (exit.signature !== undefined) result.signature = exit.signature;
    const forged = checkSignature(this._hostPublicKey, receipt, exit.signature);
    if (forged) {
      this._settleError(remoteError('ERR_CORDON_REMOTE_SIGNATURE_INVALID', forged, { receipt }));
      return;
    }
    this._settle(() => this._resolve(result));
  }

  /**
   * The host's count of our fd-3 bytes at its exit: those it never read
   * (still on the wire) and those it read but dropped outside the receipt
   * (after it was composed, or still held) are dropped, as a local run's
   * late writes are (round 17w, R17w-1). A host's figures can only move
   * bytes this client sent into the count, never more.
   */
  _countInbound(inbound) {
    const received = Number(inbound?.received);
    const dropped = Number(inbound?.dropped);
    if (!Number.isSafeInteger(received) || !Number.isSafeInteger(dropped) || received < 0 || dropped < 0) return;
    const unreceived = Math.max(0, this._sentBytes - received);
    this.protocolDroppedBytes += unreceived + Math.min(dropped, received, this._sentBytes);
  }

  _onClose() {
    if (this._phase === 'settled') return;
    const why = this._socketError ? `: ${this._socketError.message}` : '';
    if (!this._connected) {
      this._settleError(remoteError('ERR_CORDON_REMOTE_UNREACHABLE', `cannot connect to the host at ${this._target.label}${why}`));
    } else if (this._phase === 'handshake') {
      this._settleError(remoteError('ERR_CORDON_REMOTE_HANDSHAKE_FAILED',
        `the host at ${this._target.label} closed the connection before welcome: it did not accept your credentials (uid, certificate or token), it was at its handshake limit (busy, or another client holding connections open), or it is not a cordon host${why}`));
    } else {
      this._settleError(remoteError('ERR_CORDON_REMOTE_DISCONNECTED', `the connection to the host at ${this._target.label} was lost before the run's exit${why}; the host stops the sandbox (stop reason "disconnect")`));
    }
  }

  // ---- the two streams from the host ----

  /**
   * Ordinary backpressure once anything consumes the stream; an unread
   * stderr keeps UNREAD_STDERR_KEPT_BYTES and drops (counting) the rest, as
   * consumed at once, so a program never stalls on a reader that does not exist.
   */
  _onStreamBytes(name, bytes) {
    const stream = this[name];
    // The host may send at most the window this client granted: past it, a
    // hostile host would grow the provider's buffers without bound (round 6, R6-3).
    if (this._inFlight[name] + bytes.length > INITIAL_WINDOW_BYTES) {
      this._settleError(remoteError('ERR_CORDON_REMOTE_PROTOCOL', `the host broke cordon-remote-v1: ${name} bytes past the ${INITIAL_WINDOW_BYTES}-byte window this client granted`));
      return;
    }
    this._inFlight[name] += bytes.length;
    if (stream.destroyed || stream.readableEnded) {
      this._consumed[name] += bytes.length;
    } else if (name === 'stderr' && stream.readableFlowing === null) {
      if (stream.readableLength >= UNREAD_STDERR_KEPT_BYTES) this.stderrDroppedBytes += bytes.length;
      else stream.push(bytes);
      this._consumed[name] += bytes.length;
    } else if (stream.push(bytes)) {
      this._consumed[name] += bytes.length;
    } else {
      this._owed[name] += bytes.length;
    }
    this._maybeCredit(name);
  }

  /** The consumer took what was buffered (the stream's _read): what was held back is consumed. */
  _released(name) {
    this._consumed[name] += this._owed[name];
    this._owed[name] = 0;
    this._maybeCredit(name);
  }

  /**
   * Credit is returned only once the host's window is used up (it is then
   * waiting for it), not byte by byte: a host that has sent everything sends
   * `exit` and closes, and a credit written after that close would fail the
   * write (EPIPE) and lose the `exit` still unread behind it. A host waiting
   * for credit has not closed. Loopback makes the round trip per window cheap.
   */
  _maybeCredit(name) {
    const consumed = this._consumed[name];
    if (this._phase !== 'running' || consumed === 0 || this._inFlight[name] < INITIAL_WINDOW_BYTES) return;
    this._consumed[name] = 0;
    this._inFlight[name] -= consumed;
    this._send(encodeCredit(STREAM[name], consumed));
  }

  _endStream(stream) {
    if (!stream._cordonEnded) {
      stream._cordonEnded = true;
      stream.push(null);
    }
  }

  // ---- writes to the sandbox's fd 3 ----

  _queueWrite(buffer, callback) {
    if (this._phase === 'settled') {
      this.protocolDroppedBytes += buffer.length; // the run is over: dropped and counted, as a local run does
      return callback();
    }
    this._writes.push({ buffer, callback });
    return this._pump();
  }

  _queueEnd(callback) {
    if (this._phase === 'settled') return callback();
    this._writes.push({ end: true, callback });
    return this._pump();
  }

  _onCredit(bytes) {
    this._sendWindow += bytes;
    this._pump();
  }

  /** Sends queued writes while the host's window allows, in frames of at most MAX_DATA_BYTES. */
  _pump() {
    while (this._phase === 'running' && this._writes.length > 0) {
      const head = this._writes[0];
      if (head.end) {
        this._writes.shift();
        this._send(encodeEmpty(TYPE.end));
        head.callback();
        continue;
      }
      if (this._sendWindow <= 0) return;
      const bytes = Math.min(head.buffer.length, MAX_DATA_BYTES, this._sendWindow);
      this._send(encodeData(TYPE.data, head.buffer.subarray(0, bytes)));
      this._sentBytes += bytes;
      this._sendWindow -= bytes;
      head.buffer = head.buffer.subarray(bytes);
      if (head.buffer.length === 0) {
        this._writes.shift();
        head.callback();
      }
    }
  }

  _send(bytes) {
    if (this._socket && !this._socket.destroyed) this._socket.write(bytes);
  }

  // ---- bounds ----

  _timer(name, ms, fn) {
    clearTimeout(this._timers.get(name));
    // Past 2^31-1 ms Node fires at once (TimeoutOverflowWarning): deadlineMs + slackMs can be.
    const timer = setTimeout(fn, Math.min(ms, MAX_TIMER_MS));
    if (!this._held) timer.unref();
    this._timers.set(name, timer);
  }

  /**
   * A frame arrived: the host is alive; it must say something again within
   * slackMs. While running, a host silent for slackMs / 2 gets a ping, so a
   * live one always has something to answer in time (and a chatty one is
   * never pinged: fewer writes that could meet a host that just closed).
   */
  _heard() {
    this._timer('silence', this._slackMs, () => this._timeout(`the host at ${this._target.label} sent nothing for ${this._slackMs} ms (slackMs) in phase ${this._phase}`));
    if (this._phase !== 'running') return;
    this._timer('ping', Math.max(1, Math.floor(this._slackMs / 2)), () => this._send(encodeData(TYPE.ping, crypto.randomBytes(PING_BYTES))));
  }

  /** Bounds the run at `ms` + slackMs from now (deadlineMs at spawn, or a pooled take's). */
  _armDeadline(ms) {
    this._timer('deadline', ms + this._slackMs, () => this._timeout(`no exit from the host within deadlineMs ${ms} + slackMs ${this._slackMs}`));
  }

  _timeout(message) {
    this._settleError(remoteError('ERR_CORDON_REMOTE_TIMEOUT', `${message}; the connection is closed (the host stops the sandbox: stop reason "disconnect")`));
  }

  // ---- settling ----

  _settleError(error) {
    this._settle(() => this._reject(error));
  }

  /**
   * Once: drop every timer and the connection, settle, then end both streams
   * and release pending writes. After an exit the host has already ended
   * both streams. After a failure, the streams end on the next turn: a
   * stream's 'end' (a process.nextTick) would otherwise reach a caller
   * before the rejection (a microtask), and Code Mode would report a runner
   * that closed its protocol instead of the cause (unreachable, refused, …).
   */
  _settle(settle) {
    if (this._phase === 'settled') return;
    this._phase = 'settled';
    for (const timer of this._timers.values()) clearTimeout(timer);
    this._timers.clear();
    this._socket?.destroy();
    settle();
    setImmediate(() => {
      this._endStream(this.protocol);
      this._endStream(this.stderr);
      for (const write of this._writes.splice(0)) {
        this.protocolDroppedBytes += write.buffer?.length ?? 0;
        write.callback();
      }
    });
  }

  // ---- the local execution's API ----

  /** Resolves {returncode, signal, receipt, networkReceipts} from the host's exit frame. Same promise every call. */
  wait() {
    return this._waitPromise;
  }

  /** Runs the host's stop ladder once; resolves when the execution has settled. Same promise every call. */
  stop() {
    this._requestStop('stop');
    return this._stopPromise;
  }

  _requestStop(reason) {
    if (this._stopPromise !== null) return;
    this._stopPromise = this._waitPromise.then(() => undefined, () => undefined);
    this._stopReason = reason;
    if (this._phase === 'running') this._sendStop();
  }

  _sendStop() {
    if (this._stopSent) return;
    this._stopSent = true;
    this._send(encodeControl(TYPE.stop, { reason: this._stopReason }));
    const { graceMs, forceMs } = this._request.stop;
    const bound = graceMs + forceMs + this._slackMs;
    this._timer('stop', bound, () => this._timeout(`no exit from the host within ${bound} ms of stop() (graceMs + forceMs + slackMs)`));
  }

  /** lib/pool.js: an idle pooled sandbox must not keep the process alive; a taken one must. */
  _hold(held) {
    this._held = held;
    if (held) this._socket?.ref();
    else this._socket?.unref();
    for (const timer of this._timers.values()) {
      if (held) timer.ref();
      else timer.unref();
    }
  }

  /** lib/stop-triggers.js: a pooled take's deadline, counted from the take. */
  _stopAfter(ms) {
    this._timer('take-deadline', ms, () => this._requestStop('deadline'));
    this._armDeadline(ms);
  }
}

module.exports = { RemoteExecution };
