//! The bytes a receipt signature covers: the receipt's canonical JSON exactly
//! as `canonicalJson` in lib/code-mode/audit.js spells it for the object a
//! JavaScript client gets from `JSON.parse` — the same bytes whose SHA-256 is
//! the receipt digest (`receiptDigest`) of audit records. So a provider
//! verifies with `crypto.verify(null, Buffer.from(canonicalJson(receipt)),
//! publicKey, signature)` and nothing else.
//!
//! The spelling, step by step:
//! 1. numbers as `JSON.parse` gives them: integers beyond ±(2^53 − 1) become
//!    the nearest double (the launcher's `to_js_numbers`, reused);
//! 2. objects: keys sorted by UTF-16 code units (JavaScript's default
//!    `Array.prototype.sort`), `{"k":v,…}`, no whitespace;
//! 3. strings as `JSON.stringify` writes them (`"`, `\`, `\b \f \n \r \t`,
//!    other controls as `\u00xx`; everything else literal UTF-8);
//! 4. numbers as `Number.prototype.toString`: shortest round-trip digits,
//!    fixed notation for decimal exponents in [-7, 21), else `d.ddde±x`.

use cordon_launcher::receipt::js_number::to_js_numbers;
use serde_json::{Number, Value};

/// Largest decimal exponent JavaScript still writes in fixed notation (1e21 is not).
const JS_FIXED_MAX_EXPONENT: i32 = 21;
/// Smallest: 1e-6 is written `0.000001`, 1e-7 is `1e-7`.
const JS_FIXED_MIN_EXPONENT: i32 = -6;

/// The canonical bytes of `receipt` (see the module comment).
pub fn canonical_bytes(receipt: &Value) -> Vec<u8> {
    let mut value = receipt.clone();
    to_js_numbers(&mut value);
    let mut out = String::new();
    encode(&value, &mut out);
    out.into_bytes()
}

/// Recursive over the receipt, which the launcher builds (a few levels deep),
/// never over input a sandbox controls.
fn encode(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&js_number(n)),
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            let mut entries: Vec<(&String, &Value)> = fields.iter().collect();
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                encode(item, out);
            }
            out.push('}');
        }
    }
}

/// `Number.prototype.toString()` of a JSON number.
fn js_number(n: &Number) -> String {
    if n.is_u64() || n.is_i64() {
        // Safe integers (to_js_numbers made the others doubles): as written.
        return n.to_string();
    }
    // Zero (and -0) come out as "0", like JavaScript's.
    n.as_f64().map_or_else(|| n.to_string(), js_double)
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
