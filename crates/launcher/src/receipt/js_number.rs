//! Numbers of a JSON value as JavaScript's `JSON.parse` would give them, for
//! values handed to JavaScript as objects (the receipt).
//!
//! Why: the addon's value conversion (napi's `serde-json`) turns an integer
//! beyond ±(2^53 − 1) into a `BigInt`, which `JSON.stringify` refuses — a
//! receipt holding one could not be logged, stored or digested. `JSON.parse`
//! gives the nearest double instead, and so does this. Receipts carry such
//! integers only where the kernel reports them (a device number, an inode of
//! an overlayfs with `xino` bits); `receipt.json` on disk keeps them exact.

use serde_json::{Number, Value};

/// Largest integer a JavaScript number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Replaces every integer of `value` beyond ±`MAX_SAFE_INTEGER` by the nearest
/// double. Iterative (an explicit stack), so depth costs heap, not stack.
pub fn to_js_numbers(value: &mut Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(n) => {
                if let Some(double) = unsafe_integer_as_double(n) {
                    *n = double;
                }
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Object(fields) => pending.extend(fields.values_mut()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
}

fn unsafe_integer_as_double(n: &Number) -> Option<Number> {
    let beyond = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u > MAX_SAFE_INTEGER,
        (None, Some(i)) => i.unsigned_abs() > MAX_SAFE_INTEGER,
        // Already a double.
        (None, None) => false,
    };
    if beyond {
        n.as_f64().and_then(Number::from_f64)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn integers_past_2_pow_53_become_the_double_json_parse_gives_and_the_rest_stay_exact() {
        let mut value = json!({
            "hostBinds": [{"inode": u64::MAX, "device": 2049}],
            "deep": [[[{"n": -(1_i64 << 60)}]]],
            "safe": MAX_SAFE_INTEGER,
            "negative": -42,
            "float": 0.5,
            "text": "18446744073709551615",
        });
        to_js_numbers(&mut value);
        let inode = &value["hostBinds"][0]["inode"];
        assert!(inode.is_f64(), "{inode}");
        assert_eq!(inode.as_f64(), Some(18_446_744_073_709_551_615_f64));
        assert_eq!(
            value["deep"][0][0][0]["n"].as_f64(),
            Some(-1_152_921_504_606_846_976_f64)
        );
        assert!(value["deep"][0][0][0]["n"].is_f64());
        assert_eq!(value["hostBinds"][0]["device"], json!(2049));
        assert!(value["hostBinds"][0]["device"].is_u64());
        assert_eq!(value["safe"], json!(MAX_SAFE_INTEGER));
        assert!(value["safe"].is_u64());
        assert_eq!(value["negative"], json!(-42));
        assert_eq!(value["float"], json!(0.5));
        assert_eq!(value["text"], json!("18446744073709551615"));
    }
}
