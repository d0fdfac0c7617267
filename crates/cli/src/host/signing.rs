//! Receipt signing (config `signingKey`: a file holding an Ed25519 private
//! key, PKCS#8, PEM or DER — what `openssl genpkey -algorithm ed25519`
//! writes). `exit.signature` is the base64 (standard, padded) Ed25519
//! signature over `cordon_launcher::receipt::canonical::canonical_bytes(receipt)`;
//! `welcome.host.publicKey` is the key's SubjectPublicKeyInfo as PEM, which
//! Node's `crypto.createPublicKey` reads as is. A provider pins that PEM (or
//! its fingerprint) out of band; a welcome's key proves nothing by itself.

use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::signature::{Ed25519KeyPair, KeyPair};
#[cfg(test)]
use ring::signature::{UnparsedPublicKey, ED25519};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::PrivatePkcs8KeyDer;
use serde_json::Value;

use cordon_launcher::receipt::canonical::canonical_bytes;

/// A key file larger than this is not an Ed25519 key (PEM of one is ~120 bytes).
const MAX_KEY_FILE_BYTES: u64 = 16 * 1024;
/// DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4), before the 32 key bytes.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

#[derive(Debug)]
pub enum SigningError {
    /// The key file could not be read (or is too large to be a key).
    ReadKey { path: PathBuf, reason: String },
    /// The file is not an Ed25519 PKCS#8 private key.
    ParseKey { path: PathBuf, reason: String },
}

impl std::fmt::Display for SigningError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SigningError::ReadKey { path, reason } => {
                write!(f, "signingKey {}: cannot read: {reason}", path.display())
            }
            SigningError::ParseKey { path, reason } => write!(
                f,
                "signingKey {}: not an Ed25519 PKCS#8 private key (PEM or DER): {reason}",
                path.display()
            ),
        }
    }
}

/// The host's receipt signing key.
pub struct ReceiptSigner {
    key: Ed25519KeyPair,
    public_key_pem: String,
}

impl ReceiptSigner {
    /// Reads the key file named by the config's `signingKey`.
    pub fn load(path: &Path) -> Result<ReceiptSigner, SigningError> {
        let read_error = |reason: String| SigningError::ReadKey {
            path: path.to_path_buf(),
            reason,
        };
        let size = std::fs::metadata(path)
            .map_err(|e| read_error(e.to_string()))?
            .len();
        if size > MAX_KEY_FILE_BYTES {
            return Err(read_error(format!("{size} bytes, more than a key")));
        }
        let bytes = std::fs::read(path).map_err(|e| read_error(e.to_string()))?;
        ReceiptSigner::from_file_bytes(&bytes).map_err(|reason| SigningError::ParseKey {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// PEM (`-----BEGIN PRIVATE KEY-----`) or raw DER.
    fn from_file_bytes(bytes: &[u8]) -> Result<ReceiptSigner, String> {
        let der = if bytes.starts_with(b"-----BEGIN") {
            PrivatePkcs8KeyDer::from_pem_slice(bytes).map_err(|e| e.to_string())?
        } else {
            PrivatePkcs8KeyDer::from(bytes.to_vec())
        };
        // "maybe_unchecked" accepts PKCS#8 v1 (no embedded public key), what
        // OpenSSL writes; ring derives the public key from the seed.
        let key = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der.secret_pkcs8_der())
            .map_err(|e| e.to_string())?;
        let public_key_pem = spki_pem(key.public_key().as_ref());
        Ok(ReceiptSigner {
            key,
            public_key_pem,
        })
    }

    /// `exit.signature` for `receipt`.
    pub fn sign(&self, receipt: &Value) -> String {
        STANDARD.encode(self.key.sign(&canonical_bytes(receipt)).as_ref())
    }

    /// `welcome.host.publicKey`.
    pub fn public_key_pem(&self) -> &str {
        &self.public_key_pem
    }
}

#[cfg(test)]
/// True when `signature` (base64) is `public_key_pem`'s signature of
/// `receipt`: what a provider checks, here for `--probe` and the tests.
pub fn verify(public_key_pem: &str, receipt: &Value, signature: &str) -> bool {
    let Some(raw) = spki_raw_key(public_key_pem) else {
        return false;
    };
    let Ok(signature) = STANDARD.decode(signature) else {
        return false;
    };
    UnparsedPublicKey::new(&ED25519, raw)
        .verify(&canonical_bytes(receipt), &signature)
        .is_ok()
}

fn spki_pem(raw: &[u8]) -> String {
    let mut der = ED25519_SPKI_PREFIX.to_vec();
    der.extend_from_slice(raw);
    format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        STANDARD.encode(der)
    )
}

#[cfg(test)]
fn spki_raw_key(pem: &str) -> Option<Vec<u8>> {
    let body: String = pem
        .lines()
        .filter(|line| !line.starts_with("-----"))
        .collect();
    let der = STANDARD.decode(body.trim()).ok()?;
    der.strip_prefix(&ED25519_SPKI_PREFIX[..])
        .filter(|raw| raw.len() == 32)
        .map(<[u8]>::to_vec)
}

#[cfg(test)]
#[path = "signing_tests.rs"]
mod tests;
