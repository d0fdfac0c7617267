//! The cordon extensions to code-bridge-v1 (docs/runner.md, "Extensions"):
//! what the host asked for in `execute.extensions`, validated after §4
//! step 5, and what the runner confirms in `ready`.
//!
//! A host that sends no `extensions` field gets byte-for-byte v1: no
//! `extensions` key in `ready`, v1 tool calls, console on stderr.

use serde_json::{json, Map, Value};

use crate::execute_rule::{integer_value, invalid, InvalidExecute};
use crate::mailbox::QUEUE_CAPACITY;
use crate::timers::MAX_LIVE_CEILING;

/// Most fetches one execution may ask for (`fetch.maxRequests`): a typo
/// must not mean "unlimited"; the host sets the real budget.
pub const MAX_REQUESTS_CEILING: u64 = 100_000;

/// Most tool calls outstanding on the wire: the reader queue depth, so that
/// a correct host can never overflow the queue with results.
pub const MAX_OUTSTANDING_CEILING: u64 = QUEUE_CAPACITY as u64;

/// The known members of `execute.extensions`, as requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestedExtensions {
    /// `concurrentToolCalls.maxOutstanding`, 1..=8.
    pub max_outstanding: Option<u64>,
    /// `console.maxLogBytes`, ≥ 1.
    pub max_log_bytes: Option<u64>,
    /// `timers.maxLive`, 1..=[`MAX_LIVE_CEILING`].
    pub max_live_timers: Option<u64>,
    /// `fetch.maxRequests`, 1..=[`MAX_REQUESTS_CEILING`]; needs
    /// `concurrentToolCalls` (a fetch is a promised call).
    pub max_requests: Option<u64>,
}

/// The confirmed extensions: each value is `min(requested, runner ceiling)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extensions {
    pub max_outstanding: Option<u64>,
    pub max_log_bytes: Option<u64>,
    pub max_live_timers: Option<u64>,
    pub max_requests: Option<u64>,
}

impl Extensions {
    /// Clamps a request to the runner's ceilings (`--max-log-bytes` for the
    /// console budget, `--max-requests`, when given, for fetch).
    pub fn clamp(
        requested: RequestedExtensions,
        max_log_bytes_ceiling: u64,
        max_requests_ceiling: Option<u64>,
    ) -> Self {
        Extensions {
            max_outstanding: requested
                .max_outstanding
                .map(|k| k.min(MAX_OUTSTANDING_CEILING)),
            max_log_bytes: requested
                .max_log_bytes
                .map(|b| b.min(max_log_bytes_ceiling)),
            max_live_timers: requested.max_live_timers,
            max_requests: requested
                .max_requests
                .map(|n| max_requests_ceiling.map_or(n, |ceiling| n.min(ceiling))),
        }
    }

    /// The `extensions` object of `ready`: exactly the known members that
    /// were requested, with their effective values.
    pub fn to_json(self) -> Value {
        let mut confirmed = Map::new();
        if let Some(k) = self.max_outstanding {
            confirmed.insert("concurrentToolCalls".into(), json!({"maxOutstanding": k}));
        }
        if let Some(bytes) = self.max_log_bytes {
            confirmed.insert("console".into(), json!({"maxLogBytes": bytes}));
        }
        if let Some(live) = self.max_live_timers {
            confirmed.insert("timers".into(), json!({"maxLive": live}));
        }
        if let Some(requests) = self.max_requests {
            confirmed.insert("fetch".into(), json!({"maxRequests": requests}));
        }
        Value::Object(confirmed)
    }
}

/// Validates `execute.extensions`: absent → `None`; present → an object
/// whose known members have the right shape. Unknown members are ignored.
pub fn validate(extensions: Option<&Value>) -> Result<Option<RequestedExtensions>, InvalidExecute> {
    let Some(extensions) = extensions else {
        return Ok(None);
    };
    let Value::Object(extensions) = extensions else {
        return Err(invalid("execute.extensions", "must be an object"));
    };
    let requested = RequestedExtensions {
        max_outstanding: member_integer(
            extensions,
            "concurrentToolCalls",
            "maxOutstanding",
            1..=MAX_OUTSTANDING_CEILING,
        )?,
        max_log_bytes: member_integer(extensions, "console", "maxLogBytes", 1..=u64::MAX)?,
        max_live_timers: member_integer(extensions, "timers", "maxLive", 1..=MAX_LIVE_CEILING)?,
        max_requests: member_integer(extensions, "fetch", "maxRequests", 1..=MAX_REQUESTS_CEILING)?,
    };
    if requested.max_requests.is_some() && requested.max_outstanding.is_none() {
        return Err(invalid(
            "execute.extensions.fetch",
            "needs concurrentToolCalls (a fetch is a promised call)",
        ));
    }
    Ok(Some(requested))
}

