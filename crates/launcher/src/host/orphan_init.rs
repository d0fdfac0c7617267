//! Killing bwrap namespace inits whose outer bwrap is gone: what a run
//! leaves of itself when its provider is killed (SIGKILL, a crash, the OOM
//! killer) while bwrap sets the sandbox up.
//!
//! Why they exist: bwrap clones its namespace init, which first blocks
//! reading an eventfd until the outer bwrap releases it, then sets the
//! sandbox up (mounts, the runtime's binds), and arms its own parent-death
//! signal only in its init loop, after that set-up (bubblewrap.c,
//! `do_init`). The outer bwrap dies with the provider (the parent-death
//! signal the launcher arms before bwrap's exec); an init not yet armed
//! then lives on, reparented, as pid 1 of a pid namespace of its own:
//! - killed before the release, it blocks on the eventfd forever (it holds
//!   the run's namespaces and cgroup, and runs nothing);
//! - killed after the release (the set-up takes milliseconds), it finishes
//!   the set-up and starts the program, which then runs unsupervised:
//!   confined as planned, but with no stop, timeout or receipt, as a uid
//!   whose lease died with the provider (tested by hand: bwrap 0.8).
//!
//! Sessions sweep their owner uid (uid_sweep.rs); this sweep covers every
//! run. An init is an orphan ([`is_orphan_init`]) when it is a process of
//! the bwrap binary the launcher uses (device and inode of its `exe`,
//! whatever name it was started by), pid 1 of a pid namespace one level
//! below ours, of a uid only this provider's sandboxes run as
//! ([`sweepable_uid`]), and its parent is no outer bwrap: a live run's init
//! always has its outer bwrap as parent (bwrap waits for it until it exits),
//! and once the outer bwrap is gone the launcher kills the namespace itself
//! if it is still alive. The parent is taken for an outer bwrap when it
//! runs that binary and is not itself a namespace's pid 1 (a provider that
//! runs inside a bwrap sandbox has that bwrap's init as reaper). A parent
//! whose `exe` cannot be read (a non-root provider looking at a root-owned
//! reaper) is judged by its command name; one named as the binary, or
//! `bwrap`, is taken for bwrap, so a run whose parent cannot be told apart
//! is spared.
//!
//! Steps ([`sweep`]): scan `/proc` (a first filter on each process's `exe`,
//! one `stat`), open a pidfd, then read the facts: a pid reused between the
//! scan and the open is read as the process the pidfd names, and a process
//! that died between the open and the reads is at worst signalled with a
//! harmless ESRCH. SIGKILL through the pidfd: the kernel then kills the
//! whole namespace. Run by each provider's periodic housekeeping
//! (launch.rs), off the caller's thread, so an orphan lives until the next
//! launch of a provider of the same uid that is due to sweep (its first
//! launch, then one every 30 s at most).

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::host::pidfd;
use crate::host::process_identity::RESERVED_UIDS;
use crate::host::subordinate_ids;

/// What the scan reads about one candidate process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitFacts {
    /// Real uid (`/proc/<pid>/status`, `Uid:`).
    pub uid: u32,
    /// `NSpid:` of `/proc/<pid>/status`, outermost first.
    pub nspid: Vec<u32>,
    /// Its `exe` is the launcher's bwrap (same device and inode).
    pub exe_is_bwrap: bool,
    /// Its parent is that bwrap: by `exe` when readable, else by command
    /// name (module doc).
    pub parent_is_bwrap: bool,
    /// Its parent is pid 1 of a pid namespace (a reaper, never an outer
    /// bwrap, which is a child of its provider).
    pub parent_is_namespace_init: bool,
}

/// Pure: `facts` describe a bwrap namespace init whose outer bwrap is gone,
/// of a uid `may_sweep` allows, one pid namespace below a process whose
/// `NSpid` has `own_depth` entries.
pub fn is_orphan_init(
    facts: &InitFacts,
    own_depth: usize,
    may_sweep: impl Fn(u32) -> bool,
) -> bool {
    let init_below_us = facts.nspid.len() == own_depth + 1 && facts.nspid.last() == Some(&1);
    let outer_lives = facts.parent_is_bwrap && !facts.parent_is_namespace_init;
    facts.exe_is_bwrap && init_below_us && !outer_lives && may_sweep(facts.uid)
}

