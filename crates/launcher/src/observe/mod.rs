//! Observation of the running sandbox from outside: what the kernel says
//! about the program, read on the host side from `/proc/<program pid>` and
//! the run's cgroup, recorded apart from the plan and compared with it.
//!
//! Steps (supervisor.rs calls [`observe`] once bwrap reported its init):
//! 1. wait for the program to have exec'ed (moment.rs: only then are its
//!    filters, capabilities and root final);
//! 2. read its `status` (seccomp mode and filters, no_new_privs, CapEff,
//!    CapBnd, host uid/gid), `uid_map`/`gid_map`, `ns/*`, `cgroup`,
//!    `limits`, `mountinfo`, the sizes of its writable filesystems, and the
//!    run's cgroup limits as read back;
//! 3. compare with the expectation (expect.rs, compare.rs): any mismatch,
//!    or a read that fails while the program still runs, fails the run
//!    closed (the supervisor stops it; `wait()` rejects with
//!    `ERR_CORDON_CONFINEMENT_MISMATCH`).
//!
//! Cost: a dozen small /proc reads and one statfs per writable filesystem,
//! on the supervisor thread while the program runs (docs/receipts.md has
//! the measured numbers); nothing is added to the caller's thread.

pub mod compare;
pub mod expect;
pub mod moment;
pub mod parse;
pub mod reader;
pub mod run;

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use compare::Mismatch;
use expect::Expectation;
use moment::NotObserved;
use parse::{IdRange, Limit, Mount, Status};
use reader::{ProcDir, ReadError};

/// How long the supervisor waits for the program to exec after bwrap
/// reported its init (ms): ~250 times a loaded host's usual few ms. A
/// program still alive and still "bwrap" past it fails the run: the
/// sandbox's `/usr` holds the very bwrap binary, and a program that execs
/// it (blocking in `--args 3`) would otherwise never be observed.
pub const OBSERVE_WINDOW_MS: u64 = 5000;

/// A mount as observed, with its size when it is writable storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSeen {
    pub mount: Mount,
    pub size_bytes: Option<u64>,
}

/// What the program's `/proc` entries showed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub pid: i32,
    pub status: Status,
    pub uid_map: Vec<IdRange>,
    pub gid_map: Vec<IdRange>,
    pub namespaces: Vec<(&'static str, u64)>,
    pub proc_cgroup: String,
    /// Each planned cgroup limit file and what it read back (`None`: absent).
    pub cgroup_limits: Vec<(PathBuf, Option<String>)>,
    pub limits: Vec<Limit>,
    pub mounts: Vec<MountSeen>,
}

/// The outcome of one observation, for the receipt and the supervisor.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    Observed {
        seen: Box<Observation>,
        mismatches: Vec<Mismatch>,
        cost: Duration,
    },
    NotObserved(NotObserved),
    /// A read failed while the program was still running: fails closed.
    Unreadable(String),
}

impl Report {
    /// The mismatches that fail the run: an unreadable program is one, and
    /// so is one that never showed itself while alive. A program that ended
    /// first, or whose sandbox the run's own stop took down first, is not
    /// (it is reported as not observed).
    pub fn mismatches(&self) -> Vec<Mismatch> {
        match self {
            Report::Observed { mismatches, .. } => mismatches.clone(),
            Report::NotObserved(NotObserved::Ended | NotObserved::Stopped) => Vec::new(),
            Report::NotObserved(why @ NotObserved::NotStarted) => vec![Mismatch {
                check: "observation".into(),
                planned: json!(format!("observed within {OBSERVE_WINDOW_MS} ms")),
                observed: json!(why.as_str()),
            }],
            Report::Unreadable(detail) => vec![Mismatch {
                check: "observation".into(),
                planned: json!("readable"),
                observed: json!(detail),
            }],
        }
    }
}

/// Everything [`observe`] needs besides the process itself.
pub struct Target<'a> {
    pub init_pid: i32,
    pub init: &'a OwnedFd,
    pub bwrap_exe: (u64, u64),
    pub expect: &'a Expectation,
    pub window: Duration,
    /// Whether the run's stop has taken the sandbox down (moment::await_program).
    pub killed: &'a dyn Fn() -> bool,
}

