'use strict';

// code-bridge-v1 frames: encoding what the host sends and validating what the
// runner sends. Validation here is about one frame's shape; whether a frame
// may arrive *now* (order, id correlation) is the execution's job (execution.js).
// A frame that fails either check is a protocol failure, never a guess.

const { findStructureProblem } = require('./json-structure');

const VERSION = 'code-bridge-v1';
const RUNNER_FRAME_TYPES = new Set(['ready', 'tool.call', 'console', 'fetch.request', 'fetch.abort', 'execution.result']);
/** The fetch extension's request shape (docs/runner.md "fetch"): bounds a runner cannot exceed. */
const FETCH_METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
const FETCH_HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]{1,256}$/;
const FORBIDDEN_FETCH_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const FETCH_REDIRECTS = new Set(['follow', 'manual', 'error']);
const MAX_FETCH_URL_CHARS = 64 * 1024;
const MAX_FETCH_HEADERS = 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Console levels of the console extension (docs/runner.md). */
const CONSOLE_LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);
/** Error kinds a runner may report (spec §9); anything else is a protocol failure. */
const RUNNER_ERROR_KINDS = new Set(['cancelled', 'timeout', 'javascript', 'memory', 'result', 'result_limit', 'limit', 'internal']);
/** A runner's error message is shown to people; it is cut at this many characters. */
const MAX_ERROR_MESSAGE_CHARS = 8 * 1024;