/// `extensions[member][field]` as a JSON integer in `range`; `None` when
/// the member is absent.
fn member_integer(
    extensions: &Map<String, Value>,
    member: &str,
    field: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, InvalidExecute> {
    let Some(value) = extensions.get(member) else {
        return Ok(None);
    };
    let Value::Object(object) = value else {
        return Err(invalid(
            format!("execute.extensions.{member}"),
            "must be an object",
        ));
    };
    let rule = if *range.end() == u64::MAX {
        format!("must be a JSON integer >= {}", range.start())
    } else {
        format!("must be a JSON integer {}..{}", range.start(), range.end())
    };
    let path = format!("execute.extensions.{member}.{field}");
    match object.get(field) {
        Some(Value::Number(number)) => match integer_value(number) {
            Some(n) if range.contains(&n) => Ok(Some(n)),
            _ => Err(invalid(path, rule)),
        },
        _ => Err(invalid(path, rule)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(value: Value) -> String {
        validate(Some(&value)).expect_err("refused").path
    }

    #[test]
    fn absent_means_v1_and_an_empty_object_confirms_nothing() {
        assert_eq!(validate(None), Ok(None));
        let empty = validate(Some(&json!({}))).expect("valid").expect("present");
        assert_eq!(Extensions::clamp(empty, 10, None).to_json(), json!({}));
    }

    #[test]
    fn known_members_are_clamped_and_unknown_ones_ignored() {
        let requested = validate(Some(&json!({"concurrentToolCalls": {"maxOutstanding": 8},
                                              "console": {"maxLogBytes": 1_000_000},
                                              "timers": {"maxLive": 100},
                                              "future": {"x": 1}})))
        .expect("valid")
        .expect("present");
        assert_eq!(
            Extensions::clamp(requested, 65536, None).to_json(),
            json!({"concurrentToolCalls": {"maxOutstanding": 8},
                   "console": {"maxLogBytes": 65536}, "timers": {"maxLive": 100}})
        );
    }

    #[test]
    fn fetch_is_confirmed_with_concurrent_calls_and_refused_without() {
        let requested = validate(Some(&json!({"concurrentToolCalls": {"maxOutstanding": 2},
                                              "fetch": {"maxRequests": 5}})))
        .expect("valid")
        .expect("present");
        assert_eq!(
            Extensions::clamp(requested, 10, None).to_json(),
            json!({"concurrentToolCalls": {"maxOutstanding": 2}, "fetch": {"maxRequests": 5}})
        );
        // `--max-requests` lowers what is confirmed, never raises it.
        assert_eq!(
            Extensions::clamp(requested, 10, Some(3)).to_json()["fetch"],
            json!({"maxRequests": 3})
        );
        assert_eq!(
            Extensions::clamp(requested, 10, Some(9)).to_json()["fetch"],
            json!({"maxRequests": 5})
        );
        assert_eq!(
            path(json!({"fetch": {"maxRequests": 5}})),
            "execute.extensions.fetch"
        );
        for bad in [json!(0), json!(100_001), json!(1.5), json!("3")] {
            assert_eq!(
                path(json!({"concurrentToolCalls": {"maxOutstanding": 2},
                            "fetch": {"maxRequests": bad}})),
                "execute.extensions.fetch.maxRequests"
            );
        }
    }

    #[test]
    fn bad_shapes_name_their_path() {
        assert_eq!(path(json!([])), "execute.extensions");
        assert_eq!(
            path(json!({"concurrentToolCalls": 4})),
            "execute.extensions.concurrentToolCalls"
        );
        for bad in [json!(0), json!(9), json!(2.0), json!("2"), json!(null)] {
            assert_eq!(
                path(json!({"concurrentToolCalls": {"maxOutstanding": bad}})),
                "execute.extensions.concurrentToolCalls.maxOutstanding"
            );
        }
        for bad in [json!(0), json!(100_001), json!(1.5)] {
            assert_eq!(
                path(json!({"timers": {"maxLive": bad}})),
                "execute.extensions.timers.maxLive"
            );
        }
        assert_eq!(
            path(json!({"concurrentToolCalls": {}})),
            "execute.extensions.concurrentToolCalls.maxOutstanding"
        );
        for bad in [json!(0), json!(-1), json!(1e3), json!({})] {
            assert_eq!(
                path(json!({"console": {"maxLogBytes": bad}})),
                "execute.extensions.console.maxLogBytes"
            );
        }
    }
}
