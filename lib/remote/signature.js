'use strict';

// Receipt signatures (docs/remote.md, "Receipt signing"): a host with a
// signing key sends `exit.signature`, base64 of the Ed25519 signature over
// the receipt's canonical JSON (lib/code-mode/audit.js canonicalJson). A
// client given the host's public key (pinned out of band, never taken from
// `welcome`) accepts no exit whose receipt it cannot verify.

const crypto = require('node:crypto');
const { CordonError } = require('../errors');
const { canonicalJson } = require('../code-mode/audit');

/** `hostPublicKey` (PEM text, Buffer or KeyObject; Ed25519) as a KeyObject, or null when absent. */
function checkPublicKey(hostPublicKey) {
  if (hostPublicKey === undefined) return null;
  let key;
  try {
    key = hostPublicKey instanceof crypto.KeyObject ? hostPublicKey : crypto.createPublicKey(hostPublicKey);
  } catch (cause) {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', `hostPublicKey is not a public key: ${cause.message}`, { cause });
  }
  if (key.type !== 'public' || key.asymmetricKeyType !== 'ed25519') {
    throw new CordonError('ERR_CORDON_INVALID_OPTIONS', 'hostPublicKey must be the host\'s Ed25519 public key (its SubjectPublicKeyInfo PEM)');
  }
  return key;
}

/** Why the receipt fails verification against `key`, or null (verified, or no key to verify with). */
function checkSignature(key, receipt, signature) {
  if (key === null) return null;
  if (typeof signature !== 'string') return 'the host sent no receipt signature, and hostPublicKey requires one';
  const ok = crypto.verify(null, Buffer.from(canonicalJson(receipt)), key, Buffer.from(signature, 'base64'));
  return ok ? null : 'the receipt\'s signature does not verify against hostPublicKey: the receipt was altered or signed by another key';
}

module.exports = { checkPublicKey, checkSignature };