class FrameError extends Error {
  /** @param {string} code protocol failure code, e.g. BAD_FRAME, UNEXPECTED_FRAME */
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/**
 * The JSON text a parsed frame came from, kept on the frame (non-enumerable) so a
 * validator thread can be handed a string instead of a structured clone (validation.js).
 */
const FRAME_TEXT = Symbol('cordon.frameText');

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function encodeFrame(type, fields) {
  return `${JSON.stringify({ version: VERSION, type, ...fields })}\n`;
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** UTF-8 text of a runner line, or a FrameError (NUL bytes and invalid UTF-8 are refused). */
function decodeText(line) {
  if (line.includes(0)) throw new FrameError('BAD_FRAME', 'runner frame contains a NUL byte');
  try {
    return strictUtf8.decode(line);
  } catch (error) {
    throw new FrameError('BAD_FRAME', `runner sent a line that is not UTF-8 JSON: ${error.message.slice(0, 200)}`);
  }
}

/**
 * JSON.parse + the checks JSON.parse does not make; a frame object with a known `type`.
 * @param {string} text
 * @param {{structureChecked?: boolean}} [options] structureChecked: a validator thread already ran
 *   findStructureProblem over this exact text (frame-decoder.js)
 * @throws {FrameError}
 */
function parseFrameText(text, { structureChecked = false } = {}) {
  let frame;
  try {
    frame = JSON.parse(text);
  } catch (error) {
    throw new FrameError('BAD_FRAME', `runner sent a line that is not UTF-8 JSON: ${error.message.slice(0, 200)}`);
  }
  if (!isObject(frame)) throw new FrameError('BAD_FRAME', 'runner frame is not a JSON object');
  // Duplicate keys (which JSON.parse hides) and stack-overflowing depth, as the runner refuses them (§1).
  const problem = structureChecked ? null : findStructureProblem(text);
  if (problem) throw new FrameError('BAD_FRAME', problem);
  if (frame.version !== VERSION) throw new FrameError('BAD_FRAME', `runner frame version is ${JSON.stringify(frame.version)?.slice(0, 64)}, expected "${VERSION}"`);
  if (!RUNNER_FRAME_TYPES.has(frame.type)) {
    throw new FrameError('UNEXPECTED_FRAME', `runner sent a frame of unknown type ${JSON.stringify(frame.type)?.slice(0, 64)}`);
  }
  Object.defineProperty(frame, FRAME_TEXT, { value: text });
  return frame;
}

/**
 * Decode one runner line into a frame object with a known `type`.
 * @param {Buffer} line the bytes between two newlines
 * @throws {FrameError}
 */
function parseFrame(line) {
  return parseFrameText(decodeText(line));
}

/** `executionId` is copied into every runner frame (§4); when present it must be ours. */
function checkExecutionId(frame, executionId, required) {
  if (frame.executionId === undefined && !required) return;
  if (frame.executionId !== executionId) {
    throw new FrameError('WRONG_EXECUTION_ID', `runner ${frame.type} frame carries executionId ${JSON.stringify(frame.executionId)?.slice(0, 80)}, expected ${JSON.stringify(executionId)}`);
  }
}

function validateReady(frame) {
  if (!isObject(frame.effectiveLimits)) throw new FrameError('BAD_FRAME', 'ready frame has no effectiveLimits object');
  if (frame.runnerVersion !== undefined && typeof frame.runnerVersion !== 'string') {
    throw new FrameError('BAD_FRAME', 'ready.runnerVersion is not a string');
  }
}

function validateToolCall(frame) {
  if (!Number.isSafeInteger(frame.id) || frame.id < 1) throw new FrameError('BAD_FRAME', 'tool.call id is not an integer ≥ 1');
  if (typeof frame.name !== 'string') throw new FrameError('BAD_FRAME', 'tool.call name is not a string');
  if (!isObject(frame.arguments)) throw new FrameError('BAD_FRAME', 'tool.call arguments is not a JSON object');
}

function validateFetchRequest(frame) {
  if (!Number.isSafeInteger(frame.id) || frame.id < 1) throw new FrameError('BAD_FRAME', 'fetch.request id is not an integer ≥ 1');
  const { request } = frame;
  if (!isObject(request)) throw new FrameError('BAD_FRAME', 'fetch.request request is not an object');
  if (typeof request.method !== 'string' || !FETCH_METHOD.test(request.method)) throw new FrameError('BAD_FRAME', 'fetch.request method is not an HTTP token');
  // The runner refuses these (as WHATWG fetch does); the host does not rely on it.
  if (FORBIDDEN_FETCH_METHODS.has(request.method.toUpperCase())) throw new FrameError('BAD_FRAME', `fetch.request method ${request.method} is forbidden`);
  if (typeof request.url !== 'string' || request.url.length > MAX_FETCH_URL_CHARS) throw new FrameError('BAD_FRAME', `fetch.request url is not a string of at most ${MAX_FETCH_URL_CHARS} characters`);
  if (!FETCH_REDIRECTS.has(request.redirect)) throw new FrameError('BAD_FRAME', 'fetch.request redirect is not follow, manual or error');
  const { headers } = request;
  // Names must be what the runner's Headers makes them, lower-case tokens: the host drops and
  // replaces headers it owns (host, content-length, transfer-encoding, …, authorization on a
  // cross-origin redirect) by exact name, and a program in the sandbox can make the runner send
  // anything (it can replace String.prototype.toLowerCase), so the host checks, not trusts.
  const pair = (entry) => Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string' && typeof entry[1] === 'string'
    && FETCH_HEADER_NAME.test(entry[0]) && !/[\0\r\n]/.test(entry[1]);
  if (!Array.isArray(headers) || headers.length > MAX_FETCH_HEADERS || !headers.every(pair)) {
    throw new FrameError('BAD_FRAME', `fetch.request headers are not at most ${MAX_FETCH_HEADERS} [name, value] string pairs with lower-case token names and values without CR, LF or NUL`);
  }
  if (request.body !== undefined && (typeof request.body !== 'string' || !BASE64.test(request.body))) throw new FrameError('BAD_FRAME', 'fetch.request body is not base64');
}

function validateFetchAbort(frame) {
  if (!Number.isSafeInteger(frame.id) || frame.id < 1) throw new FrameError('BAD_FRAME', 'fetch.abort id is not an integer ≥ 1');
}

function validateConsole(frame) {
  if (!CONSOLE_LEVELS.has(frame.level)) throw new FrameError('BAD_FRAME', `console level ${JSON.stringify(frame.level)?.slice(0, 64)} is unknown`);
  if (typeof frame.text !== 'string') throw new FrameError('BAD_FRAME', 'console text is not a string');
  if (!Number.isSafeInteger(frame.elapsedMs) || frame.elapsedMs < 0) throw new FrameError('BAD_FRAME', 'console elapsedMs is not an integer ≥ 0');
  if (frame.truncated !== undefined && typeof frame.truncated !== 'boolean') throw new FrameError('BAD_FRAME', 'console truncated is not a boolean');
}

function validateResult(frame) {
  if (typeof frame.ok !== 'boolean') throw new FrameError('BAD_FRAME', 'execution.result ok is not a boolean');
  if (frame.ok) {
    if (!Object.prototype.hasOwnProperty.call(frame, 'result')) throw new FrameError('BAD_FRAME', 'execution.result with ok:true has no result');
    return;
  }
  const { error } = frame;
  if (!isObject(error) || typeof error.kind !== 'string' || typeof error.message !== 'string') {
    throw new FrameError('BAD_FRAME', 'execution.result with ok:false has no {kind, message} error');
  }
  if (!RUNNER_ERROR_KINDS.has(error.kind)) throw new FrameError('BAD_FRAME', `execution.result error kind ${JSON.stringify(error.kind).slice(0, 64)} is unknown`);
  if (error.code !== undefined && typeof error.code !== 'string') throw new FrameError('BAD_FRAME', 'execution.result error code is not a string');
}

/**
 * Validate a parsed frame's fields for its type.
 * @param {object} frame from parseFrame
 * @param {string} executionId the id the host sent in `execute`
 * @throws {FrameError}
 */
function validateFrame(frame, executionId) {
  switch (frame.type) {
    case 'ready':
      checkExecutionId(frame, executionId, true);
      return validateReady(frame);
    case 'tool.call':
      checkExecutionId(frame, executionId, false);
      return validateToolCall(frame);
    case 'console':
      checkExecutionId(frame, executionId, false);
      return validateConsole(frame);
    case 'fetch.request':
      checkExecutionId(frame, executionId, false);
      return validateFetchRequest(frame);
    case 'fetch.abort':
      checkExecutionId(frame, executionId, false);
      return validateFetchAbort(frame);
    default:
      checkExecutionId(frame, executionId, true);
      return validateResult(frame);
  }
}

/** The runner's error, cut to a bounded message. */
function runnerError(error) {
  const out = { kind: error.kind, message: error.message.slice(0, MAX_ERROR_MESSAGE_CHARS) };
  if (error.code !== undefined) out.code = error.code.slice(0, 128);
  return out;
}

module.exports = { VERSION, FRAME_TEXT, FrameError, encodeFrame, parseFrame, parseFrameText, decodeText, validateFrame, runnerError };
