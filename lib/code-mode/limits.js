'use strict';

// Code Mode limits: defaults, validation, and the two ways they reach the
// runner (command-line ceilings and the `execute` frame's `limits`). The host
// enforces source, per-result and cumulative bytes itself; the runner enforces
// tool calls, final result bytes, time and memory, and the host re-checks the
// runner's `ready` so a runner can never raise what was asked.

const { CordonError } = require('../errors');

const KIB = 1024;
const MIB = 1024 * KIB;

/** Defaults are the safe values; every one can only be set, never skipped. */
const DEFAULT_LIMITS = Object.freeze({
  sourceBytes: 64 * KIB,
  toolCalls: 50,
  toolResultBytes: 1 * MIB,
  cumulativeResultBytes: 4 * MIB,
  resultBytes: 512 * KIB,
  timeoutMs: 5000,
  memoryBytes: 64 * MIB,
  maxOutstandingCalls: 8,
  logBytes: 64 * KIB,
  maxTimers: 1000,
});

// Upper bounds keep a typo (an extra zero or two) from turning a limit into
// "unlimited"; lower bounds are what the runner accepts (§2, §4).
const LIMIT_RANGES = Object.freeze({
  sourceBytes: [1, 16 * MIB],
  toolCalls: [0, 100000],
  toolResultBytes: [1, 256 * MIB],
  cumulativeResultBytes: [1, 1024 * MIB],
  resultBytes: [1, 256 * MIB],
  timeoutMs: [1, 3600 * 1000],
  memoryBytes: [1 * MIB, 16 * 1024 * MIB],
  // The runner's reader queue holds 8 frames: more outstanding calls could overflow it (ext-spec).
  maxOutstandingCalls: [1, 8],
  logBytes: [1, 16 * MIB],
  // Live timers (setTimeout/setInterval/setImmediate) at once; the runner's ceiling is 100 000.
  maxTimers: [1, 100000],
});

/** Room for the frame envelope around a tool result or the final result (JSON keys, id, name). */
const FRAME_ENVELOPE_BYTES = 64 * KIB;
/** The runner escapes non-ASCII as \uXXXX: a 3-byte UTF-8 character becomes 6 bytes on the wire. */
const RUNNER_ESCAPE_EXPANSION = 2;
/** Wall time for bwrap + runtime setup before `ready` must arrive; not part of the code's budget. */
const READY_BUDGET_MS = 5000;
/** After the runner's own deadline, time for its terminal frame to reach us before the stop ladder. */
const DRAIN_SLACK_MS = 1000;

function invalidLimits(message, details) {
  return new CordonError('ERR_CORDON_INVALID_LIMITS', message, { details });
}

/**
 * Merge `limits` over the defaults and validate every value.
 * @param {unknown} limits
 * @returns {Readonly<typeof DEFAULT_LIMITS>}
 */
function resolveLimits(limits) {
  if (limits === undefined) return DEFAULT_LIMITS;
  if (limits === null || typeof limits !== 'object' || Array.isArray(limits)) {
    throw invalidLimits('limits must be a plain object, e.g. {timeoutMs: 2000}');
  }
  const resolved = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(limits)) {
    if (!Object.prototype.hasOwnProperty.call(LIMIT_RANGES, key)) {
      throw invalidLimits(`unknown limit "${key}"; known limits: ${Object.keys(LIMIT_RANGES).join(', ')}`, { key });
    }
    const value = limits[key];
    if (value === undefined) continue;
    const [min, max] = LIMIT_RANGES[key];
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw invalidLimits(`limits.${key} must be an integer from ${min} to ${max}, got ${String(value)}`, { key, value });
    }
    resolved[key] = value;
  }
  if (resolved.cumulativeResultBytes < resolved.toolResultBytes) {
    throw invalidLimits(
      `limits.cumulativeResultBytes (${resolved.cumulativeResultBytes}) must be at least limits.toolResultBytes (${resolved.toolResultBytes})`,
      { key: 'cumulativeResultBytes' },
    );
  }
  return Object.freeze(resolved);
}

/** Response headers a fetch.result may carry: Node's default maxHeaderSize, each byte escaped (\uXXXX) at worst. */
const FETCH_HEADER_FRAME_BYTES = 16 * KIB * 6;

/**
 * The largest frame either side may send: a tool result or the final result plus the envelope,
 * or (with `network`) a fetch body, base64 in its frame, beside its headers.
 */
function maxFrameBytes(limits, network = null) {
  const result = limits.resultBytes * RUNNER_ESCAPE_EXPANSION;
  const fetchBody = network ? Math.ceil(Math.max(network.maxRequestBytes, network.maxResponseBytes) / 3) * 4 + FETCH_HEADER_FRAME_BYTES : 0;
  return Math.max(limits.toolResultBytes, result, fetchBody) + FRAME_ENVELOPE_BYTES;
}

