//! What the host's read-only runtime looks like (/lib is a directory or a
//! symlink into /usr, …), probed once per process so the pure planner can
//! reproduce it inside the sandbox.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Top-level runtime entries mirrored read-only (besides /usr itself).
pub const RUNTIME_ENTRIES: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/// The dynamic loader's cache: not secret, and it spares every exec a
/// directory walk.
pub const LD_SO_CACHE: &str = "/etc/ld.so.cache";
/// Started in front of the program to hand it exactly the planned
/// environment: bwrap itself always exports PWD after `--chdir`.
pub const ENV_WRAPPER: &str = "/usr/bin/env";

/// One top-level runtime entry as found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeEntry {
    /// A symlink (merged-/usr): recreated as the same symlink.
    Symlink { path: PathBuf, target: PathBuf },
    /// A real directory: bound read-only.
    Directory { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeLayout {
    pub entries: Vec<RuntimeEntry>,
    pub ld_so_cache: bool,
}

impl RuntimeLayout {
    /// The host's layout, probed on first use (it does not change while a
    /// provider runs).
    pub fn host() -> &'static RuntimeLayout {
        static LAYOUT: OnceLock<RuntimeLayout> = OnceLock::new();
        LAYOUT.get_or_init(Self::probe)
    }

    fn probe() -> RuntimeLayout {
        let entries = RUNTIME_ENTRIES
            .iter()
            .filter_map(|p| probe_entry(Path::new(p)))
            .collect();
        RuntimeLayout {
            entries,
            ld_so_cache: Path::new(LD_SO_CACHE).is_file(),
        }
    }

    /// Debian 12's merged-/usr layout, for snapshot tests.
    pub fn merged_usr() -> RuntimeLayout {
        let link = |path: &str, target: &str| RuntimeEntry::Symlink {
            path: path.into(),
            target: target.into(),
        };
        RuntimeLayout {
            entries: vec![
                link("/bin", "usr/bin"),
                link("/sbin", "usr/sbin"),
                link("/lib", "usr/lib"),
                link("/lib64", "usr/lib64"),
            ],
            ld_so_cache: true,
        }
    }
}

fn probe_entry(path: &Path) -> Option<RuntimeEntry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(RuntimeEntry::Symlink {
            path: path.to_path_buf(),
            target,
        });
    }
    meta.is_dir().then(|| RuntimeEntry::Directory {
        path: path.to_path_buf(),
    })
}