/// Pure: whether `uid` is one only this provider's sandboxes run as. A
/// root provider's bwrap runs as a uid of cordon's reserved range (never
/// root); a non-root provider's as a uid of its subordinate range
/// (`subordinate`). Not a non-root provider's own uid, which its
/// `"shared-with-provider"` runs use but so does everything else of that
/// account, including bwraps of its own that are no cordon runs: those
/// runs' orphans are not swept.
pub fn sweepable_uid(uid: u32, provider_uid: u32, subordinate: Option<(u32, u32)>) -> bool {
    if provider_uid == 0 {
        return RESERVED_UIDS.contains(&uid);
    }
    subordinate.is_some_and(|(first, count)| uid >= first && uid - first < count)
}

/// Pure over `/proc/<pid>/stat`: the command name and the parent pid.
pub fn comm_and_ppid(stat: &str) -> Option<(&str, u32)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let ppid = stat
        .get(close + 1..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((comm, ppid))
}

/// Pure over `/proc/<pid>/status`: the real uid and `NSpid`.
pub fn uid_and_nspid(status: &str) -> Option<(u32, Vec<u32>)> {
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name));
    let uid = field("Uid:")?.split_whitespace().next()?.parse().ok()?;
    let nspid = field("NSpid:")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<Vec<u32>, _>>()
        .ok()?;
    Some((uid, nspid))
}

/// The launcher's bwrap binary: its file, and the command name its
/// processes get (the file name, cut to the kernel's 15 bytes).
#[derive(Debug, Clone)]
struct Binary {
    file: (u64, u64),
    comm: String,
}

impl Binary {
    fn of(path: &Path) -> Option<Binary> {
        let meta = std::fs::metadata(path).ok()?;
        let name = path.file_name()?.to_string_lossy();
        let comm = name.chars().scan(0, |len, c| {
            *len += c.len_utf8();
            (*len <= 15).then_some(c)
        });
        Some(Binary {
            file: (meta.dev(), meta.ino()),
            comm: comm.collect(),
        })
    }

    /// Whether `pid` runs it: by `exe`, else (unreadable) by command name
    /// when `by_name` allows (its own, or `bwrap`).
    fn runs_in(&self, pid: u32, by_name: bool) -> bool {
        match std::fs::metadata(format!("/proc/{pid}/exe")) {
            Ok(meta) => (meta.dev(), meta.ino()) == self.file,
            Err(_) if by_name => std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| comm_and_ppid(&s).map(|(c, _)| c == self.comm || c == "bwrap"))
                .unwrap_or(false),
            Err(_) => false,
        }
    }
}

/// Thin: the facts of `pid`, whose parent is `ppid` (`None` when it is
/// gone or unreadable).
fn read_facts(pid: u32, ppid: u32, bwrap: &Binary) -> Option<InitFacts> {
    let status = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/status")).ok();
    let (uid, nspid) = uid_and_nspid(&status(pid)?)?;
    // Unreadable: taken for no init, so a bwrap parent is taken for the outer one.
    let parent_is_namespace_init = status(ppid)
        .as_deref()
        .and_then(uid_and_nspid)
        .is_some_and(|(_, nspid)| nspid.last() == Some(&1));
    Some(InitFacts {
        uid,
        nspid,
        exe_is_bwrap: bwrap.runs_in(pid, false),
        parent_is_bwrap: bwrap.runs_in(ppid, true),
        parent_is_namespace_init,
    })
}

/// This process's `NSpid` depth (1 in the initial pid namespace).
fn own_depth() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    uid_and_nspid(&status).map(|(_, nspid)| nspid.len())
}

/// Kills every orphaned namespace init of `bwrap` (module doc) this
/// provider may sweep; returns how many it signalled. Best effort: what
/// cannot be read is left alone.
pub fn sweep(bwrap: &Path) -> usize {
    let Some(binary) = Binary::of(bwrap) else {
        return 0;
    };
    let Some(scope) = Scope::of_this_provider() else {
        return 0;
    };
    let depth = scope.depth;
    let may_sweep = |uid| scope.may_sweep(uid);
    let mut signalled = 0;
    let mut killed = Vec::new();
    for pid in proc_pids() {
        // The first filter: one `stat` per process on the host (another
        // user's processes fail it at once, unreadable).
        if !binary.runs_in(pid, false) {
            continue;
        }
        // The pidfd before the facts (module doc).
        let Ok(fd) = pidfd::open(pid as i32) else {
            continue;
        };
        let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| comm_and_ppid(&s).map(|(_, ppid)| ppid))
        else {
            continue;
        };
        let orphan = read_facts(pid, ppid, &binary)
            .is_some_and(|facts| is_orphan_init(&facts, depth, may_sweep));
        if orphan && pidfd::send_signal(&fd, libc::SIGKILL).is_ok() {
            signalled += 1;
            killed.push(fd);
        }
    }
    if inherits_orphans() {
        reap_killed(&killed);
        reap_exited_inits();
    }
    signalled
}

