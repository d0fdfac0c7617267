'use strict';

// A session's network: none (the default: the sandbox has no route and its
// seccomp filter refuses AF_INET), or the launcher's mediated engine with an
// allowlist of named destinations. Sessions refuse wildcards and IP
// literals outright: a conversation's allowlist names services, and a
// literal address pins nothing a reviewer can read (docs/sessions.md).

const net = require('node:net');
const { CordonError } = require('../errors');
const { withSessionQuotas } = require('./network-budget');

const NETWORK_KEYS = new Set(['allow']);
const DESTINATION_KEYS = new Set(['host', 'port', 'requireTlsSni', 'allowPrivateAddresses']);

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: network: ${message}`);
}

function checkHost(host, label) {
  if (typeof host !== 'string' || host.length === 0) throw invalid(`${label}: host must be a non-empty string`);
  if (host.includes('*')) throw invalid(`${label}: wildcards ("${host}") are refused; list each host`);
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (net.isIP(bare) !== 0) throw invalid(`${label}: IP literals ("${host}") are refused; name the host`);
}

/** One destination, `"host:port"` or `{host, port, requireTlsSni?, allowPrivateAddresses?}`, → the launcher's object form. */
function checkDestination(item, index) {
  const label = `allow[${index}]`;
  if (typeof item === 'string') {
    const colon = item.lastIndexOf(':');
    if (colon <= 0) throw invalid(`${label}: "${item}" is not host:port`);
    checkHost(item.slice(0, colon), label);
    return { protocol: 'tcp', host: item.slice(0, colon), port: Number(item.slice(colon + 1)) };
  }
  if (item === null || typeof item !== 'object') throw invalid(`${label}: a "host:port" string or {host, port}`);
  for (const key of Object.keys(item)) if (!DESTINATION_KEYS.has(key)) throw invalid(`${label}: unknown key "${key}"`);
  checkHost(item.host, label);
  return { protocol: 'tcp', ...item };
}

/** The sandbox policy for `network` over `policy` (a plain policy document). */
function sessionPolicy(policy, network) {
  if (network === undefined) return policy;
  if (network === null || typeof network !== 'object') throw invalid('must be {allow: [...]}');
  for (const key of Object.keys(network)) if (!NETWORK_KEYS.has(key)) throw invalid(`unknown key "${key}"`);
  if (!Array.isArray(network.allow) || network.allow.length === 0) throw invalid('allow must be a non-empty array (leave network out for none)');
  const allow = network.allow.map(checkDestination);
  // One sandbox serves the whole conversation: per-session quotas, not per-run ones (network-budget.js).
  return withSessionQuotas({ ...JSON.parse(JSON.stringify(policy)), network: { mode: 'mediated', allow } });
}

/** The canonical form of a network option (checked): equal allowlists compare equal. */
function canonicalNetwork(network) {
  if (network === undefined || network === null) return null;
  const sorted = (entry) => Object.fromEntries(Object.keys(entry).sort().map((k) => [k, entry[k]]));
  return JSON.stringify(sessionPolicy({}, network).network.allow.map(sorted));
}

const ACQUIRE_KEYS = new Set(['network']);

/**
 * acquire()'s options, checked before anything else runs: `network` is a
 * per-session allowlist, validated like the manager's (no wildcard, no IP
 * literal). Returns `{network}` (undefined: the manager's).
 */
function checkAcquireOptions(options) {
  if (options === undefined) return { network: undefined };
  if (options === null || typeof options !== 'object') throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'sessions: acquire options must be an object');
  for (const key of Object.keys(options)) if (!ACQUIRE_KEYS.has(key)) throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `sessions: acquire: unknown option "${key}"`);
  if (options.network === undefined) return { network: undefined };
  canonicalNetwork(options.network);
  return { network: JSON.parse(JSON.stringify(options.network)) };
}

module.exports = { sessionPolicy, canonicalNetwork, checkAcquireOptions };
