//! The session's workspace: the files of `upload` frames, written by the
//! host into a fresh directory before `spawn`. A path is relative, made of
//! plain names (no `..`, `.`, empty or absolute part); nothing is followed
//! (`O_NOFOLLOW`, `O_EXCL`), so an upload can neither escape nor overwrite.
//! The directory is the host's and 0700 from the start; the launcher adds
//! the one ACL entry that lets the run's uid read and search it
//! (cordon_launcher::host::workspace_grant, round 12, R12-1: its path is in
//! every sandbox process's mountinfo). Inside, files 0644/0755 and
//! directories 0755, readable (not writable) through that door; the parent
//! `stateDir/workspaces` is 0711.
//! Made at the first upload (a session that uploads nothing costs no file
//! system work) and removed when the session ends.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use serde_json::Value;

/// Files and directories per session, together: a bound on the inodes one
/// session can take in `stateDir` (bytes alone are not: an empty file under
/// a deep path costs inodes and no bytes — black-box round 6, finding 1).
const MAX_ENTRIES: usize = 10_000;
/// Longest relative path accepted (bytes).
const MAX_PATH_BYTES: usize = 4096;
/// Most parts in one path: what one `upload` frame can make the host create
/// is bounded, so a frame's file-system work is short.
const MAX_DEPTH: usize = 32;

#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("upload: {0}")]
    Invalid(String),
    /// The session's directory could not be made: the host's failure, not
    /// the upload's.
    #[error("the session's workspace could not be made: {}", describe(.0))]
    Workspace(std::io::Error),
    #[error("upload: the session's uploads exceed the host's uploadBytes ceiling ({0} bytes)")]
    TooLarge(u64),
    /// `path` is the upload's own relative path, never the host's: the
    /// message goes to the remote client (round 6, finding 2).
    #[error("upload {path}: {}", describe(.source))]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The uploads of one session so far.
#[derive(Debug)]
pub struct Workspace {
    dir: PathBuf,
    bytes: u64,
    files: usize,
    /// Files and directories created so far (MAX_ENTRIES).
    entries: usize,
    limit: u64,
    /// The directory exists (made at the first upload).
    made: bool,
}

