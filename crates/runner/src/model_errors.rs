//! Error texts meant for the model, in extension mode only (v1 texts are
//! fixed by the spec): an ungranted or misspelled tool names itself and the
//! granted tools.
//!
//! QuickJS says only `TypeError: not a function`. `tools` stays exactly as
//! in v1 (frozen, null prototype, honest `typeof tools.x`, `'x' in tools`,
//! `Object.keys(tools)`), so the name is recovered from where the call
//! failed: the first stack frame's `<code>:line:column` points into the
//! model's source, and the member access on `tools` found there
//! (`tools.x`, `tools?.x`, `tools['x']`, `tools["x"]`) names the tool. Only
//! an uncaught error is enriched; a caught one keeps QuickJS's text, and an
//! alias (`const t = tools; t.x()`) is not recognised.

/// Longest list of granted names quoted in the message.
const MAX_NAMES_LISTED: usize = 32;

/// The enriched text of an uncaught `TypeError: not a function` raised at a
/// call of an undeclared `tools` member, or `None`.
pub fn name_ungranted_tool(message: &str, code: &str, granted: &[String]) -> Option<String> {
    let (first, stack) = message.split_once('\n')?;
    if first != "TypeError: not a function" {
        return None;
    }
    let (line, column) = code_position(stack.lines().next()?)?;
    // The code starts on line 2 of the wrapper (see evaluation.rs).
    let text = code.lines().nth(line.checked_sub(2)?)?;
    let name = tools_member_at(text, column.checked_sub(1)?)?;
    if granted.contains(&name) {
        return None;
    }
    Some(format!(
        "TypeError: {} is not a granted tool (granted: {})\n{stack}",
        display_access(&name),
        list(granted)
    ))
}

/// `(line, column)` of a stack line `    at f (<code>:L:C)`.
fn code_position(frame: &str) -> Option<(usize, usize)> {
    let start = frame.find("(<code>:")? + "(<code>:".len();
    let rest = frame[start..].strip_suffix(')')?;
    let (line, column) = rest.split_once(':')?;
    Some((line.parse().ok()?, column.parse().ok()?))
}

/// The member name of the `tools` access whose span holds byte `at`.
fn tools_member_at(line: &str, at: usize) -> Option<String> {
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(found) = line[from..].find("tools") {
        let start = from + found;
        from = start + "tools".len();
        let preceded = start > 0 && is_identifier_byte(bytes[start - 1]);
        if preceded || at < start {
            continue;
        }
        if let Some((name, end)) = member_after(line, from) {
            if at < end {
                return Some(name);
            }
        }
    }
    None
}

/// The member named right after `tools` (ending at byte `i`), with the
/// byte just past the access.
fn member_after(line: &str, i: usize) -> Option<(String, usize)> {
    let rest = &line[i..];
    let trimmed = rest.trim_start();
    let mut i = i + (rest.len() - trimmed.len());
    let mut rest = trimmed;
    if let Some(after) = rest.strip_prefix("?.") {
        i += 2;
        rest = after;
    } else if let Some(after) = rest.strip_prefix('.') {
        i += 1;
        rest = after;
    } else if !rest.starts_with('[') {
        return None;
    }
    let trimmed = rest.trim_start();
    i += rest.len() - trimmed.len();
    rest = trimmed;
    if let Some(inner) = rest.strip_prefix('[') {
        let inner_trimmed = inner.trim_start();
        let quote = inner_trimmed
            .chars()
            .next()
            .filter(|q| *q == '\'' || *q == '"')?;
        let body = &inner_trimmed[1..];
        let close = body.find(quote)?;
        let name = &body[..close];
        if name.contains('\\') {
            return None;
        }
        let after = body[close + 1..].trim_start().strip_prefix(']')?;
        return Some((name.to_owned(), line.len() - after.len()));
    }
    let length = rest
        .bytes()
        .take_while(|byte| is_identifier_byte(*byte))
        .count();
    (length > 0).then(|| (rest[..length].to_owned(), i + length))
}

fn is_identifier_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// `tools.x` for identifier-like names, else `tools["x-y"]`.
fn display_access(name: &str) -> String {
    let identifier = name
        .bytes()
        .next()
        .is_some_and(|b| !b.is_ascii_digit() && is_identifier_byte(b))
        && name.bytes().all(is_identifier_byte);
    if identifier {
        format!("tools.{name}")
    } else {
        format!("tools[{}]", serde_json::Value::String(name.to_owned()))
    }
}

fn list(granted: &[String]) -> String {
    if granted.is_empty() {
        return "none".to_owned();
    }
    let mut listed = granted
        .iter()
        .take(MAX_NAMES_LISTED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if granted.len() > MAX_NAMES_LISTED {
        listed.push_str(&format!(", … {} more", granted.len() - MAX_NAMES_LISTED));
    }
    listed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn granted() -> Vec<String> {
        vec!["orders.get".to_owned(), "orders_list".to_owned()]
    }

    fn at(line: usize, column: usize) -> String {
        format!("TypeError: not a function\n    at <anonymous> (<code>:{line}:{column})")
    }

    #[test]
    fn a_misspelled_member_is_named_with_the_granted_tools() {
        let code = "const x = 1;\nreturn tools.orders_lst({});";
        let message = name_ungranted_tool(&at(3, 14), code, &granted()).expect("named");
        assert_eq!(
            message,
            "TypeError: tools.orders_lst is not a granted tool (granted: orders.get, orders_list)\n    at <anonymous> (<code>:3:14)"
        );
    }

    #[test]
    fn bracket_and_optional_accesses_are_recognised() {
        let code = "return await Promise.all([1].map(i => tools?.[\"orders.gte\"]({i})));";
        let message = name_ungranted_tool(&at(2, 39), code, &granted()).expect("named");
        assert!(message.starts_with("TypeError: tools[\"orders.gte\"] is not a granted tool"));
        let code = "tools [ 'x' ] ()";
        assert!(name_ungranted_tool(&at(2, 1), code, &[])
            .expect("named")
            .starts_with("TypeError: tools.x is not a granted tool (granted: none)"));
    }

    #[test]
    fn other_failures_are_left_alone() {
        let code = "return notTools.x();\nmytools.y(); tools.orders_list(); null();";
        assert_eq!(name_ungranted_tool(&at(2, 17), code, &granted()), None);
        assert_eq!(name_ungranted_tool(&at(3, 9), code, &granted()), None);
        assert_eq!(name_ungranted_tool(&at(3, 20), code, &granted()), None);
        assert_eq!(name_ungranted_tool(&at(3, 35), code, &granted()), None);
        assert_eq!(
            name_ungranted_tool(
                "TypeError: x is not a function\n    at f (<code>:2:1)",
                "tools.a()",
                &[]
            ),
            None
        );
        assert_eq!(
            name_ungranted_tool("TypeError: not a function", "tools.a()", &[]),
            None
        );
        assert_eq!(name_ungranted_tool(&at(99, 1), "tools.a()", &[]), None);
    }
}
