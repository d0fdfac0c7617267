//! Thin readers: the observed program's `/proc/<pid>` files, through one
//! directory descriptor opened on it (a `/proc/<pid>` descriptor names that
//! process for good: after it exits, reads through it fail instead of
//! reaching a process that reused the pid), and the provider's own facts.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::parse::{self, IdRange, Limit, Mount, Status};

/// The kernel's task flag for a task inside `do_exit` (include/linux/sched.h).
const PF_EXITING: u64 = 0x4;

/// The namespaces compared with the provider's, by `/proc/<pid>/ns` name.
/// What is observed: every namespace the plan unshares, and the mount
/// namespace bwrap always makes.
pub fn observed_namespaces() -> impl Iterator<Item = &'static str> {
    crate::plan::bwrap_argv::NAMESPACES
        .iter()
        .copied()
        .chain([MOUNT_NAMESPACE])
}

/// The mount namespace's name in `/proc/<pid>/ns`.
const MOUNT_NAMESPACE: &str = "mnt";

#[derive(Debug, thiserror::Error)]
#[error("read {what} of the sandboxed program: {detail}")]
pub struct ReadError {
    pub what: String,
    pub detail: String,
}

fn read_error(what: impl Into<String>, detail: impl ToString) -> ReadError {
    ReadError {
        what: what.into(),
        detail: detail.to_string(),
    }
}

/// An open `/proc/<pid>` directory.
#[derive(Debug)]
pub struct ProcDir {
    pub pid: i32,
    dir: File,
}

impl ProcDir {
    pub fn open(pid: i32) -> std::io::Result<ProcDir> {
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(format!("/proc/{pid}"))?;
        Ok(ProcDir { pid, dir })
    }

    /// `name` inside this process's directory, reached through the descriptor.
    pub fn path(&self, name: &str) -> PathBuf {
        PathBuf::from(format!("/proc/self/fd/{}/{name}", self.dir.as_raw_fd()))
    }

    pub fn read(&self, name: &str) -> Result<String, ReadError> {
        std::fs::read_to_string(self.path(name)).map_err(|e| read_error(name, e))
    }

    pub fn status(&self) -> Result<Status, ReadError> {
        parse::status(&self.read("status")?).ok_or_else(|| read_error("status", "malformed"))
    }

    /// Field 4 of `stat`: the parent pid.
    pub fn parent_pid(&self) -> Option<i32> {
        let stat = self.read("stat").ok()?;
        stat.get(stat.rfind(')')? + 1..)?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }

    /// Still running: `stat` readable through the descriptor, not a zombie,
    /// and not exiting (a task in `do_exit` still shows state R or D, but
    /// has `PF_EXITING` in its flags, field 9).
    pub fn is_running(&self) -> bool {
        let Ok(stat) = self.read("stat") else {
            return false;
        };
        let mut fields = stat
            .rfind(')')
            .and_then(|i| stat.get(i + 1..))
            .unwrap_or("")
            .split_whitespace();
        let state = fields.next();
        let flags: Option<u64> = fields.nth(5).and_then(|f| f.parse().ok());
        !matches!(state, None | Some("Z") | Some("X")) && flags.is_some_and(|f| f & PF_EXITING == 0)
    }

    /// The executable's (device, inode): `exe` followed to its file.
    pub fn exe_identity(&self) -> Option<(u64, u64)> {
        file_identity(&self.path("exe"))
    }

    pub fn id_map(&self, name: &str) -> Result<Vec<IdRange>, ReadError> {
        parse::id_map(&self.read(name)?).ok_or_else(|| read_error(name, "malformed"))
    }

    pub fn limits(&self) -> Result<Vec<Limit>, ReadError> {
        parse::limits(&self.read("limits")?).ok_or_else(|| read_error("limits", "malformed"))
    }

    pub fn mounts(&self) -> Result<Vec<Mount>, ReadError> {
        parse::mountinfo(&self.read("mountinfo")?)
            .ok_or_else(|| read_error("mountinfo", "malformed"))
    }

    /// `(name, inode)` of each of [`observed_namespaces`].
    pub fn namespaces(&self) -> Result<Vec<(&'static str, u64)>, ReadError> {
        namespaces_at(&|name| self.path(&format!("ns/{name}")))
    }

    /// The size in bytes of the filesystem mounted at `mount.point` in the
    /// program's root — only if the path reaches that very mount (its mount
    /// id is checked on the opened descriptor, so a path the program bent
    /// with a symlink or a rename is never measured in its place).
    pub fn mount_size(&self, mount: &Mount) -> Result<u64, ReadError> {
        let what = format!("the size of {}", mount.point);
        let path = self.path(&format!("root{}", mount.point));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| read_error(&what, e))?;
        let fd = file.as_raw_fd();
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
            .map_err(|e| read_error(&what, e))?;
        if parse::fdinfo_mnt_id(&info) != Some(mount.id) {
            return Err(read_error(&what, "the path no longer reaches that mount"));
        }
        // statvfs: f_blocks counts f_frsize units.
        let stat = nix::sys::statvfs::fstatvfs(&file)
            .map_err(|errno| read_error(&what, std::io::Error::from(errno)))?;
        // fsblkcnt_t is u64 here but u32 on some targets.
        #[allow(clippy::useless_conversion)]
        let blocks = u64::try_from(stat.blocks()).unwrap_or(0);
        #[allow(clippy::useless_conversion)]
        let size = u64::try_from(stat.fragment_size()).unwrap_or(0);
        Ok(blocks.saturating_mul(size))
    }
}

/// (device, inode) of the file `path` leads to.
pub fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.dev(), meta.ino()))
}

fn namespaces_at(link: &dyn Fn(&str) -> PathBuf) -> Result<Vec<(&'static str, u64)>, ReadError> {
    observed_namespaces()
        .map(|name| {
            let what = format!("namespace {name}");
            let target = std::fs::read_link(link(name)).map_err(|e| read_error(&what, e))?;
            let inode = parse::ns_inode(&target.to_string_lossy())
                .ok_or_else(|| read_error(&what, "malformed link"))?;
            Ok((name, inode))
        })
        .collect()
}

/// What the program's observation is compared against on the provider's side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFacts {
    /// Filters the provider itself runs under: bwrap and the program inherit them.
    pub seccomp_filters: u32,
    pub namespaces: Vec<(&'static str, u64)>,
}

/// The provider's own seccomp filter count and namespaces — of the calling
/// thread, which must be the one that forked bwrap (the supervisor): filters
/// and namespaces are per thread, and bwrap inherited that thread's.
pub fn provider_facts() -> Result<ProviderFacts, ReadError> {
    let status =
        std::fs::read_to_string("/proc/thread-self/status").map_err(|e| read_error("status", e))?;
    let status = parse::status(&status).ok_or_else(|| read_error("status", "malformed"))?;
    Ok(ProviderFacts {
        seccomp_filters: status.seccomp_filters,
        namespaces: namespaces_at(&|name| PathBuf::from(format!("/proc/thread-self/ns/{name}")))?,
    })
}

/// A file's content, trimmed; `None` when absent or unreadable.
pub fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}