/// An OS error in words that name nothing of the host (std's Display adds
/// no path, but keep the message to the error's kind).
fn describe(source: &std::io::Error) -> String {
    match source.kind() {
        std::io::ErrorKind::AlreadyExists => {
            "given twice, or a directory of that name exists".into()
        }
        std::io::ErrorKind::NotADirectory => "a part of the path is a file".into(),
        _ if source.raw_os_error() == Some(nix::libc::ENAMETOOLONG) => "a name is too long".into(),
        _ => "could not be written".into(),
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> UploadError + '_ {
    move |source| UploadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// `stateDir/workspaces`, traversable (not listable) by the sandbox's uid.
pub fn workspaces_dir(state_dir: &Path) -> Result<PathBuf, UploadError> {
    let dir = state_dir.join("workspaces");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o711)
        .create(&dir)
        .map_err(io(&dir))?;
    Ok(dir)
}

/// The relative path of an upload, checked part by part.
fn relative(text: &str) -> Result<PathBuf, UploadError> {
    let bad = |why: &str| UploadError::Invalid(format!("path {text:?} {why}"));
    if text.is_empty() || text.len() > MAX_PATH_BYTES || text.contains('\0') {
        return Err(bad("must be 1-4096 bytes without NUL"));
    }
    if text.split('/').count() > MAX_DEPTH {
        return Err(bad("has more than 32 parts"));
    }
    let path = Path::new(text);
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
        || text.split('/').any(|part| part.is_empty() || part == ".")
    {
        return Err(bad(
            "must be relative, of plain names (no '..', '.', '//', leading '/')",
        ));
    }
    Ok(path.to_path_buf())
}

impl Workspace {
    /// A workspace at `parent/name`, not made yet: no file system work
    /// (the session's async task calls this).
    pub fn new(parent: &Path, name: &str, limit: u64) -> Workspace {
        Workspace {
            dir: parent.join(name),
            bytes: 0,
            files: 0,
            entries: 0,
            limit,
            made: false,
        }
    }

    /// The directory, made once.
    fn make(&mut self) -> Result<(), UploadError> {
        if !self.made {
            // 0700, never wider: no moment in which another local user
            // could open it (the launcher grants the run's uid alone).
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&self.dir)
                .map_err(UploadError::Workspace)?;
            self.made = true;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn is_empty(&self) -> bool {
        self.files == 0
    }

    /// One `upload` frame: `{path, mode?, data}`.
    pub fn add(&mut self, frame: &Value) -> Result<(), UploadError> {
        use cordon_launcher::request::strict_json::ObjectReader;
        let invalid = |e: &dyn std::fmt::Display| UploadError::Invalid(e.to_string());
        let r = ObjectReader::new("upload", frame, &["path", "mode", "data"])
            .map_err(|e| invalid(&e))?;
        let rel = relative(r.required_str("path").map_err(|e| invalid(&e))?)?;
        let mode = match r.optional_u64("mode").map_err(|e| invalid(&e))? {
            None | Some(0o644) => 0o644,
            Some(0o755) => 0o755,
            Some(_) => return Err(UploadError::Invalid("mode must be 0o644 or 0o755".into())),
        };
        let data = base64::engine::general_purpose::STANDARD
            .decode(r.required_str("data").map_err(|e| invalid(&e))?)
            .map_err(|e| invalid(&e))?;
        self.bytes += data.len() as u64;
        if self.bytes > self.limit {
            return Err(UploadError::TooLarge(self.limit));
        }
        self.files += 1;
        self.make()?;
        self.write(&rel, mode, &data)
    }

    /// One more file or directory, within MAX_ENTRIES.
    fn count_entry(&mut self) -> Result<(), UploadError> {
        self.entries += 1;
        if self.entries > MAX_ENTRIES {
            return Err(UploadError::Invalid(format!(
                "more than {MAX_ENTRIES} files and directories"
            )));
        }
        Ok(())
    }

    fn write(&mut self, rel: &Path, mode: u32, data: &[u8]) -> Result<(), UploadError> {
        let mut at = self.dir.clone();
        let parts: Vec<_> = rel.components().collect();
        for part in &parts[..parts.len().saturating_sub(1)] {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(UploadError::Invalid(format!("{} is a file", rel.display()))),
                Err(_) => {
                    self.count_entry()?;
                    std::fs::DirBuilder::new()
                        .mode(0o755)
                        .create(&at)
                        .map_err(io(rel))?
                }
            }
        }
        self.count_entry()?;
        let file = self.dir.join(rel);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc_nofollow())
            .open(&file)
            .map_err(io(rel))?;
        out.write_all(data).map_err(io(rel))?;
        // The umask may have narrowed the mode: the sandbox's uid must read.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).map_err(io(rel))
    }

    pub fn remove(&self) {
        if self.made {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn libc_nofollow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

impl Drop for Workspace {
    /// Up to MAX_ENTRIES entries to unlink: on the host's runtime that goes
    /// to a blocking thread, so no session's end stalls the others' I/O.
    fn drop(&mut self) {
        if !self.made {
            return;
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let dir = std::mem::take(&mut self.dir);
                runtime.spawn_blocking(move || std::fs::remove_dir_all(dir));
            }
            Err(_) => self.remove(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn upload_paths_are_plain_relative_names() {
        for bad in ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/."] {
            assert!(relative(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(relative("a/b.js").unwrap(), PathBuf::from("a/b.js"));
    }

    #[test]
    fn the_directory_is_made_at_the_first_upload_only_and_a_failure_to_make_it_is_the_hosts() {
        let tmp = tempfile::tempdir().unwrap();
        drop(Workspace::new(tmp.path(), "ws", 8));
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
        // A parent that does not exist: the mkdir fails, not the upload.
        let mut ws = Workspace::new(&tmp.path().join("gone"), "ws", 8);
        let failed = ws.add(&json!({"path": "a", "data": ""}));
        assert!(
            matches!(failed, Err(UploadError::Workspace(_))),
            "{failed:?}"
        );
    }

    #[test]
    fn uploads_are_written_bounded_and_never_overwrite() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ws = Workspace::new(tmp.path(), "ws", 8);
        ws.add(&json!({"path": "d/a.txt", "data": "aGVsbG8="}))
            .unwrap();
        assert_eq!(
            std::fs::read(tmp.path().join("ws/d/a.txt")).unwrap(),
            b"hello"
        );
        let again = ws.add(&json!({"path": "d/a.txt", "data": ""}));
        assert!(matches!(again, Err(UploadError::Io { .. })));
        let big = ws.add(&json!({"path": "b", "data": "aGVsbG8="}));
        assert!(matches!(big, Err(UploadError::TooLarge(8))));
    }

    #[test]
    fn directories_count_with_files_against_the_entry_bound_and_paths_are_shallow() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ws = Workspace::new(tmp.path(), "ws", u64::MAX);
        let deep = vec!["d"; MAX_DEPTH + 1].join("/");
        assert!(matches!(
            ws.add(&json!({"path": deep, "data": ""})),
            Err(UploadError::Invalid(_))
        ));
        // Empty files each under a new 31-deep chain: 32 entries a frame, no bytes.
        let mut refused = None;
        for i in 0..(MAX_ENTRIES / MAX_DEPTH + 2) {
            let path = format!("{i}/{}/f", vec!["d"; MAX_DEPTH - 2].join("/"));
            if let Err(e) = ws.add(&json!({"path": path, "data": ""})) {
                refused = Some((i, e));
                break;
            }
        }
        let Some((at, error)) = refused else {
            panic!("the entry bound never refused")
        };
        assert_eq!(at, MAX_ENTRIES / MAX_DEPTH, "{error}");
        assert!(
            error.to_string().contains("files and directories"),
            "{error}"
        );
    }

    #[test]
    fn a_refusal_names_the_uploads_path_and_nothing_of_the_hosts() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ws = Workspace::new(tmp.path(), "ws-secret", 1 << 20);
        ws.add(&json!({"path": "a/b", "data": ""})).unwrap();
        let long = "n".repeat(300);
        for (path, why) in [
            ("a/b", "given twice"),
            ("a", "given twice"),
            (long.as_str(), "too long"),
        ] {
            let message = ws
                .add(&json!({"path": path, "data": ""}))
                .unwrap_err()
                .to_string();
            assert!(message.contains(why), "{message}");
            let host = tmp.path().to_string_lossy();
            assert!(
                !message.contains(&*host) && !message.contains("ws-secret"),
                "{message}"
            );
        }
    }
}
