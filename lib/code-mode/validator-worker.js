'use strict';

// A validator thread (validator-pool.js). It receives one request at a time:
//   {seq, kind: 'validate', role: 'input', schemaId, schemaText, draft, strict, namedKeys, name, frameText | value}
//   {seq, kind: 'validate', role: 'output', …, valueText}
//     → {seq, ok: true} or {seq, ok: false, code, message}
//   {seq, kind: 'decode', line}
//     → {seq, ok: true, text, weight: {values, distinctKeys}, summary: {version, type, id, name, executionId}}
//       or {seq, ok: false, code, message} Schemas are
// compiled on first sight and cached by id; the cache is dropped whole past
// MAX_CACHED_SCHEMAS so a process creating many Code Mode instances cannot
// grow a worker without bound. The pool terminates a worker that overruns its
// budget, so nothing here needs to be fast — only correct.

const fs = require('node:fs');
const { parentPort } = require('node:worker_threads');
const { createAjv, addExtensionKeywords, loadAllDrafts } = require('./schema-compiler');
const { checkArguments, checkResult } = require('./argument-check');
const { decodeText, FrameError } = require('./frames');
const { findStructureProblem } = require('./json-structure');
const { frameWeight } = require('./frame-weight');

const MAX_CACHED_SCHEMAS = 1024;

/** This thread's kernel id (Linux), so the pool can read its CPU time; null elsewhere. */
function threadId() {
  try {
    const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null; // not Linux, or /proc not mounted
  }
}

// Not reniced: at nice 10 the event-loop test measured longer off-CPU stalls of the main
// thread on a loaded machine (most likely hand-offs with a starved thread, e.g. its message
// port); the thread's CPU is bounded by the pool's budget instead.
const TID = threadId();

const compiled = new Map();
const compilers = new Map();

function compilerFor(draft, strict) {
  const key = `${draft}:${strict}`;
  if (!compilers.has(key)) compilers.set(key, createAjv(draft, { strict }));
  return compilers.get(key);
}

function compile({ schemaId, schemaText, draft, strict, namedKeys }) {
  if (compiled.size >= MAX_CACHED_SCHEMAS) {
    compiled.clear();
    compilers.clear();
  }
  const schema = JSON.parse(schemaText);
  let ajv = compilerFor(draft, strict);
  let validate;
  try {
    if (strict) addExtensionKeywords(ajv, schema);
    validate = ajv.compile(schema);
  } catch {
    // Another instance's schema with the same $id lives in the shared compiler: use a fresh one.
    ajv = createAjv(draft, { strict });
    if (strict) addExtensionKeywords(ajv, schema);
    validate = ajv.compile(schema);
  }
  const entry = { validate, namedKeys: new Set(namedKeys) };
  compiled.set(schemaId, entry);
  return entry;
}

/** Everything about a large line that could refuse it, so the main thread parses only what it will keep. */
function decode({ line }) {
  try {
    const text = decodeText(Buffer.from(line.buffer, line.byteOffset, line.byteLength));
    let frame;
    try {
      frame = JSON.parse(text);
    } catch (error) {
      return { ok: false, code: 'BAD_FRAME', message: `runner sent a line that is not UTF-8 JSON: ${error.message.slice(0, 200)}` };
    }
    if (frame === null || typeof frame !== 'object' || Array.isArray(frame)) return { ok: false, code: 'BAD_FRAME', message: 'runner frame is not a JSON object' };
    const problem = findStructureProblem(text);
    if (problem) return { ok: false, code: 'BAD_FRAME', message: problem };
    const str = (value) => (typeof value === 'string' ? value.slice(0, 1024) : undefined);
    const summary = { version: str(frame.version), type: str(frame.type), id: frame.id, name: str(frame.name), executionId: str(frame.executionId) };
    return { ok: true, text, weight: frameWeight(frame), summary };
  } catch (error) {
    if (error instanceof FrameError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

function handle(request) {
  if (request.kind === 'decode') return decode(request);
  const entry = compiled.get(request.schemaId) ?? compile(request);
  if (request.role === 'output') return checkResult(entry, JSON.parse(request.valueText), request.name);
  const args = request.frameText === undefined ? request.value : JSON.parse(request.frameText).arguments;
  return checkArguments(entry, args, request.name);
}

// Modules are loaded (Ajv included: schema-compiler loads it lazily on the main thread, never
// here, where a request's budget must not pay for it): from now on the pool counts each
// request's budget.
loadAllDrafts();
parentPort.postMessage({ ready: true, tid: TID });

parentPort.on('message', (request) => {
  let reply;
  try {
    reply = handle(request);
  } catch (error) {
    const message = String(error?.message ?? error).slice(0, 300);
    reply = request.kind === 'decode'
      ? { ok: false, code: 'BAD_FRAME', message: `runner frame could not be decoded: ${message}` }
      : { ok: false, code: request.role === 'output' ? 'RESULT_SCHEMA_MISMATCH' : 'INVALID_ARGUMENTS', message: `${request.role === 'output' ? 'result' : 'arguments'} for "${request.name}" could not be validated: ${message}` };
  }
  parentPort.postMessage({ seq: request.seq, ...reply });
});
