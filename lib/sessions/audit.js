'use strict';

// One audit record per session operation (acquire, exec, start, readFile,
// writeFile, list, remove, end, and every denial): actor, scope, operation,
// the command (redacted, then cut) or path (cut), exit, duration, bytes, the
// sandbox receipt's digest, and why it was denied. Redaction is the shell
// credential forms (redact-command.js), then Code Mode's single linear scan
// (code-mode/redact-source.js), both linear and before the cut,
// so a secret straddling the cut leaves no prefix. A sink that throws or
// rejects is ignored: auditing never fails the operation it records.

const { redactSource, truncateUtf8 } = require('../code-mode/redact-source');
const { redactShellCredentials } = require('./redact-command');

/** Command text kept per record, after redaction (bytes). */
const AUDIT_COMMAND_BYTES = 4096;
/** A file tool's path kept per record (bytes): PATH_MAX, the longest path accepted (R11-4). */
const AUDIT_PATH_BYTES = 4096;
/** Actor description kept per record (bytes of JSON). */
const AUDIT_ACTOR_BYTES = 256;

function describeActor(actor) {
  if (typeof actor === 'string') return truncateUtf8(actor, AUDIT_ACTOR_BYTES).text;
  let json;
  try {
    json = JSON.stringify(actor) ?? String(actor);
  } catch {
    json = '[unserialisable actor]';
  }
  return truncateUtf8(json, AUDIT_ACTOR_BYTES).text;
}

/** The argv as one line, redacted (shell credential forms, then as source), then cut. */
function auditCommand(argv) {
  const text = redactShellCredentials(argv.join(' '));
  const cut = truncateUtf8(redactSource(text, { maxOutputChars: AUDIT_COMMAND_BYTES }), AUDIT_COMMAND_BYTES);
  return { command: cut.text, commandTruncated: cut.truncated };
}

/** The path cut like a command: a refused 8 MiB path made an 8 MiB record (R11-4). */
function auditPath(path) {
  if (path === undefined || path === null) return { path: null };
  const cut = truncateUtf8(String(path), AUDIT_PATH_BYTES);
  return cut.truncated ? { path: cut.text, pathTruncated: true } : { path: cut.text };
}

/** @param {object} fields the operation's facts; unknown fields are dropped. */
function auditRecord(fields) {
  const record = {
    auditVersion: 1,
    at: new Date().toISOString(),
    session: fields.session,
    scope: fields.scope,
    actor: describeActor(fields.actor),
    operation: fields.operation,
    ...(fields.argv === undefined ? {} : auditCommand(fields.argv)),
    ...auditPath(fields.path),
    origin: fields.origin ?? null,
    exitCode: fields.exitCode ?? null,
    signal: fields.signal ?? null,
    durationMs: fields.durationMs === undefined ? null : Math.round(fields.durationMs * 1000) / 1000,
    bytes: fields.bytes ?? null,
    receiptDigest: fields.receiptDigest ?? null,
    error: fields.error ?? null,
    denial: fields.denial ?? null,
  };
  return Object.freeze(record);
}

/** Hands a record to the sink; nothing the sink does reaches the caller. */
function emitAudit(sink, record) {
  if (typeof sink !== 'function') return;
  try {
    const out = sink(record);
    if (out !== null && typeof out?.then === 'function') out.then(undefined, () => {});
  } catch {
    // A failing sink is the sink's problem, never the operation's.
  }
}

module.exports = { auditRecord, emitAudit, AUDIT_COMMAND_BYTES, AUDIT_PATH_BYTES };
