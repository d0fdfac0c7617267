//! Small, pure checks on paths and names shared by the policy and the
//! launch options.

use std::path::{Component, Path, PathBuf};

/// Sandbox paths the layout itself owns; a policy may not mount over them.
const RESERVED: &[&str] = &[
    "/",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/proc",
    "/dev",
    "/tmp",
    "/workspace",
];

/// An absolute path with no `.`/`..` components, empty segments or NUL.
pub fn normalized_absolute(text: &str) -> Result<PathBuf, &'static str> {
    if text.contains('\0') {
        return Err("must not contain NUL bytes");
    }
    if !text.starts_with('/') {
        return Err("must be an absolute path");
    }
    if text.len() > 1 && text.ends_with('/') || text.contains("//") {
        return Err("must be normalized (no empty segments or trailing slash)");
    }
    let path = Path::new(text);
    let clean = path
        .components()
        .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !clean {
        return Err("must be normalized (no . or .. segments)");
    }
    Ok(path.to_path_buf())
}

/// True when `path` is, or lies under, one of the layout's own mounts
/// (except for plain subdirectories of /tmp, /workspace and /etc, which are
/// still refused because they would shadow sandbox state).
pub fn is_reserved_sandbox_path(path: &Path) -> bool {
    RESERVED.iter().any(|r| {
        let r = Path::new(r);
        path == r || (r != Path::new("/") && path.starts_with(r))
    })
}

/// POSIX-portable environment variable name.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
