//! Effective limits (spec §5): each is `min(requested, command-line ceiling)`.

use serde_json::{json, Value};

use crate::cli::Config;
use crate::execute::RequestedLimits;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectiveLimits {
    pub max_tool_calls: u64,
    pub max_result_bytes: u64,
    pub timeout_ms: u64,
}

impl EffectiveLimits {
    pub fn clamp(requested: &RequestedLimits, config: &Config) -> Self {
        EffectiveLimits {
            max_tool_calls: requested.max_tool_calls.min(config.max_calls),
            max_result_bytes: requested.max_result_bytes.min(config.max_result_bytes),
            timeout_ms: requested.timeout_ms.min(config.timeout_ms),
        }
    }

    /// The `effectiveLimits` object of `ready`.
    pub fn to_json(self) -> Value {
        json!({
            "maxToolCalls": self.max_tool_calls,
            "maxResultBytes": self.max_result_bytes,
            "timeoutMs": self.timeout_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_is_the_smaller_of_request_and_ceiling() {
        let config = Config {
            max_calls: 5,
            max_result_bytes: 100,
            timeout_ms: 50,
            ..Config::default()
        };
        let requested = RequestedLimits {
            max_tool_calls: 9,
            max_result_bytes: 10,
            timeout_ms: u64::MAX,
        };
        let effective = EffectiveLimits::clamp(&requested, &config);
        assert_eq!(
            effective,
            EffectiveLimits {
                max_tool_calls: 5,
                max_result_bytes: 10,
                timeout_ms: 50
            }
        );
    }
}
