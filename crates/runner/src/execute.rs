//! Validation of the `execute` frame (spec §4), in the specified order. The
//! first failure names its field path (`execute.limits.timeoutMs`, …); `main`
//! prints it and exits 1 without sending any frame.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::execute_rule::{integer_value, invalid, InvalidExecute};
use crate::extensions::{self, RequestedExtensions};

pub const PROTOCOL_VERSION: &str = "code-bridge-v1";
/// Most tools one execution may declare.
const MAX_TOOLS: usize = 512;
/// Longest tool name, in UTF-8 bytes.
const MAX_TOOL_NAME_BYTES: usize = 256;

/// The limits the host asked for, before clamping to the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedLimits {
    pub max_tool_calls: u64,
    pub max_result_bytes: u64,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteRequest {
    /// Copied into `ready` and `execution.result`; `None` is sent as null.
    pub execution_id: Option<String>,
    pub code: String,
    /// Declared tool names, in catalogue order.
    pub tool_names: Vec<String>,
    pub limits: RequestedLimits,
    /// `None` when the frame had no `extensions` field (plain v1).
    pub extensions: Option<RequestedExtensions>,
}

/// Validates steps 1–5 of §4 in order, then `extensions` (docs/runner.md).
/// Unknown extra fields are ignored.
pub fn validate(frame: &Map<String, Value>) -> Result<ExecuteRequest, InvalidExecute> {
    if frame.get("version").and_then(Value::as_str) != Some(PROTOCOL_VERSION) {
        return Err(invalid(
            "execute.version",
            format!("must be \"{PROTOCOL_VERSION}\""),
        ));
    }
    if frame.get("type").and_then(Value::as_str) != Some("execute") {
        return Err(invalid("execute.type", "must be \"execute\""));
    }
    let code = match frame.get("code") {
        Some(Value::String(code)) if !code.is_empty() && !code.contains('\0') => code.clone(),
        _ => {
            return Err(invalid(
                "execute.code",
                "must be a non-empty string without NUL",
            ))
        }
    };
    let execution_id = match frame.get("executionId") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) if !id.contains('\0') => Some(id.clone()),
        Some(_) => {
            return Err(invalid(
                "execute.executionId",
                "must be absent, null or a string without NUL",
            ))
        }
    };
    let limits = validate_limits(frame.get("limits"))?;
    let tool_names = validate_tools(frame.get("tools"))?;
    let extensions = extensions::validate(frame.get("extensions"))?;
    Ok(ExecuteRequest {
        execution_id,
        code,
        tool_names,
        limits,
        extensions,
    })
}

fn validate_limits(limits: Option<&Value>) -> Result<RequestedLimits, InvalidExecute> {
    let Some(Value::Object(limits)) = limits else {
        return Err(invalid("execute.limits", "must be an object"));
    };
    let field = |name: &str, minimum: u64| -> Result<u64, InvalidExecute> {
        let path = format!("execute.limits.{name}");
        match limits.get(name) {
            None => Err(invalid(path, "is required")),
            Some(Value::Number(number)) => match integer_value(number) {
                Some(value) if value >= minimum => Ok(value),
                _ => Err(invalid(
                    path,
                    format!("must be a JSON integer >= {minimum}"),
                )),
            },
            Some(_) => Err(invalid(
                path,
                format!("must be a JSON integer >= {minimum}"),
            )),
        }
    };
    Ok(RequestedLimits {
        max_tool_calls: field("maxToolCalls", 0)?,
        max_result_bytes: field("maxResultBytes", 1)?,
        timeout_ms: field("timeoutMs", 1)?,
    })
}