/// Steps 1–3 of the module doc.
pub fn observe(target: &Target<'_>) -> Report {
    let program = match moment::await_program(
        target.init_pid,
        target.init,
        target.bwrap_exe,
        target.window,
        target.killed,
    ) {
        Ok(program) => program,
        Err(why) => return Report::NotObserved(why),
    };
    let started = Instant::now();
    // PF_EXITING only ever gets set: a program not exiting after the reads
    // was not exiting during them.
    match read_all(&program, target.expect) {
        Ok(_) if !program.is_running() => Report::NotObserved(NotObserved::Ended),
        Ok(seen) => {
            let mismatches = compare::compare(target.expect, &seen, page_bytes());
            Report::Observed {
                seen: Box::new(seen),
                mismatches,
                cost: started.elapsed(),
            }
        }
        Err(_) if !program.is_running() => Report::NotObserved(NotObserved::Ended),
        Err(e) => Report::Unreadable(e.to_string()),
    }
}

/// Reads everything. A task on its way out is not what was confined: from
/// the moment it has `PF_EXITING` a cgroup v1 hierarchy shows it in the
/// root cgroup, then its namespaces go — a false mismatch. So [`observe`]
/// discards reads after which the program is exiting or gone.
fn read_all(program: &ProcDir, expect: &Expectation) -> Result<Observation, ReadError> {
    let proc_cgroup = program.read("cgroup")?;
    let cgroup_limits = expect
        .cgroup_limits
        .iter()
        .map(|w| (w.path.clone(), reader::read_trimmed(&w.path)))
        .collect();
    let limits = program.limits()?;
    let status = program.status()?;
    let uid_map = program.id_map("uid_map")?;
    let gid_map = program.id_map("gid_map")?;
    let mut mounts = Vec::new();
    for mount in program.mounts()? {
        let size_bytes = match holds_data(&mount) {
            true => Some(program.mount_size(&mount)?),
            false => None,
        };
        mounts.push(MountSeen { mount, size_bytes });
    }
    Ok(Observation {
        pid: program.pid,
        namespaces: program.namespaces()?,
        status,
        uid_map,
        gid_map,
        proc_cgroup,
        cgroup_limits,
        limits,
        mounts,
    })
}

/// Writable storage a program could fill (not procfs, ptys, device nodes).
fn holds_data(mount: &Mount) -> bool {
    mount.writable
        && !["proc", "devpts", "mqueue", "devtmpfs", "sysfs"].contains(&mount.fs_type.as_str())
}

fn page_bytes() -> u64 {
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE);
    page.ok()
        .flatten()
        .and_then(|p| u64::try_from(p).ok())
        .unwrap_or(4096)
}

/// The receipt's `confinement.observed`.
pub fn report_json(report: &Report, expect: &Expectation) -> Value {
    match report {
        Report::Observed { seen, cost, .. } => observation_json(seen, *cost, expect),
        Report::NotObserved(why) => json!({"status": "not-observed", "reason": why.as_str()}),
        Report::Unreadable(detail) => json!({"status": "unreadable", "reason": detail}),
    }
}

fn observation_json(seen: &Observation, cost: Duration, expect: &Expectation) -> Value {
    let s = &seen.status;
    let provider = |name: &str| {
        let found = expect.separate_namespaces.iter().find(|(n, _)| *n == name);
        found.map(|(_, inode)| *inode)
    };
    let namespaces: serde_json::Map<String, Value> = seen
        .namespaces
        .iter()
        .map(|(name, inode)| {
            let entry = json!({"inode": inode, "provider": provider(name)});
            (name.to_string(), entry)
        })
        .collect();
    let mounts: Vec<Value> = seen
        .mounts
        .iter()
        // Device nodes bound into bwrap's /dev hold no data: left out.
        .filter(|m| m.mount.fs_type != "devtmpfs")
        .map(|m| {
            json!({"path": m.mount.point, "fsType": m.mount.fs_type,
            "writable": m.mount.writable, "sizeBytes": m.size_bytes})
        })
        .collect();
    let cgroup_limits: Vec<Value> = seen
        .cgroup_limits
        .iter()
        .map(|(path, value)| json!({"file": path, "value": value}))
        .collect();
    json!({
        "status": "observed",
        "pid": seen.pid,
        "costMicros": u64::try_from(cost.as_micros()).unwrap_or(u64::MAX),
        "seccomp": {"mode": s.seccomp_mode, "filters": s.seccomp_filters},
        "noNewPrivs": s.no_new_privs,
        "capabilities": {"effective": format!("{:016x}", s.cap_eff), "bounding": format!("{:016x}", s.cap_bnd)},
        "hostUid": s.uids,
        "hostGid": s.gids,
        "groups": s.groups,
        "uidMap": seen.uid_map,
        "gidMap": seen.gid_map,
        "namespaces": namespaces,
        "cgroup": {"membership": seen.proc_cgroup.lines().collect::<Vec<_>>(), "limits": cgroup_limits},
        "rlimits": seen.limits,
        "mounts": mounts,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod live_tests;
