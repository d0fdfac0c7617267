//! Finds a repeated object key in JSON text. `serde_json` silently keeps the
//! last of two equal keys, and code-bridge-v1 requires refusing them (§1).
//!
//! Keys are compared after unescaping, so `"a"` and `"\u0061"` collide. The
//! scan is linear and allocates one set per open object; it expects text that
//! `serde_json` already accepted (so nesting is bounded by its depth limit)
//! and returns `Err` rather than panicking on anything else.

use std::collections::BTreeSet;

/// The text is not well-formed JSON (the caller should have parsed it first).
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed;

/// Returns the first key that appears twice in one object, if any.
pub fn find_duplicate_key(text: &[u8]) -> Result<Option<String>, Malformed> {
    // One entry per open container: `Some(keys)` for an object, `None` for an array.
    let mut open: Vec<Option<BTreeSet<String>>> = Vec::new();
    let mut expect_key = false;
    let mut index = 0;
    while index < text.len() {
        match text[index] {
            b'{' => {
                open.push(Some(BTreeSet::new()));
                expect_key = true;
            }
            b'[' => {
                open.push(None);
                expect_key = false;
            }
            b'}' | b']' => {
                open.pop().ok_or(Malformed)?;
                expect_key = false;
            }
            b',' => expect_key = matches!(open.last(), Some(Some(_))),
            b'"' => {
                let end = string_end(text, index)?;
                if expect_key {
                    let key: String =
                        serde_json::from_slice(&text[index..=end]).map_err(|_| Malformed)?;
                    let Some(Some(keys)) = open.last_mut() else {
                        return Err(Malformed);
                    };
                    if keys.contains(&key) {
                        return Ok(Some(key));
                    }
                    keys.insert(key);
                    expect_key = false;
                }
                index = end;
            }
            _ => {}
        }
        index += 1;
    }
    Ok(None)
}

/// Index of the closing quote of the string opening at `start`.
fn string_end(text: &[u8], start: usize) -> Result<usize, Malformed> {
    let mut index = start + 1;
    while index < text.len() {
        match text[index] {
            b'\\' => index += 2,
            b'"' => return Ok(index),
            _ => index += 1,
        }
    }
    Err(Malformed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<String> {
        find_duplicate_key(text.as_bytes()).expect("well-formed")
    }

    #[test]
    fn a_repeated_key_in_one_object_is_found() {
        assert_eq!(find(r#"{"type":"a","type":"b"}"#), Some("type".into()));
    }

    #[test]
    fn keys_collide_after_unescaping() {
        assert_eq!(find(r#"{"a":1,"\u0061":2}"#), Some("a".into()));
    }

    #[test]
    fn nested_duplicates_are_found_and_siblings_do_not_collide() {
        assert_eq!(find(r#"{"x":[{"k":1},{"k":2}],"y":{"k":{"k":1}}}"#), None);
        assert_eq!(find(r#"{"x":[{"k":1,"k":2}]}"#), Some("k".into()));
    }

    #[test]
    fn string_values_that_look_like_keys_are_ignored() {
        assert_eq!(find(r#"{"a":"a","b":["a","a"],"c":"\"a\""}"#), None);
    }

    #[test]
    fn truncated_text_is_malformed_not_a_panic() {
        assert_eq!(find_duplicate_key(br#"{"a":"\"#), Err(Malformed));
        assert_eq!(find_duplicate_key(b"}"), Err(Malformed));
    }
}
