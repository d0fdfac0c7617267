'use strict';

// Whether one fetch hop may connect, and to which addresses: the egress
// engine's admission order (docs/network.md › Admission), applied on this
// host. Steps — the first failure is the refusal reason, the same stable
// strings as the engine's receipts:
//   1. scheme http: or https:, no IPv6 literal      unsupported
//   2. host canonicalised by the engine's rule      malformed-name
//   3. exact host:port in network.allow             no-destination
//   4. a name resolved here, never by the sandbox    resolve-failed
//   5. only global addresses kept (the engine's      private-address
//      table, through the addon), unless allowPrivate
// The hop then connects to the kept addresses in order (at most 4) and is
// pinned to the one that answered (fetch-hop.js).

const dns = require('node:dns');
const net = require('node:net');

/** Addresses tried per hop, as the engine does. */
const MAX_CONNECT_ADDRESSES = 4;

/**
 * @param {URL} url
 * @param {object} network resolved options (network-options.js)
 * @param {{requestedHost: (text: string) => string | null, isGlobalAddress: (ip: string) => boolean}} rules the addon's
 * @param {AbortSignal} signal
 * @returns {Promise<{ok: true, host: string, port: number, tls: boolean, addresses: string[]}
 *   | {ok: false, reason: string, message: string, host: string | null, port: number | null}>}
 */
async function admitHop(url, network, rules, signal) {
  const tls = url.protocol === 'https:';
  const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
  const refuse = (reason, message, host = null) => ({ ok: false, reason, message, host, port: host === null ? null : port });
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('unsupported', `only http: and https: URLs can be fetched, not ${url.protocol}`);
  if (url.hostname.startsWith('[')) return refuse('unsupported', `IPv6 literals cannot be fetched (${url.hostname}); allow a host name`);
  const host = rules.requestedHost(url.hostname);
  if (host === null) return refuse('malformed-name', `${url.hostname.slice(0, 253)} is not a host name an allowlist can contain`);
  const destination = `${host}:${port}`;
  if (!network.allow.has(destination)) {
    return refuse('no-destination', `${destination} is not in the host's network allowlist (allowed: ${[...network.allow].slice(0, 16).join(', ')})`, host);
  }
  let addresses;
  if (net.isIPv4(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await lookupAll(host, signal);
    } catch (error) {
      if (signal.aborted) return refuse('cancelled', 'the request was aborted during the lookup', host);
      return refuse('resolve-failed', `${host} did not resolve (${error.code ?? error.message})`, host);
    }
  }
  const kept = network.allowPrivate ? addresses : addresses.filter((address) => rules.isGlobalAddress(address));
  if (kept.length === 0) {
    return refuse('private-address', `${host} resolves to a non-global address (${addresses[0]}); the provider allows private addresses with network.allowPrivate`, host);
  }
  return { ok: true, host, port, tls, addresses: kept.slice(0, MAX_CONNECT_ADDRESSES) };
}

/** getaddrinfo on the host; abortable (the lookup itself runs on, its answer is dropped). */
function lookupAll(host, signal) {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    dns.lookup(host, { all: true, order: 'verbatim' }, (error, results) => {
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else if (results.length === 0) reject(new Error('no addresses'));
      else resolve(results.map((each) => each.address));
    });
  });
}

module.exports = { admitHop, MAX_CONNECT_ADDRESSES };
