'use strict';

// The two streams of a remote execution, shaped like the local ones
// (lib/isolated-execution.js): `protocol` (fd 3, a Duplex that half-closes
// on end()) and `stderr` (a Readable). Flow control is the wire's credit
// windows (docs/remote.md): a byte read from the host is credited back once
// the stream's consumer has taken it, so the host never has more than a
// window in flight; a write waits for the host's credit before it is sent.

const { Duplex, Readable } = require('node:stream');

/** Stream buffers (bytes): a data frame's ceiling, as a local stream's native read chunk. */
const HIGH_WATER_MARK = 64 * 1024;

class RemoteProtocolStream extends Duplex {
  constructor(execution) {
    super({ allowHalfOpen: true, readableHighWaterMark: HIGH_WATER_MARK, writableHighWaterMark: HIGH_WATER_MARK });
    this._execution = execution;
  }

  _read() {
    this._execution._released('protocol');
  }

  _write(chunk, encoding, callback) {
    this._execution._queueWrite(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, encoding), callback);
  }

  _final(callback) {
    this._endQueued = true;
    this._execution._queueEnd(callback);
  }

  /**
   * destroy() (or an error that destroys the stream, as a write after end())
   * half-closes fd 3 as end() does, as a local protocol stream does (round
   * 16r, R16r-1): a program reading to EOF ends instead of waiting for its
   * deadline, holding a host session slot (round 18b, R18b-1). Writes
   * already accepted are sent first; an end already queued is not repeated.
   */
  _destroy(error, callback) {
    if (!this._endQueued) {
      this._endQueued = true;
      this._execution._queueEnd(() => {});
    }
    callback(error);
  }
}

class RemoteStderrStream extends Readable {
  constructor(execution) {
    super({ highWaterMark: HIGH_WATER_MARK });
    this._execution = execution;
  }

  _read() {
    this._execution._released('stderr');
  }
}

module.exports = { RemoteProtocolStream, RemoteStderrStream, HIGH_WATER_MARK };
