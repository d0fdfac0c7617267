'use strict';

// One HTTP exchange of a fetch, to an admitted destination (fetch-admission.js):
// connect to the kept addresses in order, pinned by a custom `lookup` (the
// name is never resolved again, so DNS cannot rebind it), TLS verified
// against the host name (`ca` replaces the system roots when given), the
// request body written, the response body read up to maxResponseBytes and
// not a byte further: past it the connection is destroyed.

const http = require('node:http');
const https = require('node:https');
const net = require('node:net');

/** Headers the host sets itself (framing, routing): a program's values are dropped. */
const HOST_OWNED_HEADERS = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);

class HopError extends Error {
  /** @param {string} code stable: CONNECT_FAILED, TLS_FAILED, RESPONSE_TOO_LARGE, REQUEST_FAILED, ABORTED */
  constructor(code, message, end) {
    super(message);
    this.code = code;
    this.end = end;
  }
}

/**
 * @param {{admitted: {host: string, port: number, tls: boolean, addresses: string[]}, url: URL, method: string,
 *   headers: [string, string][], body: Buffer | null, network: object, signal: AbortSignal}} hop
 * @returns {Promise<{address: string, status: number, statusText: string, headers: [string, string][], body: Buffer,
 *   bytesOut: number, bytesIn: number}>} rejects with a HopError carrying `address`, `bytesOut`, `bytesIn`
 */
async function sendHop(hop) {
  let last;
  for (const address of hop.admitted.addresses) {
    try {
      return await exchange(hop, address);
    } catch (error) {
      last = error;
      // Only a connection that never opened moves on to the next address.
      if (!(error instanceof HopError) || error.code !== 'CONNECT_FAILED' || hop.signal.aborted) throw error;
    }
  }
  throw last;
}

function requestOptions({ admitted, url, method, headers, body, network }, address) {
  const flat = [];
  for (const [name, value] of headers) if (!HOST_OWNED_HEADERS.has(name)) flat.push(name, value);
  const defaultPort = admitted.tls ? 443 : 80;
  flat.push('host', admitted.port === defaultPort ? admitted.host : `${admitted.host}:${admitted.port}`);
  if (body !== null || !['GET', 'HEAD'].includes(method)) flat.push('content-length', String(body ? body.length : 0));
  const family = net.isIPv6(address) ? 6 : 4;
  const options = {
    host: admitted.host,
    port: admitted.port,
    method,
    path: `${url.pathname}${url.search}`,
    headers: flat,
    agent: false,
    setHost: false,
    // Pinned: whatever the name resolves to now, this hop connects to `address`.
    lookup: (_name, lookupOptions, callback) => (lookupOptions?.all ? callback(null, [{ address, family }]) : callback(null, address, family)),
  };
  if (admitted.tls) {
    options.servername = net.isIP(admitted.host) ? undefined : admitted.host;
    if (network.ca) options.ca = network.ca;
  }
  return options;
}

function exchange(hop, address) {
  const { admitted, body, network, signal } = hop;
  return new Promise((resolve, reject) => {
    const counts = { address, bytesOut: 0, bytesIn: 0, connected: false, secured: false };
    const fail = (code, message, end) => reject(Object.assign(new HopError(code, message, end), counts));
    const request = (admitted.tls ? https : http).request(requestOptions(hop, address));
    // The dispatcher aborts with a HopError saying why (TIMEOUT, ABORTED, RUN_ENDED).
    const onAbort = () => request.destroy(signal.reason instanceof HopError ? signal.reason : new HopError('ABORTED', 'the request was aborted', 'cancelled'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const done = () => signal.removeEventListener('abort', onAbort);
    request.on('socket', (socket) => {
      socket.once('connect', () => { counts.connected = true; });
      socket.once('secureConnect', () => { counts.secured = true; });
    });
    request.on('error', (error) => {
      done();
      if (error instanceof HopError) return fail(error.code, error.message, error.end);
      if (!counts.connected) return fail('CONNECT_FAILED', `cannot connect to ${admitted.host}:${admitted.port} at ${address}: ${error.code ?? error.message}`, 'error');
      // Connected but no TLS session: the handshake or the certificate check failed.
      if (admitted.tls && !counts.secured) return fail('TLS_FAILED', `TLS with ${admitted.host} failed (certificate verified against the host name): ${error.code ?? error.message}`, 'error');
      return fail('REQUEST_FAILED', `${admitted.host}:${admitted.port}: ${error.code ?? error.message}`, 'error');
    });
    request.on('response', (response) => readResponse(response, { request, network, counts, resolve, fail, done }));
    if (body) counts.bytesOut = body.length;
    request.end(body ?? undefined);
    return undefined;
  });
}

function readResponse(response, { request, network, counts, resolve, fail, done }) {
  const limit = network.maxResponseBytes;
  const tooLarge = (bytes) => {
    request.destroy();
    done();
    fail('RESPONSE_TOO_LARGE', `the response body is ${bytes} bytes or more, over the host's network.maxResponseBytes ${limit}`, 'response-too-large');
  };
  const declared = Number(response.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared > limit) return tooLarge(declared);
  const chunks = [];
  response.on('data', (chunk) => {
    counts.bytesIn += chunk.length;
    if (counts.bytesIn > limit) return tooLarge(counts.bytesIn);
    chunks.push(chunk);
    return undefined;
  });
  const broken = (error) => {
    done();
    if (error instanceof HopError) return fail(error.code, error.message, error.end);
    return fail('REQUEST_FAILED', `the response was cut off after ${counts.bytesIn} bytes${error ? `: ${error.code ?? error.message}` : ''}`, 'error');
  };
  response.on('error', broken);
  response.on('close', () => { if (!response.complete) broken(request.destroyed && request.errored ? request.errored : null); });
  response.on('end', () => {
    done();
    const headers = [];
    for (let i = 0; i < response.rawHeaders.length; i += 2) headers.push([response.rawHeaders[i].toLowerCase(), response.rawHeaders[i + 1]]);
    resolve({
      address: counts.address,
      status: response.statusCode,
      statusText: response.statusMessage ?? '',
      headers,
      body: Buffer.concat(chunks),
      bytesOut: counts.bytesOut,
      bytesIn: counts.bytesIn,
    });
  });
  return undefined;
}

module.exports = { sendHop, HopError };
