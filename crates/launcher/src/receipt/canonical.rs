//! The bytes a receipt signature covers: the receipt's canonical JSON exactly
//! as `canonicalJson` in lib/code-mode/audit.js spells it for the object a
//! JavaScript client gets from `JSON.parse` — the same bytes whose SHA-256 is
//! the receipt digest (`receiptDigest`) of audit records. So a provider
//! verifies with `crypto.verify(null, Buffer.from(canonicalJson(receipt)),
//! publicKey, signature)` and nothing else.
//!
//! The spelling, step by step:
//! 1. numbers as `JSON.parse` gives them: integers beyond ±(2^53 − 1) become
//!    the nearest double (as the launcher's `to_js_numbers` makes them);
//! 2. objects: keys sorted by UTF-16 code units (JavaScript's default
//!    `Array.prototype.sort`), `{"k":v,…}`, no whitespace;
//! 3. strings as `JSON.stringify` writes them (`"`, `\`, `\b \f \n \r \t`,
//!    other controls as `\u00xx`; everything else literal UTF-8);
//! 4. numbers as `Number.prototype.toString`: shortest round-trip digits,
//!    fixed notation for decimal exponents in [-7, 21), else `d.ddde±x`.

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

use crate::receipt::js_number::MAX_SAFE_INTEGER;

/// Largest decimal exponent JavaScript still writes in fixed notation (1e21 is not).
const JS_FIXED_MAX_EXPONENT: i32 = 21;
/// Smallest: 1e-6 is written `0.000001`, 1e-7 is `1e-7`.
const JS_FIXED_MIN_EXPONENT: i32 = -6;

/// The canonical bytes of `receipt` (see the module comment).
pub fn canonical_bytes(receipt: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    encode(receipt, &mut out);
    out
}

/// `sha256:<hex>` of the canonical bytes: an audit record's `receiptDigest`
/// (lib/code-mode/audit.js `receiptDigest` computes the same from the object
/// JavaScript holds). Computed by the launcher before `Finished`, so the JS
/// thread does not canonicalize and hash every receipt on a run's path.
pub fn digest(receipt: &Value) -> String {
    let hash = Sha256::digest(canonical_bytes(receipt));
    format!("sha256:{}", crate::request::policy::hex(&hash))
}

/// Recursive over the receipt, which the launcher builds (a few levels deep),
/// never over input a sandbox controls. Writes in place: no copy of the
/// receipt and no allocation per string or number (this runs on every run's
/// path to `Finished`).
fn encode(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => js_number(n, out),
        Value::String(s) => json_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                encode(item, out);
            }
            out.push(b']');
        }
        Value::Object(fields) => {
            out.push(b'{');
            if in_utf16_order(fields) {
                for (i, (key, item)) in fields.iter().enumerate() {
                    field(i, key, item, out);
                }
            } else {
                let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
                entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    field(i, key, item, out);
                }
            }
            out.push(b'}');
        }
    }
}

fn field(index: usize, key: &str, item: &Value, out: &mut Vec<u8>) {
    if index > 0 {
        out.push(b',');
    }
    json_string(key, out);
    out.push(b':');
    encode(item, out);
}

/// Whether the map already iterates in UTF-16 code-unit order, as a
/// JavaScript sort would put its keys. Byte order of UTF-8 is code-point
/// order, which is UTF-16 order for keys without a character past U+FFFF
/// (4-byte sequences, lead byte ≥ 0xF0); a map with such a key is sorted.
fn in_utf16_order(fields: &serde_json::Map<String, Value>) -> bool {
    let mut previous: Option<&str> = None;
    for key in fields.keys() {
        if key.bytes().any(|b| b >= 0xF0) || previous.is_some_and(|p| p >= key.as_str()) {
            return false;
        }
        previous = Some(key);
    }
    true
}

