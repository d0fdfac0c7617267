'use strict';

// A validator thread (validator-pool.js). It receives one request at a time:
//   {seq, schemaId, schemaText, draft, strict, namedKeys, name, frameText | args}
// and answers {seq, ok: true} or {seq, ok: false, code, message}. Schemas are
// compiled on first sight and cached by id; the cache is dropped whole past
// MAX_CACHED_SCHEMAS so a process creating many Code Mode instances cannot
// grow a worker without bound. The pool terminates a worker that overruns its
// budget, so nothing here needs to be fast — only correct.

const { parentPort } = require('node:worker_threads');
const { createAjv, addExtensionKeywords } = require('./schema-compiler');
const { checkArguments } = require('./argument-check');

const MAX_CACHED_SCHEMAS = 1024;
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

function handle(request) {
  const entry = compiled.get(request.schemaId) ?? compile(request);
  const args = request.frameText === undefined ? request.args : JSON.parse(request.frameText).arguments;
  return checkArguments(entry, args, request.name);
}

parentPort.on('message', (request) => {
  let reply;
  try {
    reply = handle(request);
  } catch (error) {
    reply = { ok: false, code: 'INVALID_ARGUMENTS', message: `arguments for "${request.name}" could not be validated: ${String(error?.message ?? error).slice(0, 300)}` };
  }
  parentPort.postMessage({ seq: request.seq, ...reply });
});
