//! What a receipt holds of the tenant's own text: its argv (R11-1) and its
//! policy's network allowlist (R12-8). The tenant chooses both, up to the
//! spawn frame's 1 MiB, and a kept receipt (stateDir/receipts) held them
//! verbatim, so retention's count of receipts per tenant was no bound on
//! its bytes: ~0.93 MB a receipt with 9 × 100 KiB arguments, 361 KB with
//! 1024 destinations of 250-byte names (each expanded to an object). Past
//! its budget each keeps its first part and a digest of the whole beside it:
//! - `command.argvTruncated {args, bytes, sha256}`: the first arguments (the
//!   one that crosses cut at a character boundary), `bytes` the arguments'
//!   text, `sha256` of the whole argv as compact JSON;
//! - `policy.network.allowTruncated {entries, bytes, sha256}`: the first
//!   destinations whole (an entry is never cut), `bytes` and `sha256` of the
//!   whole list as compact JSON.
//!
//! The rest of a receipt is bounded without the tenant: `invocationId` (128
//! characters), `policy.filesystem.extra` and `hostBinds` (the host's
//! configuration: a remote `extra` is refused), the resources and
//! `remote.clamped` (numbers under fixed keys); the environment is in the
//! policy digest only. Network receipts are the host's record of the run:
//! streams within the host's `networkStreams` ceiling, refusals within the
//! engine's 4096 (their hosts cut to 253 bytes).
//!
//! The same cut makes `exit` fit its frame (exit_bound.rs, R12-3).

use cordon_launcher::request::policy::hex;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Bytes of argument text a kept receipt holds.
pub const KEPT_ARGV_BYTES: usize = 4096;

/// Bytes of allowlist (its compact JSON) a kept receipt holds.
pub const KEPT_ALLOW_BYTES: usize = 4096;

/// `receipt` with its argv and allowlist cut to their budgets, or `None`
/// when both are within them (kept as it is).
pub fn bounded(receipt: &Value) -> Option<Value> {
    let mut cut = receipt.clone();
    let argv = cut_argv(&mut cut);
    let allow = cut_allow(&mut cut);
    (argv || allow).then_some(cut)
}

/// The digest a client holding the whole receipt recomputes with
/// `JSON.stringify(list)` (serde_json's compact text is the same for the
/// strings, integers and booleans these lists hold).
fn digest(list: &[Value]) -> String {
    hex(&Sha256::digest(json!(list).to_string().as_bytes()))
}

fn cut_argv(receipt: &mut Value) -> bool {
    let Some(Value::Object(command)) = receipt.get_mut("command") else {
        return false;
    };
    let Some(Value::Array(argv)) = command.get("argv") else {
        return false;
    };
    let total: usize = argv.iter().map(|a| a.as_str().map_or(0, str::len)).sum();
    if total <= KEPT_ARGV_BYTES {
        return false;
    }
    let truncated = json!({"args": argv.len(), "bytes": total, "sha256": digest(argv)});
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
    command.insert("argv".into(), Value::Array(kept));
    command.insert("argvTruncated".into(), truncated);
    true
}

fn cut_allow(receipt: &mut Value) -> bool {
    let Some(Value::Object(network)) = receipt.pointer_mut("/policy/network") else {
        return false;
    };
    let Some(Value::Array(allow)) = network.get("allow") else {
        return false;
    };
    let total = json!(allow).to_string().len();
    if total <= KEPT_ALLOW_BYTES {
        return false;
    }
    let truncated = json!({"entries": allow.len(), "bytes": total, "sha256": digest(allow)});
    // The brackets, then each entry and its comma.
    let mut used = 2;
    let mut kept = Vec::new();
    for entry in allow {
        let size = entry.to_string().len() + usize::from(!kept.is_empty());
        if used + size > KEPT_ALLOW_BYTES {
            break;
        }
        used += size;
        kept.push(entry.clone());
    }
    network.insert("allow".into(), Value::Array(kept));
    network.insert("allowTruncated".into(), truncated);
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn destination(host: &str) -> Value {
        json!({"protocol": "tcp", "host": host, "port": 443, "requireTlsSni": false, "allowPrivateAddresses": false})
    }

    #[test]
    fn a_short_argv_and_allowlist_are_kept_whole() {
        let receipt = json!({
            "command": {"argv": ["/bin/true", "a"]},
            "policy": {"network": {"mode": "mediated", "allow": [destination("example.com")]}},
        });
        assert_eq!(bounded(&receipt), None);
    }

    #[test]
    fn a_long_argv_keeps_its_first_bytes_and_a_digest_of_the_whole() {
        let long = "é".repeat(3000); // 6000 bytes, two bytes a character
        let whole = json!(["/bin/sh", long, "tail"]);
        let receipt = bounded(&json!({"command": {"argv": whole}})).unwrap();
        let argv = receipt["command"]["argv"].as_array().unwrap();
        let kept: usize = argv.iter().map(|a| a.as_str().unwrap().len()).sum();
        assert!(kept <= KEPT_ARGV_BYTES && kept > KEPT_ARGV_BYTES - 2);
        assert_eq!(argv.len(), 2);
        let t = &receipt["command"]["argvTruncated"];
        assert_eq!(t["args"], json!(3));
        assert_eq!(t["bytes"], json!(7 + 6000 + 4));
        assert_eq!(
            t["sha256"],
            json!(hex(&Sha256::digest(whole.to_string().as_bytes())))
        );
    }

    #[test]
    fn a_long_allowlist_keeps_its_first_entries_whole_and_a_digest_of_the_whole() {
        let whole: Vec<Value> = (0..1024)
            .map(|i| destination(&format!("{i}.{}", "x".repeat(240))))
            .collect();
        let text = json!(whole).to_string();
        let receipt = json!({"command": {"argv": ["/bin/true"]}, "policy": {"network": {"mode": "mediated", "allow": whole}}});
        let receipt = bounded(&receipt).unwrap();
        let network = &receipt["policy"]["network"];
        let kept = network["allow"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 1024);
        assert_eq!(kept[..], whole[..kept.len()]);
        assert!(network["allow"].to_string().len() <= KEPT_ALLOW_BYTES);
        let t = &network["allowTruncated"];
        assert_eq!(t["entries"], json!(1024));
        assert_eq!(t["bytes"], json!(text.len()));
        assert_eq!(t["sha256"], json!(hex(&Sha256::digest(text.as_bytes()))));
        // The argv was within its budget: left as it was.
        assert_eq!(receipt["command"], json!({"argv": ["/bin/true"]}));
    }
}
