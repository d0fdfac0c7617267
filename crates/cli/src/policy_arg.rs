//! `--policy read-only|workspace-write|untrusted|FILE`: a preset by name
//! (the launcher's own, `cordon_launcher::request::presets`), or a policy JSON file
//! (docs/policy.md). The launcher validates either strictly; this module
//! only produces the JSON value.

use std::io::Read;
use std::path::PathBuf;

use cordon_launcher::request::presets;
use serde_json::Value;

/// A policy file larger than this is not a policy: refuse rather than read it.
const MAX_POLICY_FILE_BYTES: u64 = 1024 * 1024;
/// The names `--policy` accepts as presets; anything else is a file path.
pub const PRESETS: &[&str] = presets::NAMES;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyArg {
    Preset(&'static str),
    File(PathBuf),
}

impl Default for PolicyArg {
    /// `read-only`, the default of `createCodeMode` too.
    fn default() -> Self {
        PolicyArg::Preset("read-only")
    }
}

#[derive(Debug)]
pub struct PolicyFileError {
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for PolicyFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "policy file {}: {}", self.path.display(), self.reason)
    }
}

impl PolicyArg {
    /// A preset name wins; write `./untrusted` for a file of that name.
    pub fn parse(text: &str) -> PolicyArg {
        match PRESETS.iter().find(|name| **name == text) {
            Some(name) => PolicyArg::Preset(name),
            None => PolicyArg::File(PathBuf::from(text)),
        }
    }

    pub fn is_preset(&self) -> bool {
        matches!(self, PolicyArg::Preset(_))
    }

    /// The policy as the launcher's JSON value.
    pub fn load(&self) -> Result<Value, PolicyFileError> {
        match self {
            PolicyArg::Preset(name) => presets::preset(name).ok_or_else(|| PolicyFileError {
                path: PathBuf::from(name),
                reason: format!("not a preset (presets: {})", PRESETS.join(", ")),
            }),
            PolicyArg::File(path) => read_file(path),
        }
    }
}

fn read_file(path: &PathBuf) -> Result<Value, PolicyFileError> {
    let fail = |reason: String| PolicyFileError {
        path: path.clone(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => fail(format!("{e}; {}", preset_hint(path))),
        _ => fail(e.to_string()),
    })?;
    let mut text = String::new();
    file.take(MAX_POLICY_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| fail(e.to_string()))?;
    if text.len() as u64 > MAX_POLICY_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_POLICY_FILE_BYTES} bytes")));
    }
    serde_json::from_str(&text).map_err(|e| fail(format!("not valid JSON: {e}")))
}

/// What to say when a `--policy` file is missing: most often the user meant
/// a preset (`readonly`, `read_only`, `ReadOnly`), so name the closest one.
fn preset_hint(path: &std::path::Path) -> String {
    let squash = |text: &str| -> String {
        text.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let typed = squash(&path.to_string_lossy());
    match PRESETS.iter().find(|name| squash(name) == typed) {
        Some(name) => format!("did you mean the preset `{name}`?"),
        None => format!("not a preset either (presets: {})", PRESETS.join(", ")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn preset_names_are_presets_and_anything_else_is_a_file() {
        assert_eq!(
            PolicyArg::parse("untrusted"),
            PolicyArg::Preset("untrusted")
        );
        assert_eq!(
            PolicyArg::parse("./untrusted"),
            PolicyArg::File(PathBuf::from("./untrusted"))
        );
    }

    #[test]
    fn every_preset_is_a_policy_the_launcher_accepts() {
        for name in PRESETS {
            let value = PolicyArg::Preset(name).load().unwrap();
            cordon_launcher::request::policy::Policy::from_json(&value).unwrap();
        }
        let untrusted = PolicyArg::Preset("untrusted").load().unwrap();
        assert_eq!(untrusted["filesystem"]["workspace"], "none");
    }

    #[test]
    fn a_misspelled_preset_suggests_the_preset() {
        let error = PolicyArg::parse("readonly").load().unwrap_err().to_string();
        assert!(
            error.contains("did you mean the preset `read-only`"),
            "{error}"
        );
        let other = PolicyArg::parse("/nonexistent/p.json")
            .load()
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("presets: read-only, workspace-write, untrusted"),
            "{other}"
        );
    }

    #[test]
    fn a_missing_or_malformed_policy_file_names_the_path() {
        let missing = PolicyArg::parse("/nonexistent/policy.json").load();
        assert!(missing
            .unwrap_err()
            .to_string()
            .contains("/nonexistent/policy.json"));
        let dir = std::env::temp_dir().join(format!("cordon-cli-policy-{}", std::process::id()));
        std::fs::write(&dir, "{not json").unwrap();
        let bad = PolicyArg::File(dir.clone()).load().unwrap_err().to_string();
        std::fs::remove_file(&dir).unwrap();
        assert!(bad.contains("not valid JSON"), "{bad}");
    }
}