/**
 * Command-line ceilings for the runner (§2): the runner clamps the execute frame to these.
 * `protocol` is the runner's dialect: 'cordon' (cordon-runner) also gets `--max-log-bytes`;
 * 'code-bridge-v1' (a reference runner, which exits 2 on any flag §2 does not list) gets only §2's flags.
 */
function runnerArgs(limits, frameBytes, protocol = 'cordon', network = null) {
  const args = [
    '--timeout-ms', String(limits.timeoutMs),
    // The runner's flags are all >= 1 (spec §2); a zero call budget still
    // reaches the runner through the execute frame's maxToolCalls.
    '--max-calls', String(Math.max(1, limits.toolCalls)),
    '--max-result-bytes', String(limits.resultBytes),
    '--memory-bytes', String(limits.memoryBytes),
    '--max-frame-bytes', String(frameBytes),
  ];
  // The ceiling of the console extension's budget (and of console on stderr for a v1 run).
  if (protocol === 'cordon') args.push('--max-log-bytes', String(limits.logBytes));
  // With a network allowlist every execute asks for fetch: the runner compiles
  // fetch.js before `execute` (a pooled runner while it waits) instead of after it.
  if (protocol === 'cordon' && network) args.push('--max-requests', String(network.maxRequests));
  return args;
}

/** The `limits` object of the execute frame (§4). */
function executeLimits(limits) {
  return { maxToolCalls: limits.toolCalls, maxResultBytes: limits.resultBytes, timeoutMs: limits.timeoutMs };
}

/**
 * The `extensions` member of the execute frame (docs/runner.md "Extensions"):
 * concurrent tool calls, console frames and timers. A runner that does not know them
 * ignores the field and answers plain v1; we use only what `ready` confirms.
 */
function executeExtensions(limits, network = null) {
  const extensions = {
    concurrentToolCalls: { maxOutstanding: limits.maxOutstandingCalls },
    console: { maxLogBytes: limits.logBytes },
    timers: { maxLive: limits.maxTimers },
  };
  // Only a host with a network allowlist asks: without it the program's fetch says how to enable it.
  if (network) extensions.fetch = { maxRequests: network.maxRequests };
  return extensions;
}

const EXTENSION_VALUE_KEYS = Object.freeze({
  concurrentToolCalls: 'maxOutstanding', console: 'maxLogBytes', timers: 'maxLive', fetch: 'maxRequests',
});

/**
 * What `ready.extensions` confirmed, or why it is refused. Absent → v1 (nothing
 * confirmed). Present: only members we asked for, each with an integer value
 * from 1 to what we asked — like effectiveLimits, a runner can lower, never raise.
 * @returns {{confirmed: {maxOutstanding: number, maxLogBytes: number|null, maxLive: number|null, maxRequests: number|null}} | {refusal: string}}
 */
function checkConfirmedExtensions(confirmed, requested) {
  const v1 = { maxOutstanding: 1, maxLogBytes: null, maxLive: null, maxRequests: null };
  if (confirmed === undefined) return { confirmed: v1 };
  if (confirmed === null || typeof confirmed !== 'object' || Array.isArray(confirmed)) return { refusal: 'ready.extensions is not an object' };
  const out = { ...v1 };
  for (const [name, member] of Object.entries(confirmed)) {
    const key = EXTENSION_VALUE_KEYS[name];
    if (!key || !requested[name]) return { refusal: `ready.extensions.${name} was not requested` };
    const value = member !== null && typeof member === 'object' && !Array.isArray(member) ? member[key] : undefined;
    if (!Number.isSafeInteger(value) || value < 1) return { refusal: `ready.extensions.${name}.${key} is not an integer ≥ 1` };
    if (value > requested[name][key]) return { refusal: `ready.extensions.${name}.${key} ${value} exceeds the requested ${requested[name][key]}` };
    out[key] = value;
  }
  return { confirmed: out };
}

/**
 * A `ready` may lower limits (min with its CLI ceilings) but never raise them (§5).
 * @returns {string | null} why the effective limits are refused, or null when they are acceptable
 */
function checkEffectiveLimits(effective, requested) {
  if (effective === null || typeof effective !== 'object' || Array.isArray(effective)) {
    return 'ready.effectiveLimits is not an object';
  }
  for (const key of Object.keys(requested)) {
    const value = effective[key];
    const min = key === 'maxToolCalls' ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < min) return `ready.effectiveLimits.${key} is not an integer ≥ ${min}`;
    if (value > requested[key]) return `ready.effectiveLimits.${key} ${value} exceeds the requested ${requested[key]}`;
  }
  return null;
}

module.exports = {
  DEFAULT_LIMITS,
  READY_BUDGET_MS,
  DRAIN_SLACK_MS,
  resolveLimits,
  maxFrameBytes,
  runnerArgs,
  executeLimits,
  executeExtensions,
  checkEffectiveLimits,
  checkConfirmedExtensions,
};