/// The provider a sweep or a reap acts for: its pid-namespace depth and the
/// uids its sandboxes run as (module doc).
struct Scope {
    depth: usize,
    provider_uid: u32,
    subordinate: Option<(u32, u32)>,
}

impl Scope {
    /// Thin: read from this process (`None` when `/proc/self` is unreadable).
    fn of_this_provider() -> Option<Self> {
        let depth = own_depth()?;
        let provider_uid = nix::unistd::geteuid().as_raw();
        let subordinate = (provider_uid != 0)
            .then(subordinate_ids::for_current_user)
            .and_then(Result::ok)
            .map(|ids| (ids.uids.first, ids.uids.count));
        Some(Self {
            depth,
            provider_uid,
            subordinate,
        })
    }

    fn may_sweep(&self, uid: u32) -> bool {
        sweepable_uid(uid, self.provider_uid, self.subordinate)
    }
}

/// The pids `/proc` lists now (none when it cannot be read).
fn proc_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// Whether orphans are reparented to this process: it is pid 1 of its pid
/// namespace (a container's entry point) or a child subreaper. Only then can
/// an exited namespace init be a zombie child of ours, so only then is
/// scanning `/proc` for one, or waiting to reap the inits a sweep killed,
/// worth anything.
pub fn inherits_orphans() -> bool {
    std::process::id() == 1 || nix::sys::prctl::get_child_subreaper().unwrap_or(true)
}

/// Pure over `/proc/<pid>/stat`: whether the process is a zombie (state `Z`,
/// the field after the command name).
pub fn stat_says_zombie(stat: &str) -> bool {
    stat.rsplit_once(") ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        == Some("Z")
}

/// Reaps every exited namespace init whose reaper is this process (pid 1
/// of a container, or a subreaper): a zombie child of ours that is pid 1 of
/// a pid namespace one level below ours, of a uid only our sandboxes run as.
/// These are the inits the teardown could not reap by their pidfd: a stop
/// during bwrap's set-up kills bwrap before it reported its init, and the
/// init, reparented to us, dies with its namespace unknown to the run
/// (white-box review: 18 zombies in 60 runs of `deadlineMs: 1` as pid 1).
/// Our own bwraps (one level up: same depth as ours) are never matched, so
/// the supervisors' waits for them are untouched; a zombie child of ours
/// cannot be reaped by anyone else, so its pid is not reused before the
/// pidfd opens. Returns how many it reaped; scans nothing unless this
/// process [inherits orphans](inherits_orphans).
pub fn reap_exited_inits() -> usize {
    if !inherits_orphans() {
        return 0;
    }
    let Some(scope) = Scope::of_this_provider() else {
        return 0;
    };
    let me = std::process::id();
    let mut reaped = 0;
    for pid in proc_pids() {
        let ours = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .is_some_and(|stat| {
                stat_says_zombie(&stat) && comm_and_ppid(&stat).is_some_and(|(_, p)| p == me)
            });
        let init = ours
            && std::fs::read_to_string(format!("/proc/{pid}/status"))
                .ok()
                .and_then(|status| uid_and_nspid(&status))
                .is_some_and(|(uid, nspid)| {
                    nspid.len() == scope.depth + 1
                        && nspid.last() == Some(&1)
                        && scope.may_sweep(uid)
                });
        if init && open_and_reap(pid) {
            reaped += 1;
        }
    }
    reaped
}

/// Opens `pid` (a zombie child of ours: not reusable) and reaps it.
fn open_and_reap(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(|pid| pidfd::open(pid).ok())
        .is_some_and(|fd| pidfd::reap_if_child(&fd))
}

/// How long a sweep waits, in all, for the inits it killed to exit so it
/// can reap those that are its own children (a provider that is pid 1 of a
/// container: pidfd::reap_if_child). One not gone by then stays a zombie
/// until this process exits.
const REAP_WAIT: Duration = Duration::from_secs(1);

fn reap_killed(killed: &[std::os::fd::OwnedFd]) {
    let until = Instant::now() + REAP_WAIT;
    for fd in killed {
        if pidfd::wait_exit(fd, until.saturating_duration_since(Instant::now())) {
            pidfd::reap_if_child(fd);
        }
    }
}

#[cfg(test)]
#[path = "orphan_init_tests.rs"]
mod tests;
