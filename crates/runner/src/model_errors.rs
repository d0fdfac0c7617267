//! Error texts meant for the model, in extension mode only (v1 texts are
//! fixed by the spec): an ungranted or misspelled tool names itself and the
//! granted tools; any other call of something that is not a function names
//! the callee as V8 does (`console.tabel is not a function`,
//! `JSON.parse(...).foo is not a function`).
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

/// The enriched text of any other uncaught `TypeError: not a function`:
/// the callee, read from the model's source at the failure's position (a
/// name, or a member chain ending in one), call arguments shown as `(...)`.
/// `None` when the position does not start a callee followed by `(`.
pub fn name_callee(message: &str, code: &str) -> Option<String> {
    let (first, stack) = message.split_once('\n')?;
    if first != "TypeError: not a function" {
        return None;
    }
    let (line, column) = code_position(stack.lines().next()?)?;
    let text = code.lines().nth(line.checked_sub(2)?)?;
    let callee = callee_at(text, column.checked_sub(1)?)?;
    Some(format!("TypeError: {callee} is not a function\n{stack}"))
}

/// The callee of the failed call, when the position says which it was.
/// QuickJS points at the last name it evaluated: the callee itself when
/// the arguments hold no name (`o.go(1)`), else a name inside the
/// arguments (`o.go(rows)`). So: a called name with no call open around it
/// on its line, or a position inside exactly one open call's arguments.
/// Anything more nested is ambiguous and left unnamed (a wrong name would
/// mislead more than none).
fn callee_at(line: &str, at: usize) -> Option<String> {
    let bytes = line.as_bytes();
    let open = open_calls(bytes, at.min(bytes.len()));
    let name_end = match called_name_at(line, at) {
        Some(end) if open.is_empty() => end,
        Some(_) => return None,
        None if open.len() == 1 => {
            let before = line[..open[0]].trim_end();
            let before = before.strip_suffix("?.").unwrap_or(before);
            let end = before.len();
            (end > 0 && is_identifier_byte(bytes[end - 1])).then_some(end)?
        }
        None => return None,
    };
    let mut name_start = name_end;
    while name_start > 0 && is_identifier_byte(bytes[name_start - 1]) {
        name_start -= 1;
    }
    if bytes[name_start].is_ascii_digit() {
        return None;
    }
    let start = chain_start(bytes, name_start);
    Some(elide_arguments(&line[start..name_end]))
}

/// The end of the name starting at byte `at`, when a call follows it.
fn called_name_at(line: &str, at: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    if at >= bytes.len()
        || !is_identifier_byte(bytes[at])
        || (at > 0 && is_identifier_byte(bytes[at - 1]))
    {
        return None;
    }
    let end = at
        + bytes[at..]
            .iter()
            .take_while(|b| is_identifier_byte(**b))
            .count();
    let after = line[end..].trim_start();
    (after.starts_with('(') || after.starts_with("?.(")).then_some(end)
}

/// Positions of the `(` still open at byte `at` that follow a name (calls,
/// not grouping), skipping quoted text.
fn open_calls(bytes: &[u8], at: usize) -> Vec<usize> {
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut quote = None;
    let mut i = 0;
    while i < at {
        let byte = bytes[i];
        match quote {
            Some(_) if byte == b'\\' => i += 1,
            Some(q) if byte == q => quote = None,
            Some(_) => {}
            None => match byte {
                b'"' | b'\'' | b'`' => quote = Some(byte),
                b'(' => {
                    let before = bytes[..i].iter().rev().find(|b| !b.is_ascii_whitespace());
                    open.push((
                        i,
                        before.is_some_and(|b| is_identifier_byte(*b) || *b == b'.'),
                    ));
                }
                b')' => {
                    open.pop();
                }
                _ => {}
            },
        }
        i += 1;
    }
    open.into_iter()
        .filter(|(_, call)| *call)
        .map(|(at, _)| at)
        .collect()
}

/// Where the member chain ending at `at` begins: back over names, dots
/// (`.`, `?.`) and balanced `(...)`/`[...]` groups.
fn chain_start(bytes: &[u8], at: usize) -> usize {
    let mut start = at;
    while start > 0 && bytes[start - 1] == b'.' {
        let mut i = start - 1;
        if i > 0 && bytes[i - 1] == b'?' {
            i -= 1;
        }
        loop {
            match i.checked_sub(1).map(|j| bytes[j]) {
                Some(b')') | Some(b']') => match matching_open(bytes, i - 1) {
                    Some(open) => i = open,
                    None => return start,
                },
                Some(byte) if is_identifier_byte(byte) => i -= 1,
                _ => break,
            }
        }
        if i == start - 1
            || (i < start && !is_identifier_byte(bytes[i]) && bytes[i] != b'(' && bytes[i] != b'[')
        {
            return start;
        }
        start = i;
    }
    start
}

/// The index of the bracket opening the one closing at `close`.
fn matching_open(bytes: &[u8], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = close + 1;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b')' | b']' => depth += 1,
            b'(' | b'[' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `f(a, b).g` → `f(...).g`, as V8 prints callees.
fn elide_arguments(chain: &str) -> String {
    let mut out = String::with_capacity(chain.len());
    let mut depth = 0usize;
    for c in chain.chars() {
        match c {
            '(' => {
                if depth == 0 {
                    out.push_str("(...)");
                }
                depth += 1;
            }
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
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
    fn a_callee_that_is_not_a_function_is_named_as_v8_names_it() {
        let name = |code: &str, column: usize| {
            name_callee(&at(2, column), code)
                .map(|m| m.lines().next().unwrap_or_default().to_owned())
        };
        assert_eq!(
            name("console.tabel([])", 9).as_deref(),
            Some("TypeError: console.tabel is not a function")
        );
        assert_eq!(
            name("  o.a?.bar(2)", 8).as_deref(),
            Some("TypeError: o.a?.bar is not a function")
        );
        assert_eq!(
            name("const f = 1; f()", 14).as_deref(),
            Some("TypeError: f is not a function")
        );
        assert_eq!(
            name("JSON.parse(\"1\").toFixed(2).padStart2(3)", 28).as_deref(),
            Some("TypeError: JSON.parse(...).toFixed(...).padStart2 is not a function")
        );
        assert_eq!(
            name("a[0].go()", 6).as_deref(),
            Some("TypeError: a[0].go is not a function")
        );
        assert_eq!(
            name("[1].flatMapp(x => x)", 14).as_deref(),
            Some("TypeError: [1].flatMapp is not a function")
        );
        // Not at a called name: left alone.
        assert_eq!(name("o[\"x-y\"]()", 1), None);
        assert_eq!(
            name_callee(
                "TypeError: x is not a function\n    at f (<code>:2:1)",
                "x()"
            ),
            None
        );
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
