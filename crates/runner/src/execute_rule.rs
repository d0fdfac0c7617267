//! What the `execute` frame's validators share (execute.rs for spec §4,
//! extensions.rs for the cordon extensions): the first rule a field broke,
//! and how an integer field is read. Its own module so that execute.rs
//! depends on extensions.rs and not the other way round.

use std::fmt;

use serde_json::Number;

/// The first rule the frame broke, with the path of the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidExecute {
    pub path: String,
    pub rule: String,
}

impl fmt::Display for InvalidExecute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.rule)
    }
}

pub fn invalid(path: impl Into<String>, rule: impl Into<String>) -> InvalidExecute {
    InvalidExecute {
        path: path.into(),
        rule: rule.into(),
    }
}

/// The value of a JSON integer token (no fraction, no exponent: `5000.0` and
/// `5e3` are not integers); `None` for non-integers and negative integers.
/// serde_json reads integer tokens beyond 64 bits as floats, so those are
/// refused too.
pub fn integer_value(number: &Number) -> Option<u64> {
    number.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_tokens_are_integers_and_floats_are_not() {
        let number = |text: &str| serde_json::from_str::<Number>(text).expect("number");
        assert_eq!(
            integer_value(&number("18446744073709551615")),
            Some(u64::MAX)
        );
        for text in [
            "5000.0",
            "5e3",
            "-1",
            "-0",
            "123456789012345678901234567890",
        ] {
            assert_eq!(integer_value(&number(text)), None, "{text}");
        }
    }
}
