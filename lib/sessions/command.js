'use strict';

// One command of a session as the host sees it: its output retained under
// one cap for stdout and stderr together, checked before a chunk is kept (a
// chunk past the cap is cut to what fits; nothing after it is kept), its
// timeout, and its single settlement. Output that arrives after it settled
// is dropped. The result shape is the same for every outcome.

const crypto = require('node:crypto');

class SessionCommand {
  /**
   * @param {{id: number, argv: string[], outputBytes: number, onStdout?: Function, onStderr?: Function}} spec
   */
  constructor(spec) {
    this.id = spec.id;
    this.argv = spec.argv;
    this.pid = undefined;
    this._outputBytes = spec.outputBytes;
    this._onStdout = spec.onStdout;
    this._onStderr = spec.onStderr;
    this._stdout = [];
    this._stderr = [];
    this._retained = 0;
    this._seen = 0;
    this.truncated = false;
    this.timedOut = false;
    this.startedAt = performance.now();
    this.settled = false;
    this.result = null;
    this._timer = null;
    /** Resolves the pending STDIN_ACK wait (one chunk in flight at most). */
    this._stdinAck = null;
    this.done = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this.done.catch(() => {});
  }

  /**
   * Retains what fits under the cap, then hands the whole chunk to the
   * caller's callback. Once the cap was crossed a chunk is only counted: the
   * agent sends nothing past the chunk that crossed it (R11-5), and one that
   * does anyway (it is untrusted) gets no copy and no callback.
   */
  output(stream, chunk) {
    if (this.settled) return;
    this._seen += chunk.length;
    if (this.truncated) return;
    const room = this._outputBytes - this._retained;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(0, room));
    if (kept.length < chunk.length) this.truncated = true;
    if (kept.length > 0) {
      (stream === 'stdout' ? this._stdout : this._stderr).push(Buffer.from(kept));
      this._retained += kept.length;
    }
    const callback = stream === 'stdout' ? this._onStdout : this._onStderr;
    try {
      callback?.(chunk);
    } catch {
      // A throwing callback is the caller's bug; it must not break the session's frame loop.
    }
  }

  armTimeout(ms, onTimeout) {
    if (ms === undefined) return;
    this._timer = setTimeout(() => {
      this.timedOut = true;
      onTimeout();
    }, ms);
    this._timer.unref?.();
  }

  /** A promise of the agent's STDIN_ACK for the chunk about to be sent (settling resolves it too). */
  expectStdinAck() {
    return new Promise((resolve) => {
      this._stdinAck = resolve;
    });
  }

  /** The agent acknowledged a chunk: false when none was in flight (a lie). */
  stdinAcked() {
    const resolve = this._stdinAck;
    if (resolve === null) return false;
    this._stdinAck = null;
    resolve();
    return true;
  }

  _releaseStdin() {
    this._stdinAck?.();
    this._stdinAck = null;
  }

  /** Settles once with `{exitCode, signal}` from the agent's EXIT. */
  finish({ exitCode, signal }) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this._timer);
    this._releaseStdin();
    this.result = Object.freeze({
      exitCode,
      signal,
      stdout: Buffer.concat(this._stdout).toString('utf8'),
      stderr: Buffer.concat(this._stderr).toString('utf8'),
      truncated: this.truncated,
      timedOut: this.timedOut,
      durationMs: performance.now() - this.startedAt,
      outputBytes: this._seen,
    });
    this._resolve(this.result);
  }

  fail(error) {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this._timer);
    this._releaseStdin();
    this._reject(error);
  }

  /** The receipt's line for this command: no argument text, only its digest. */
  receiptEntry() {
    const r = this.result;
    return Object.freeze({
      argvSha256: crypto.createHash('sha256').update(JSON.stringify(this.argv)).digest('hex'),
      exitCode: r?.exitCode ?? null,
      signal: r?.signal ?? null,
      timedOut: this.timedOut,
      durationMs: r === null ? null : Math.round(r.durationMs * 1000) / 1000,
      outputBytes: this._seen,
      truncated: this.truncated,
      settled: r !== null,
    });
  }
}

module.exports = { SessionCommand };
