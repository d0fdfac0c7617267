'use strict';

// The cordon-remote-v1 framing (docs/remote.md): every frame is a u32
// big-endian length L (of what follows), one type byte, then L - 1 bytes of
// payload. Control frames carry a UTF-8 JSON object, data frames raw bytes.
// Pure: encoders return Buffers, the decoder turns bytes into frames and
// throws a coded error at the first violation (the caller then drops the
// connection: nothing after a bad frame can be trusted).

const { CordonError } = require('../errors');

/** Frame type bytes, as the protocol document numbers them. */
const TYPE = Object.freeze({
  hello: 0x01,
  welcome: 0x02,
  upload: 0x03,
  spawn: 0x04,
  started: 0x05,
  refused: 0x06,
  data: 0x10,
  end: 0x11,
  stderr: 0x12,
  stderrEnd: 0x13,
  credit: 0x14,
  stop: 0x20,
  exit: 0x21,
  ping: 0x30,
  pong: 0x31,
  receiptQuery: 0x40,
  receipts: 0x41,
});
const NAME_OF = new Map(Object.entries(TYPE).map(([name, byte]) => [byte, name]));
/** Frames whose payload is a JSON object. */
const CONTROL = new Set([TYPE.hello, TYPE.welcome, TYPE.upload, TYPE.spawn, TYPE.started, TYPE.refused, TYPE.stop, TYPE.exit, TYPE.receiptQuery, TYPE.receipts]);
/** Frames whose payload is empty. */
const EMPTY = new Set([TYPE.end, TYPE.stderrEnd]);

/** Control frame payload ceiling (bytes): the protocol's, both directions. */
const MAX_CONTROL_BYTES = 1024 * 1024;
/** Data frame payload ceiling (bytes): the protocol's, both directions. */
const MAX_DATA_BYTES = 64 * 1024;
/** The window each receiver grants the sender per stream at the start (bytes). */
const INITIAL_WINDOW_BYTES = 256 * 1024;
/** ping and pong carry exactly this many opaque bytes. */
const PING_BYTES = 8;
/** Credit stream ids. */
const STREAM = Object.freeze({ protocol: 0, stderr: 1 });
const HEADER_BYTES = 5;

function protocolError(message) {
  return new CordonError('ERR_CORDON_REMOTE_PROTOCOL', `the host broke cordon-remote-v1: ${message}`);
}

function frame(type, payload) {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length + 1, 0);
  out[4] = type;
  payload.copy(out, HEADER_BYTES);
  return out;
}

/** A control frame; throws ERR_CORDON_REMOTE_FRAME_TOO_LARGE past the ceiling (nothing is sent). */
function encodeControl(type, object) {
  const payload = Buffer.from(JSON.stringify(object), 'utf8');
  if (payload.length > MAX_CONTROL_BYTES) {
    throw new CordonError('ERR_CORDON_REMOTE_FRAME_TOO_LARGE', `a ${NAME_OF.get(type)} frame would be ${payload.length} bytes; cordon-remote-v1 allows ${MAX_CONTROL_BYTES}`);
  }
  return frame(type, payload);
}

/** A data or stderr frame of at most MAX_DATA_BYTES (callers split larger writes). */
function encodeData(type, bytes) {
  return frame(type, bytes);
}

function encodeEmpty(type) {
  return frame(type, Buffer.alloc(0));
}

function encodeCredit(stream, bytes) {
  const payload = Buffer.allocUnsafe(5);
  payload[0] = stream;
  payload.writeUInt32BE(bytes, 1);
  return frame(TYPE.credit, payload);
}

/** The payload of one frame, checked for its type: {type, name, json?, bytes?, stream?, credit?}. */
function parsePayload(type, payload) {
  const name = NAME_OF.get(type);
  if (CONTROL.has(type)) {
    let json;
    try {
      json = JSON.parse(payload.toString('utf8'));
    } catch {
      throw protocolError(`a ${name} frame is not JSON`);
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw protocolError(`a ${name} frame is not a JSON object`);
    return { type, name, json };
  }
  if (EMPTY.has(type)) {
    if (payload.length !== 0) throw protocolError(`a ${name} frame has a payload`);
    return { type, name };
  }
  if (type === TYPE.credit) {
    if (payload.length !== 5 || payload[0] > STREAM.stderr) throw protocolError('a credit frame is not 1 stream byte (0 or 1) + u32');
    return { type, name, stream: payload[0], credit: payload.readUInt32BE(1) };
  }
  if ((type === TYPE.ping || type === TYPE.pong) && payload.length !== PING_BYTES) throw protocolError(`a ${name} frame must carry ${PING_BYTES} bytes`);
  return { type, name, bytes: payload };
}

/**
 * Incremental decoder: push() each chunk read from the socket, get the whole
 * frames it completes. Memory is bounded by the largest legal frame: a
 * length over its type's ceiling is refused from the header alone.
 */
class FrameDecoder {
  constructor() {
    this.chunks = [];
    this.buffered = 0;
  }

  push(chunk) {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames = [];
    for (;;) {
      if (this.buffered < HEADER_BYTES) return frames;
      const head = this.peek(HEADER_BYTES);
      const length = head.readUInt32BE(0);
      const type = head[4];
      if (length === 0) throw protocolError('a frame of length 0');
      if (!NAME_OF.has(type)) throw protocolError(`unknown frame type 0x${type.toString(16).padStart(2, '0')}`);
      const limit = CONTROL.has(type) ? MAX_CONTROL_BYTES : MAX_DATA_BYTES;
      if (length - 1 > limit) throw protocolError(`a ${NAME_OF.get(type)} frame of ${length - 1} bytes (the limit is ${limit})`);
      if (this.buffered < 4 + length) return frames;
      const whole = this.take(4 + length);
      frames.push(parsePayload(type, whole.subarray(HEADER_BYTES)));
    }
  }

  peek(bytes) {
    if (this.chunks[0].length < bytes) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0].subarray(0, bytes);
  }

  take(bytes) {
    if (this.chunks[0].length < bytes) this.chunks = [Buffer.concat(this.chunks)];
    const first = this.chunks[0];
    const out = first.subarray(0, bytes);
    if (first.length === bytes) this.chunks.shift();
    else this.chunks[0] = first.subarray(bytes);
    this.buffered -= bytes;
    return out;
  }
}

module.exports = {
  TYPE, STREAM, MAX_CONTROL_BYTES, MAX_DATA_BYTES, INITIAL_WINDOW_BYTES, PING_BYTES,
  encodeControl, encodeData, encodeEmpty, encodeCredit, FrameDecoder,
};
