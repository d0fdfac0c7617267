'use strict';

// One audit record per run: who ran what (redacted, bounded source), with
// which tools and limits, and how it ended, plus a digest of the sandbox
// receipt so the record can be matched to it later. Redaction runs *before*
// truncation, so a secret straddling the cut cannot leave a prefix behind; it
// stops once the redacted output is past the cut (a UTF-16 unit is at least
// one UTF-8 byte), so a 1 MiB source costs what its first 4 KiB cost.

const crypto = require('node:crypto');
const { redactSource, truncateUtf8 } = require('./redact-source');

/** Source kept in an audit record, after redaction. */
const AUDIT_SOURCE_BYTES = 4 * 1024;

/** JSON with object keys sorted at every level, so equal receipts hash equally. */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of the canonical receipt, or null when there is no receipt (never a digest of nothing). */
function receiptDigest(receipt) {
  if (!receipt || typeof receipt !== 'object' || Object.keys(receipt).length === 0) return null;
  return `sha256:${crypto.createHash('sha256').update(canonicalJson(receipt)).digest('hex')}`;
}

/**
 * @param {{executionId: string, parentId: string|null, mode: string, code: string, tools: string[],
 *   limits: object, ok: boolean, error?: object, metrics: object, receipt: object, receiptDigest?: string, startedAt: number,
 *   logs?: readonly object[]}} run  logs: console lines, already redacted and bounded (console-log.js)
 */
function buildAuditRecord(run) {
  const redacted = redactSource(run.code, { maxOutputChars: AUDIT_SOURCE_BYTES });
  const source = truncateUtf8(redacted, AUDIT_SOURCE_BYTES);
  return Object.freeze({
    auditVersion: 1,
    executionId: run.executionId,
    parentId: run.parentId,
    mode: run.mode,
    startedAt: new Date(run.startedAt).toISOString(),
    code: source.text,
    codeTruncated: source.truncated,
    codeBytes: Buffer.byteLength(run.code, 'utf8'),
    tools: run.tools,
    limits: run.limits,
    outcome: run.ok ? { ok: true } : { ok: false, kind: run.error.kind, code: run.error.code },
    metrics: run.metrics,
    logs: run.logs ?? [],
    // The launcher's digest of this very receipt when it gave one (the same
    // bytes hashed, off the JS thread: docs/performance.md), else computed here.
    receiptDigest: typeof run.receiptDigest === 'string' ? run.receiptDigest : receiptDigest(run.receipt),
    invocationId: run.receipt?.invocationId ?? null,
  });
}

module.exports = { buildAuditRecord, receiptDigest, canonicalJson, AUDIT_SOURCE_BYTES };
