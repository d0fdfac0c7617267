//! What a kept receipt (stateDir/receipts) holds of the run's argv (R11-1):
//! the tenant chooses its arguments, up to the spawn frame's 1 MiB, and a
//! receipt kept them verbatim, so retention's count of receipts per tenant
//! was no bound on its bytes (~0.93 MB a receipt with 9 × 100 KiB
//! arguments). Past [`KEPT_ARGV_BYTES`] the kept receipt has the first
//! arguments (the one that crosses cut at a character boundary) and
//! `command.argvTruncated {args, bytes, sha256}` of the whole argv; the
//! client's `exit` carries it whole.

use cordon_launcher::request::policy::hex;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Bytes of argument text a kept receipt holds.
pub const KEPT_ARGV_BYTES: usize = 4096;

/// `receipt` with its argv cut to [`KEPT_ARGV_BYTES`], or `None` when it
/// is within them (kept as it is).
pub fn bounded(receipt: &Value) -> Option<Value> {
    let argv = receipt.pointer("/command/argv")?.as_array()?;
    let total: usize = argv.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
    if total <= KEPT_ARGV_BYTES {
        return None;
    }
    // The digest of the argv as JSON text: what a client holding the whole
    // receipt recomputes from JSON.stringify(receipt.command.argv).
    let digest = Sha256::digest(Value::Array(argv.clone()).to_string().as_bytes());
    let mut room = KEPT_ARGV_BYTES;
    let mut kept = Vec::new();
    for arg in argv {
        if room == 0 {
            break;
        }
        let text = arg.as_str().unwrap_or("");
        let mut end = text.len().min(room);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        room -= end;
        kept.push(Value::String(text[..end].to_string()));
        // What follows a cut argument would read as its continuation.
        if end < text.len() {
            break;
        }
    }
    let truncated = json!({"args": argv.len(), "bytes": total, "sha256": hex(&digest)});
    let mut cut = receipt.clone();
    let command = cut.get_mut("command")?.as_object_mut()?;
    command.insert("argv".into(), Value::Array(kept));
    command.insert("argvTruncated".into(), truncated);
    Some(cut)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_short_argv_is_kept_whole() {
        let receipt = json!({"command": {"argv": ["/bin/true", "a"]}});
        assert_eq!(bounded(&receipt), None);
    }

    #[test]
    fn a_long_argv_keeps_its_first_bytes_and_a_digest_of_the_whole() {
        let long = "é".repeat(3000); // 6000 bytes, two bytes a character
        let receipt = bounded(&json!({"command": {"argv": ["/bin/sh", long, "tail"]}})).unwrap();
        let argv = receipt["command"]["argv"].as_array().unwrap();
        let kept: usize = argv.iter().map(|a| a.as_str().unwrap().len()).sum();
        assert!(kept <= KEPT_ARGV_BYTES && kept > KEPT_ARGV_BYTES - 2);
        assert_eq!(argv.len(), 2);
        let t = &receipt["command"]["argvTruncated"];
        assert_eq!(t["args"], json!(3));
        assert_eq!(t["bytes"], json!(7 + 6000 + 4));
        assert_eq!(t["sha256"].as_str().unwrap().len(), 64);
    }
}
