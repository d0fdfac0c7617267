//! A host path named on the command line (`--workspace`, `--receipt`),
//! made absolute without resolving anything.
//!
//! Why not `canonicalize`: it follows every link before the launcher's
//! no-follow walk (`host_path::open_no_follow`) sees the path, so a link an
//! earlier run planted in its workspace (`cache -> <another tenant's
//! workspace>`) was followed and its target bound writable (round 4, R4-5).
//! A relative path is joined to the current directory (`getcwd`: itself
//! free of links); `.` segments name no other object and are dropped; `..`
//! is refused, since after a link it means something other than the
//! lexical parent. Links left in the result are the walk's to refuse.

use std::path::{Component, Path, PathBuf};

/// `path` as an absolute path with only normal segments, or why not.
pub fn absolute(flag: &str, path: &Path) -> Result<PathBuf, String> {
    let mut out = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir()
            .map_err(|e| format!("{flag} {}: the current directory: {e}", path.display()))?
    };
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => {
                return Err(format!(
                    "{flag} {}: name the directory without `..` (a `..` after a symlink is not the lexical parent)",
                    path.display()
                ))
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_made_absolute_lexically_and_dotdot_is_refused() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            absolute("--workspace", Path::new("/a//b/./c/")).unwrap(),
            Path::new("/a/b/c")
        );
        assert_eq!(absolute("--workspace", Path::new(".")).unwrap(), cwd);
        assert_eq!(
            absolute("--workspace", Path::new("./x/y")).unwrap(),
            cwd.join("x/y")
        );
        for bad in ["/a/../b", "..", "x/.."] {
            let err = absolute("--workspace", Path::new(bad)).unwrap_err();
            assert!(
                err.starts_with(&format!("--workspace {bad}: ")) && err.contains("`..`"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_symlink_in_the_path_is_kept_for_the_launcher_to_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("cache");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        assert_eq!(
            absolute("--workspace", &link.join("ssl")).unwrap(),
            link.join("ssl")
        );
    }
}
