'use strict';

// Where a remote host is and how to reach it: `{socket}` (a Unix socket path)
// or `{url: 'tls://HOST:PORT', tls: {ca, cert, key, servername?}, token?}`.
// Checked once by connectRemote, before anything connects, and fail closed:
// no target, plain TCP, TLS without a CA to verify the host or without a
// client credential (a certificate or a token) are all refused.

const net = require('node:net');
const tls = require('node:tls');
const { CordonError } = require('../errors');
const { isPlainObject } = require('../plain-json');

const TARGET_KEYS = new Set(['socket', 'url', 'tls', 'token']);
const TLS_KEYS = new Set(['ca', 'cert', 'key', 'servername']);
/** A token is a bearer secret in the hello frame: bounded, printable, no whitespace. */
const TOKEN_PATTERN = /^[\x21-\x7e]{1,4096}$/;

function credentialsMissing(message) {
  return new CordonError('ERR_CORDON_REMOTE_CREDENTIALS_MISSING', message);
}

function invalid(message) {
  return new CordonError('ERR_CORDON_INVALID_OPTIONS', message);
}

const isPem = (value) => typeof value === 'string' || Buffer.isBuffer(value);

function checkToken(token) {
  if (token === undefined) return undefined;
  if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) throw invalid('token must be 1-4096 printable ASCII characters without spaces');
  return token;
}

function tlsTarget(url, tlsOptions, token) {
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`url must be tls://HOST:PORT, got ${JSON.stringify(url).slice(0, 80)}`);
  }
  if (parsed.protocol !== 'tls:') {
    throw invalid(`url must be tls://HOST:PORT: a remote host is reached over TLS or a Unix socket, never plain TCP (got ${parsed.protocol})`);
  }
  const port = Number(parsed.port);
  if (!parsed.hostname || !Number.isInteger(port) || port < 1 || port > 65535 || parsed.pathname.replace(/^\/$/, '') || parsed.search || parsed.username) {
    throw invalid(`url must be exactly tls://HOST:PORT, got ${JSON.stringify(url).slice(0, 80)}`);
  }
  if (!isPlainObject(tlsOptions) || Object.keys(tlsOptions).some((key) => !TLS_KEYS.has(key))) {
    throw credentialsMissing('a tls:// host needs tls: {ca, cert, key, servername?}: ca verifies the host; cert and key (or a token) identify you');
  }
  const { ca, cert, key, servername } = tlsOptions;
  if (!isPem(ca)) throw credentialsMissing('tls.ca is required: the CA certificate (PEM) that signed the host\'s certificate; the system CAs are never trusted for a sandbox host');
  if ((cert === undefined) !== (key === undefined) || (cert !== undefined && !(isPem(cert) && isPem(key)))) {
    throw invalid('tls.cert and tls.key come together (PEM strings or Buffers)');
  }
  if (cert === undefined && token === undefined) throw credentialsMissing('a tls:// host needs a client credential: tls.cert and tls.key (mutual TLS) or a token');
  if (servername !== undefined && typeof servername !== 'string') throw invalid('tls.servername must be a string');
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  return Object.freeze({ kind: 'tls', host, port, ca, cert, key, servername, token, label: `tls://${parsed.host}` });
}

/**
 * The checked target. Throws ERR_CORDON_REMOTE_CREDENTIALS_MISSING when there
 * is nothing to connect to or nothing to authenticate with.
 */
function checkTarget(target) {
  if (!isPlainObject(target) || (target.socket === undefined && target.url === undefined)) {
    throw credentialsMissing('connectRemote needs {socket: "/path/to/host.sock"} or {url: "tls://HOST:PORT", tls: {ca, cert, key}}: without them nothing runs (fail closed)');
  }
  for (const key of Object.keys(target)) {
    if (!TARGET_KEYS.has(key)) throw invalid(`unknown connectRemote option "${key}"; known: ${[...TARGET_KEYS].join(', ')}`);
  }
  const token = checkToken(target.token);
  if (target.socket !== undefined && target.url !== undefined) throw invalid('pass socket or url, not both');
  if (target.url !== undefined) {
    if (typeof target.url !== 'string') throw invalid('url must be a string such as "tls://127.0.0.1:7443"');
    return tlsTarget(target.url, target.tls, token);
  }
  if (typeof target.socket !== 'string' || !target.socket.startsWith('/') || target.socket.includes('\0')) {
    throw invalid('socket must be the absolute path of the host\'s Unix socket');
  }
  if (target.tls !== undefined) throw invalid('tls is for a tls:// url; a Unix socket is authenticated by the host from your uid');
  return Object.freeze({ kind: 'unix', path: target.socket, token, label: target.socket });
}

/** A new connection to `target` (a net.Socket or tls.TLSSocket); 'connect' fires once the transport is up. */
function openSocket(target) {
  if (target.kind === 'unix') return net.connect({ path: target.path });
  const { host, port, ca, cert, key, servername } = target;
  // Frames are small and answered at once (a tool call and its result):
  // Nagle's algorithm would hold each behind the peer's delayed ACK (~40 ms).
  const socket = tls.connect({
    host,
    port,
    ca,
    cert,
    key,
    ...(servername !== undefined ? { servername } : {}),
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  });
  socket.setNoDelay(true);
  return socket;
}

module.exports = { checkTarget, openSocket };
