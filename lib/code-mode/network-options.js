'use strict';

// `createCodeMode({network})`: the options of the program's `fetch` (the
// runner's fetch extension, performed by this host: fetch-dispatcher.js).
// Validated and frozen at creation. Allowlist entries are parsed by the
// egress engine's own rules through the addon (`networkDestination`), so a
// destination means here exactly what it means in a mediated policy.

const { CordonError } = require('../errors');

const KIB = 1024;
const MIB = 1024 * KIB;

const DEFAULT_NETWORK = Object.freeze({
  allowPrivate: false,
  maxRequestBytes: 1 * MIB,
  maxResponseBytes: 1 * MIB,
  maxRequests: 16,
  timeoutMs: 10000,
  maxRedirects: 20,
});

/** Integer options: [min, max]. Bodies travel base64 in one frame each way, hence the 64 MiB ceiling. */
const RANGES = Object.freeze({
  maxRequestBytes: [0, 64 * MIB],
  maxResponseBytes: [0, 64 * MIB],
  maxRequests: [1, 100000],
  timeoutMs: [1, 3600 * 1000],
  maxRedirects: [0, 20],
});
const KEYS = new Set(['allow', 'allowPrivate', 'ca', ...Object.keys(RANGES)]);
/** As many destinations as a mediated policy may list. */
const MAX_DESTINATIONS = 1024;

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

function checkCa(ca) {
  if (ca === undefined) return undefined;
  const list = Array.isArray(ca) ? ca : [ca];
  if (list.length === 0 || !list.every((each) => typeof each === 'string' || Buffer.isBuffer(each))) {
    throw invalid('network.ca must be a PEM string or Buffer (or an array of them): the certificate authorities trusted instead of the system ones');
  }
  return Object.freeze(list.map((each) => (Buffer.isBuffer(each) ? Buffer.from(each) : each)));
}

/**
 * @param {unknown} network the createCodeMode option
 * @param {(text: string) => string} networkDestination the addon's allowlist parser
 * @returns {null | Readonly<{allow: ReadonlySet<string>, allowPrivate: boolean, ca?: readonly (string|Buffer)[],
 *   maxRequestBytes: number, maxResponseBytes: number, maxRequests: number, timeoutMs: number, maxRedirects: number}>}
 */
function resolveNetwork(network, networkDestination) {
  if (network === undefined) return null;
  if (network === null || typeof network !== 'object' || Array.isArray(network)) {
    throw invalid('network must be an object such as {allow: ["api.example.com:443"]}');
  }
  for (const key of Object.keys(network)) {
    if (!KEYS.has(key)) throw invalid(`unknown network option "${key}"; known: ${[...KEYS].join(', ')}`);
  }
  const { allow } = network;
  if (!Array.isArray(allow) || allow.length === 0 || allow.length > MAX_DESTINATIONS) {
    throw invalid(`network.allow must list 1 to ${MAX_DESTINATIONS} "host:port" destinations, e.g. ["api.example.com:443"]`);
  }
  const destinations = new Set();
  for (const entry of allow) {
    if (typeof entry !== 'string') throw invalid(`network.allow entries are "host:port" strings, got ${JSON.stringify(entry)?.slice(0, 80)}`);
    let canonical;
    try {
      canonical = networkDestination(entry);
    } catch (error) {
      throw invalid(`network.allow: ${error.message}`);
    }
    destinations.add(canonical);
  }
  if (network.allowPrivate !== undefined && typeof network.allowPrivate !== 'boolean') throw invalid('network.allowPrivate must be a boolean');
  const resolved = { ...DEFAULT_NETWORK, allow: Object.freeze(destinations), allowPrivate: network.allowPrivate === true };
  const ca = checkCa(network.ca);
  if (ca) resolved.ca = ca;
  for (const [key, [min, max]] of Object.entries(RANGES)) {
    const value = network[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < min || value > max) throw invalid(`network.${key} must be an integer from ${min} to ${max}, got ${String(value)}`);
    resolved[key] = value;
  }
  return Object.freeze(resolved);
}

module.exports = { resolveNetwork, DEFAULT_NETWORK };