/// A string as `JSON.stringify` writes it: serde_json escapes the same
/// characters the same way for any Rust string (which holds no lone
/// surrogate, the one case where they differ).
fn json_string(s: &str, out: &mut Vec<u8>) {
    // Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// `Number.prototype.toString()` of the number `JSON.parse` gives for `n`:
/// safe integers as written; integers beyond ±(2^53 − 1) and the rest as
/// the nearest double (the launcher's `to_js_numbers`).
fn js_number(n: &Number, out: &mut Vec<u8>) {
    use std::io::Write;
    let safe = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u <= MAX_SAFE_INTEGER,
        (None, Some(i)) => i.unsigned_abs() <= MAX_SAFE_INTEGER,
        (None, None) => false,
    };
    if safe {
        let _ = write!(out, "{n}");
    } else if let Some(x) = n.as_f64() {
        // Zero (and -0) come out as "0", like JavaScript's.
        out.extend_from_slice(js_double(x).as_bytes());
    } else {
        let _ = write!(out, "{n}");
    }
}

/// ECMAScript Number::toString(10) from Rust's shortest round-trip digits.
fn js_double(x: f64) -> String {
    // `{:e}` is the shortest round-trip form: `-1.2345e-7`, `1e21`.
    let text = format!("{:e}", x.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if x < 0.0 { "-" } else { "" };
    let k = digits.len() as i32;
    // ECMAScript's n: the decimal point sits after n digits.
    let n = exponent + 1;
    let body = if (JS_FIXED_MIN_EXPONENT..JS_FIXED_MAX_EXPONENT).contains(&exponent) {
        if n >= k {
            format!("{digits}{}", "0".repeat((n - k) as usize))
        } else if n > 0 {
            format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
        } else {
            format!("0.{}{digits}", "0".repeat((-n) as usize))
        }
    } else {
        let e_sign = if exponent < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{fraction}e{e_sign}{}", exponent.abs())
    };
    format!("{sign}{body}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level_and_nothing_is_spaced() {
        let receipt = json!({"b": 1, "a": {"z": [true, null], "y": "x"}});
        let text = String::from_utf8(canonical_bytes(&receipt)).unwrap();
        assert_eq!(text, r#"{"a":{"y":"x","z":[true,null]},"b":1}"#);
    }

    #[test]
    fn keys_past_u_ffff_sort_by_utf16_code_units_as_javascript_sorts_them() {
        // UTF-8 byte order puts U+FFFD before U+1F600; UTF-16 (a surrogate,
        // 0xD83D) puts it after, and so does `Object.keys(o).sort()`.
        let receipt = json!({"\u{FFFD}": 1, "\u{1F600}": 2, "a": {"\u{E000}": 3, "\u{10000}": 4}});
        let text = String::from_utf8(canonical_bytes(&receipt)).unwrap();
        assert_eq!(
            text,
            "{\"a\":{\"\u{10000}\":4,\"\u{E000}\":3},\"\u{1F600}\":2,\"\u{FFFD}\":1}"
        );
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_bytes() {
        let receipt = json!({"b": 1, "a": [1.5, "x"]});
        // sha256 of `{"a":[1.5,"x"],"b":1}`, as `crypto.createHash('sha256')` gives it.
        assert_eq!(
            digest(&receipt),
            "sha256:27edd5497e48a293750749399a10333aae187927cecaf38c5ac50f54bbaa13b7"
        );
    }

    #[test]
    fn doubles_are_spelled_as_javascript_spells_them() {
        let cases = [
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.8446744073709552e19, "18446744073709552000"),
            (1e-6, "0.000001"),
            (1.5e-7, "1.5e-7"),
            (123456.789, "123456.789"),
            (-2.5e300, "-2.5e+300"),
        ];
        for (x, want) in cases {
            assert_eq!(js_double(x), want, "{x}");
        }
    }

    #[test]
    fn an_integer_past_2_pow_53_is_signed_as_the_double_json_parse_gives() {
        let text = String::from_utf8(canonical_bytes(&json!({"inode": u64::MAX}))).unwrap();
        assert_eq!(text, r#"{"inode":18446744073709552000}"#);
    }
}
