'use strict';

// A bounded JSON Lines splitter for the runner → host direction. It holds at
// most one partial line of fewer than `maxLineBytes` bytes (plus the chunk in
// hand): a runner that never sends a newline, or sends a 1 GiB line, costs the
// host `maxLineBytes`, not 1 GiB. Past the bound it reports once and drops
// everything after — the caller decides the outcome and stops the sandbox.
// `onLine` may return a Promise (a frame decoded off the main thread): later
// lines wait, in order, until it settles; the chunks that arrive meanwhile are
// kept (the caller pauses its stream through onHold/onRelease, so that is at
// most what was already read).

class LineTooLongError extends Error {
  constructor(maxLineBytes) {
    super(`runner frame is not shorter than ${maxLineBytes} bytes`);
    this.maxLineBytes = maxLineBytes;
  }
}

class BoundedLineReader {
  /**
   * @param {{maxLineBytes: number, onLine: (line: Buffer) => void, onOverflow: (error: LineTooLongError) => void}} options
   *   a line's content (newline excluded) must be strictly shorter than maxLineBytes (code-bridge-v1 §1)
   */
  constructor({ maxLineBytes, onLine, onOverflow, onHold = () => {}, onRelease = () => {} }) {
    this.maxLineBytes = maxLineBytes;
    this.onLine = onLine;
    this.onOverflow = onOverflow;
    this.onHold = onHold;
    this.onRelease = onRelease;
    /** Chunks received while a line's Promise is pending. */
    this.held = null;
    this.pending = [];
    this.pendingBytes = 0;
    this.failed = false;
    this.stopped = false;
    /** Bytes seen after the reader stopped or failed: counted, never kept. */
    this.droppedBytes = 0;
  }

  /** Stop delivering lines (the outcome is decided); later bytes are counted and dropped. */
  stop() {
    this.stopped = true;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.held) {
      // Let the stream flow again so it can end; what it still carries is counted and dropped.
      this.droppedBytes += this.held.reduce((sum, chunk) => sum + chunk.length, 0);
      this.held = null;
      this.onRelease();
    }
  }

  /** @param {Buffer} chunk */
  push(chunk) {
    if (this.held) {
      this.held.push(chunk);
      return;
    }
    let start = 0;
    while (start < chunk.length) {
      if (this.failed || this.stopped) {
        this.droppedBytes += chunk.length - start;
        return;
      }
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (this.pendingBytes + (end - start) >= this.maxLineBytes) {
        this.fail();
        continue;
      }
      this.pending.push(chunk.subarray(start, end));
      this.pendingBytes += end - start;
      if (newline === -1) return;
      const line = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
      const handled = this.onLine(line);
      if (handled && typeof handled.then === 'function') {
        this.hold(handled, chunk.subarray(start));
        return;
      }
    }
  }

  /** Keep `rest` and every later chunk until `settled` settles, then go on in order. */
  hold(settled, rest) {
    this.held = rest.length > 0 ? [rest] : [];
    this.onHold();
    const release = () => {
      if (this.held === null) return; // stopped meanwhile (stop() released the stream)
      const backlog = this.held;
      this.held = null;
      while (backlog.length > 0) {
        this.push(backlog.shift());
        if (this.held !== null) { // another line went off-thread: the rest waits behind it
          this.held.push(...backlog);
          return;
        }
      }
      this.onRelease();
    };
    settled.then(release, release);
  }

  fail() {
    this.failed = true;
    this.pending = [];
    this.pendingBytes = 0;
    this.onOverflow(new LineTooLongError(this.maxLineBytes));
  }

  /** Bytes of a line that was started but never ended by a newline (EOF mid-frame). */
  get partialBytes() {
    return this.pendingBytes;
  }
}

module.exports = { BoundedLineReader, LineTooLongError };
