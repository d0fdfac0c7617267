//! The one outgoing JSON spelling (spec §1): compact, object keys sorted by
//! code point, every non-ASCII character escaped as `\uXXXX` (UTF-16 units).
//!
//! Keys are sorted here rather than trusted to `serde_json::Map`, whose order
//! changes if any crate in the build enables `preserve_order`.

use serde_json::Value;

/// Appends the canonical spelling of `value` to `out`.
pub fn encode_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Integers as written; floats in their shortest round-trip form.
        Value::Number(number) => out.extend_from_slice(number.to_string().as_bytes()),
        Value::String(text) => encode_string(text, out),
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                encode_into(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // UTF-8 byte order is code point order.
            entries.sort_unstable_by(|left, right| left.0.cmp(right.0));
            out.push(b'{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                encode_string(key, out);
                out.push(b':');
                encode_into(item, out);
            }
            out.push(b'}');
        }
    }
}

/// The canonical spelling of `value` as a fresh buffer.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(value, &mut out);
    out
}

fn encode_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for character in text.chars() {
        match character {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            ' '..='\u{7f}' => out.push(character as u8),
            _ => {
                let mut units = [0u16; 2];
                for unit in character.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                }
            }
        }
    }
    out.push(b'"');
}

/// The longest `JSON.stringify` text whose canonical spelling (what
/// `maxResultBytes` counts) can still fit `max_result_bytes`. The canonical
/// spelling is never shorter than 5/6 of it: it escapes every non-ASCII
/// character (longer), and differs otherwise only in numbers, where it
/// saves at most one byte of a 5-byte token and its separator (`1e+21,` →
/// `1e21,`).
pub(crate) fn parse_ceiling(max_result_bytes: u64) -> u64 {
    max_result_bytes
        .saturating_add(max_result_bytes / 5)
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: &Value) -> String {
        String::from_utf8(encode(value)).expect("canonical JSON is ASCII")
    }

    #[test]
    fn keys_are_sorted_at_every_depth_and_output_is_compact() {
        let value = json!({"b": 1, "a": {"z": [true, null], "m": "x"}});
        assert_eq!(text(&value), r#"{"a":{"m":"x","z":[true,null]},"b":1}"#);
    }

    #[test]
    fn non_ascii_is_escaped_as_utf16_units_and_controls_are_escaped() {
        let value = json!("é\u{1F600}\u{1}\n\"\\/\u{7f}");
        assert_eq!(
            text(&value),
            r#""\u00e9\ud83d\ude00\u0001\n\"\\/"#.to_owned() + "\u{7f}\""
        );
    }

    #[test]
    fn the_output_parses_back_to_the_same_value() {
        let value = json!({"ünï": ["\u{10FFFF}", 1.5, -0, 12345678901234567890u64]});
        let parsed: Value = serde_json::from_slice(&encode(&value)).expect("valid JSON");
        assert_eq!(parsed, value);
    }
}
