'use strict';

// session-exec-v1 on the host side (docs/sessions.md): encoding the host's
// frames and decoding the agent's. The agent runs inside the sandbox, next
// to the commands it runs, so every frame it sends is hostile input: the
// decoder holds at most one frame (MAX_AGENT_FRAME_BYTES), checks the kind
// and the exact payload size each kind has, and throws a coded error at the
// first lie; the session then ends (session-sandbox.js).

const { CordonError } = require('../errors');

const HEADER_BYTES = 9;
const KIND_AND_ID_BYTES = 5;
/** Output chunk bound, the agent's MAX_CHUNK_BYTES (crates/exec-agent/src/frame.rs). */
const MAX_CHUNK_BYTES = 32 * 1024;
/** Largest agent frame body: an output chunk, or READY/EXIT with a short message. */
const MAX_AGENT_FRAME_BYTES = MAX_CHUNK_BYTES + KIND_AND_ID_BYTES;
/** Longest READY/EXIT text the host accepts (bytes). */
const MAX_MESSAGE_BYTES = 4096;

const KIND = Object.freeze({
  EXEC: 1, STDIN: 2, SIGNAL: 3,
  READY: 16, STARTED: 17, STDOUT: 18, STDERR: 19, EXIT: 20, STDIN_ACK: 21,
});
const EXIT_KIND = Object.freeze({ 0: 'exited', 1: 'signaled', 2: 'spawn-failed' });

function encodeFrame(kind, id, payload = Buffer.alloc(0)) {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(payload.length + KIND_AND_ID_BYTES, 0);
  header.writeUInt8(kind, 4);
  header.writeUInt32BE(id, 5);
  return Buffer.concat([header, payload]);
}

function lie(message) {
  return new CordonError('ERR_CORDON_SESSION_AGENT_FAILED', `the session's exec agent sent an invalid frame: ${message}`);
}

/** Checks one agent frame's payload against its kind; returns the decoded frame. */
function decodeBody(kind, id, payload) {
  switch (kind) {
    case KIND.READY:
      if (id !== 0 || payload.length > MAX_MESSAGE_BYTES) throw lie('READY with an id or an oversized payload');
      return { kind, id, text: payload.toString('utf8') };
    case KIND.STARTED:
      if (payload.length !== 4) throw lie(`STARTED payload of ${payload.length} bytes (4 expected)`);
      return { kind, id, pid: payload.readUInt32BE(0) };
    case KIND.STDOUT:
    case KIND.STDERR:
      if (payload.length === 0) throw lie('an empty output chunk');
      return { kind, id, chunk: payload };
    case KIND.STDIN_ACK:
      if (payload.length !== 0) throw lie(`STDIN_ACK payload of ${payload.length} bytes (0 expected)`);
      return { kind, id };
    case KIND.EXIT: {
      if (payload.length < 5 || payload.length > 5 + MAX_MESSAGE_BYTES) throw lie(`EXIT payload of ${payload.length} bytes`);
      const exitKind = EXIT_KIND[payload[0]];
      if (exitKind === undefined) throw lie(`EXIT kind ${payload[0]}`);
      return { kind, id, exitKind, value: payload.readInt32BE(1), message: payload.subarray(5).toString('utf8') };
    }
    default:
      throw lie(`unknown kind ${kind}`);
  }
}

/**
 * Feeds bytes; calls onFrame for each whole frame. Memory: at most one
 * frame plus one incoming chunk.
 */
class AgentFrameDecoder {
  constructor(onFrame) {
    this._onFrame = onFrame;
    this._pending = [];
    this._pendingBytes = 0;
  }

  push(chunk) {
    this._pending.push(chunk);
    this._pendingBytes += chunk.length;
    while (this._pendingBytes >= 4) {
      const head = this._peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      if (length < KIND_AND_ID_BYTES || length > MAX_AGENT_FRAME_BYTES) throw lie(`frame length ${length}`);
      if (this._pendingBytes < 4 + length) return;
      const frame = this._take(4 + length);
      this._onFrame(decodeBody(frame[4], frame.readUInt32BE(5), frame.subarray(HEADER_BYTES)));
    }
  }

  /** True when bytes of an unfinished frame are held (EOF then is a lie). */
  get partial() {
    return this._pendingBytes > 0;
  }

  _peek(bytes) {
    const all = this._pending.length === 1 ? this._pending[0] : Buffer.concat(this._pending);
    this._pending = [all];
    return all.length >= bytes ? all : Buffer.concat([all, Buffer.alloc(bytes - all.length)]);
  }

  _take(bytes) {
    const all = this._pending.length === 1 ? this._pending[0] : Buffer.concat(this._pending);
    const frame = Buffer.from(all.subarray(0, bytes));
    const rest = all.subarray(bytes);
    this._pending = rest.length > 0 ? [rest] : [];
    this._pendingBytes = rest.length;
    return frame;
  }
}

module.exports = { KIND, encodeFrame, AgentFrameDecoder, MAX_CHUNK_BYTES, MAX_AGENT_FRAME_BYTES };
