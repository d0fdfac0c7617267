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
    this._execution._queueEnd(callback);
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
