//! Strict reading of JSON objects: every key must be known, every value must
//! have the documented type. Used for the policy and the launch options so
//! that a typo is an error, never a silently ignored setting.

use serde_json::{Map, Value};

/// Largest integer JavaScript represents exactly (2^53 − 1): larger values
/// cannot round-trip through a JS number, so they are refused.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Why a JSON value was refused, with its dotted path (`policy.network.mode`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct FieldError {
    pub path: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(path: &str, reason: impl Into<String>) -> Self {
        FieldError {
            path: path.to_string(),
            reason: reason.into(),
        }
    }
}

/// A JSON object being read field by field; `finish` rejects leftovers.
pub struct ObjectReader<'a> {
    path: String,
    map: &'a Map<String, Value>,
    allowed: &'static [&'static str],
}

impl<'a> ObjectReader<'a> {
    /// Reads `value` at `path` as an object whose keys are all in `allowed`.
    pub fn new(
        path: &str,
        value: &'a Value,
        allowed: &'static [&'static str],
    ) -> Result<Self, FieldError> {
        let map = value
            .as_object()
            .ok_or_else(|| FieldError::new(path, "must be a plain object"))?;
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(FieldError::new(
                &format!("{path}.{unknown}"),
                format!("unknown key (allowed: {})", allowed.join(", ")),
            ));
        }
        Ok(ObjectReader {
            path: path.to_string(),
            map,
            allowed,
        })
    }

    /// The dotted path of a child key.
    pub fn child_path(&self, key: &str) -> String {
        debug_assert!(self.allowed.contains(&key));
        format!("{}.{key}", self.path)
    }

    /// The raw value of `key`, `None` when absent (JSON null counts as absent).
    pub fn optional(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// The raw value of `key`; absent is an error.
    pub fn required(&self, key: &str) -> Result<&'a Value, FieldError> {
        self.optional(key)
            .ok_or_else(|| FieldError::new(&self.child_path(key), "is required"))
    }

    pub fn required_str(&self, key: &str) -> Result<&'a str, FieldError> {
        as_str(&self.child_path(key), self.required(key)?)
    }

    pub fn optional_str(&self, key: &str) -> Result<Option<&'a str>, FieldError> {
        self.optional(key)
            .map(|v| as_str(&self.child_path(key), v))
            .transpose()
    }

    pub fn optional_u64(&self, key: &str) -> Result<Option<u64>, FieldError> {
        self.optional(key)
            .map(|v| as_u64(&self.child_path(key), v))
            .transpose()
    }
}

/// A string without NUL bytes (they cannot cross into argv or paths).
pub fn as_str<'a>(path: &str, value: &'a Value) -> Result<&'a str, FieldError> {
    let text = value
        .as_str()
        .ok_or_else(|| FieldError::new(path, "must be a string"))?;
    if text.contains('\0') {
        return Err(FieldError::new(path, "must not contain NUL bytes"));
    }
    Ok(text)
}

/// A non-negative integer JavaScript can represent exactly.
pub fn as_u64(path: &str, value: &Value) -> Result<u64, FieldError> {
    match value.as_u64() {
        Some(n) if n <= MAX_SAFE_INTEGER => Ok(n),
        _ => Err(FieldError::new(
            path,
            "must be a non-negative integer no larger than 2^53-1",
        )),
    }
}

/// An array (empty allowed).
pub fn as_array<'a>(path: &str, value: &'a Value) -> Result<&'a Vec<Value>, FieldError> {
    value
        .as_array()
        .ok_or_else(|| FieldError::new(path, "must be an array"))
}