fn validate_tools(tools: Option<&Value>) -> Result<Vec<String>, InvalidExecute> {
    let Some(Value::Array(tools)) = tools else {
        return Err(invalid("execute.tools", "must be an array"));
    };
    if tools.len() > MAX_TOOLS {
        return Err(invalid(
            "execute.tools",
            format!("must hold at most {MAX_TOOLS} tools"),
        ));
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut names = Vec::with_capacity(tools.len());
    for (index, tool) in tools.iter().enumerate() {
        let Value::Object(tool) = tool else {
            return Err(invalid(
                format!("execute.tools[{index}]"),
                "must be an object",
            ));
        };
        let path = format!("execute.tools[{index}].name");
        let name = match tool.get("name") {
            Some(Value::String(name))
                if (1..=MAX_TOOL_NAME_BYTES).contains(&name.len()) && !name.contains('\0') =>
            {
                name
            }
            _ => {
                let rule = format!("must be a string of 1-{MAX_TOOL_NAME_BYTES} bytes without NUL");
                return Err(invalid(path, rule));
            }
        };
        if let Some(first) = seen.insert(name, index) {
            return Err(invalid(
                path,
                format!("repeats execute.tools[{first}].name"),
            ));
        }
        names.push(name.clone());
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("test frames are objects"),
        }
    }

    fn valid() -> Value {
        json!({"version": "code-bridge-v1", "type": "execute", "executionId": "e1",
               "code": "return 1", "tools": [{"name": "a.b"}],
               "limits": {"maxToolCalls": 0, "maxResultBytes": 1, "timeoutMs": 1}})
    }

    fn failing_path(mutate: impl FnOnce(&mut Map<String, Value>)) -> String {
        let mut map = frame(valid());
        mutate(&mut map);
        validate(&map).expect_err("must be refused").path
    }

    #[test]
    fn a_valid_frame_yields_its_fields_and_extra_fields_are_ignored() {
        let mut map = frame(valid());
        map.insert("extra".into(), json!(true));
        let request = validate(&map).expect("valid");
        assert_eq!(request.execution_id.as_deref(), Some("e1"));
        assert_eq!(request.tool_names, vec!["a.b".to_owned()]);
        assert_eq!(request.limits.max_tool_calls, 0);
    }

    #[test]
    fn an_absent_or_null_execution_id_is_none() {
        let mut map = frame(valid());
        map.remove("executionId");
        assert_eq!(validate(&map).expect("valid").execution_id, None);
        map.insert("executionId".into(), Value::Null);
        assert_eq!(validate(&map).expect("valid").execution_id, None);
    }

    #[test]
    fn the_first_failure_in_spec_order_names_its_field() {
        let path = failing_path(|m| {
            m.insert("type".into(), json!("cancel"));
            m.insert("code".into(), json!(""));
        });
        assert_eq!(path, "execute.type");
        let path = failing_path(|m| {
            m.insert("code".into(), json!("a\u{0}b"));
            m.remove("limits");
        });
        assert_eq!(path, "execute.code");
        let path = failing_path(|m| {
            m.insert("executionId".into(), json!(7));
            m.remove("tools");
        });
        assert_eq!(path, "execute.executionId");
        let path = failing_path(|m| {
            m.insert(
                "limits".into(),
                json!({"maxToolCalls": 0, "maxResultBytes": 1}),
            );
            m.remove("tools");
        });
        assert_eq!(path, "execute.limits.timeoutMs");
    }

    #[test]
    fn limits_must_be_json_integers_in_range() {
        for (key, bad) in [
            ("timeoutMs", json!(5000.0)),
            ("timeoutMs", json!(0)),
            ("maxResultBytes", json!("1")),
            ("maxToolCalls", json!(-1)),
            (
                "maxToolCalls",
                serde_json::from_str::<Value>("1e2").expect("number"),
            ),
        ] {
            let path = failing_path(|m| {
                m["limits"][key] = bad.clone();
            });
            assert_eq!(path, format!("execute.limits.{key}"), "{bad}");
        }
    }

    #[test]
    fn tools_are_bounded_named_and_unique() {
        let long = "x".repeat(257);
        for (tools, path) in [
            (json!({}), "execute.tools"),
            (json!(["a"]), "execute.tools[0]"),
            (json!([{"name": ""}]), "execute.tools[0].name"),
            (json!([{"name": long}]), "execute.tools[0].name"),
            (
                json!([{"name": "a"}, {"name": "a"}]),
                "execute.tools[1].name",
            ),
            (
                Value::Array(vec![json!({"name": "x"}); 513]),
                "execute.tools",
            ),
        ] {
            assert_eq!(failing_path(|m| m["tools"] = tools.clone()), path);
        }
        let names: Vec<Value> = (0..512).map(|i| json!({"name": format!("t{i}")})).collect();
        let mut map = frame(valid());
        map.insert("tools".into(), Value::Array(names));
        assert_eq!(
            validate(&map)
                .expect("512 tools are allowed")
                .tool_names
                .len(),
            512
        );
    }
}
