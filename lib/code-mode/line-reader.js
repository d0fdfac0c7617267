'use strict';

// A bounded JSON Lines splitter for the runner → host direction. It holds at
// most one partial line of fewer than `maxLineBytes` bytes (plus the chunk in
// hand): a runner that never sends a newline, or sends a 1 GiB line, costs the
// host `maxLineBytes`, not 1 GiB. Past the bound it reports once and drops
// everything after — the caller decides the outcome and stops the sandbox.

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
  constructor({ maxLineBytes, onLine, onOverflow }) {
    this.maxLineBytes = maxLineBytes;
    this.onLine = onLine;
    this.onOverflow = onOverflow;
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
  }

  /** @param {Buffer} chunk */
  push(chunk) {
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
      this.onLine(line);
    }
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
