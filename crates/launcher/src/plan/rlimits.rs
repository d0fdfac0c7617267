//! Resource ceilings as rlimits: a pure plan (`plan`) and an
//! async-signal-safe `apply` for a pre_exec hook. The launcher turns the plan
//! into `plan::RlimitSetting`s (confinement.rs), which `child_fds` applies in
//! the spawn's pre_exec through the same `set_limit`; `apply` is the
//! standalone form (and what the tests exercise against a real child).
//!
//! The limits are set on bwrap before it execs and are inherited by
//! everything in the sandbox; bwrap cannot raise them (hard = soft, and it
//! drops every capability). What each one bounds:
//! - `AS`: virtual address space per process (a memory bomb gets ENOMEM).
//! - `CPU`: CPU seconds per process; SIGXCPU at the soft limit, SIGKILL one
//!   second later at the hard limit.
//! - `FSIZE`: the largest file a process may write (SIGXFSZ/EFBIG past it).
//! - `NOFILE`: open descriptors per process.
//! - `NPROC`: processes of the *real uid*, counted across the whole host.
//!   When the provider runs as root the launcher runs bwrap as a uid of
//!   the reserved range no host process uses (run_identity.rs): a per-run
//!   uid, or the reserved owner of the caller's workspace, so this ceiling
//!   is the run's own (shared only by runs on one such workspace). A
//!   non-root provider's sandboxes share its uid, and so this ceiling: a
//!   fork bomb in one can make forks fail in its siblings. Zombies count
//!   until reaped (see confinement.rs on bwrap's orphaned init). With a
//!   cgroup it is a host-wide backstop; the per-sandbox bound is `pids.max`.
//! - `CORE` = 0: no core dumps (they would leak sandbox memory to the host's
//!   core pattern handler and cost disk).
//!
//! Fixed values, set explicitly rather than inherited from whatever the
//! provider's own limits happen to be (a provider started from a shell with
//! raised limits would otherwise pass them on):
//! - `RTPRIO` = 0: no real-time scheduling policy (SCHED_FIFO/RR would
//!   starve every normal process on the CPU, the provider included).
//! - `NICE` = 0: the nice value can only be raised (priority lowered),
//!   never lowered below the default.
//! - `RTTIME` = 0 µs: with RTPRIO 0 no thread can be real-time; should one
//!   become so anyway, it gets no real-time CPU before SIGKILL.
//! - `SIGPENDING` = 1024: queued signals of the real uid (kernel memory per
//!   signal); plenty for a runtime, far below the host default (~96 000).
//! - `MSGQUEUE` = 0 bytes: no POSIX message queue can be created. The
//!   kernel charges a queue's bytes up the user-namespace chain to the
//!   namespace's owner, so a non-root provider's sandbox holding its own
//!   quota took the provider's whole one (its `mq_open` then failed with
//!   EMFILE). The seccomp filter denies `mq_open` (ENOSYS) as well; this
//!   ceiling also bounds a queue created by `open` on an mqueue mount,
//!   since the kernel checks the creator's own rlimit.
//! - `MEMLOCK` = 64 KiB: memory locked against swap (gpg's secure memory
//!   fits); locked pages would otherwise be host memory the kernel can
//!   never reclaim under pressure.

use std::io;

use crate::request::presets::ResourceCeilings;

/// The fixed ceilings every sandbox gets (see the module comment).
pub const RTPRIO: u64 = 0;
pub const NICE: u64 = 0;
pub const RTTIME_MICROS: u64 = 0;
pub const SIGPENDING: u64 = 1024;
pub const MSGQUEUE_BYTES: u64 = 0;
pub const MEMLOCK_BYTES: u64 = 64 << 10;
/// Seconds between SIGXCPU (catchable: a chance to report) and SIGKILL.
pub const CPU_KILL_GRACE_SECONDS: u64 = 1;

/// The rlimits cordon sets, in the order they are applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    AddressSpace,
    Processes,
    OpenFiles,
    FileSize,
    CpuSeconds,
    CoreFileSize,
    RealtimePriority,
    Nice,
    RealtimeMicros,
    PendingSignals,
    MessageQueueBytes,
    LockedMemory,
}

impl Resource {
    /// The name used in receipts and docs (the `RLIMIT_` suffix).
    pub fn name(self) -> &'static str {
        match self {
            Self::AddressSpace => "AS",
            Self::Processes => "NPROC",
            Self::OpenFiles => "NOFILE",
            Self::FileSize => "FSIZE",
            Self::CpuSeconds => "CPU",
            Self::CoreFileSize => "CORE",
            Self::RealtimePriority => "RTPRIO",
            Self::Nice => "NICE",
            Self::RealtimeMicros => "RTTIME",
            Self::PendingSignals => "SIGPENDING",
            Self::MessageQueueBytes => "MSGQUEUE",
            Self::LockedMemory => "MEMLOCK",
        }
    }

    /// Every resource the launcher sets, for the lookup by number.
    const ALL: [Resource; 12] = [
        Self::AddressSpace,
        Self::Processes,
        Self::OpenFiles,
        Self::FileSize,
        Self::CpuSeconds,
        Self::CoreFileSize,
        Self::RealtimePriority,
        Self::Nice,
        Self::RealtimeMicros,
        Self::PendingSignals,
        Self::MessageQueueBytes,
        Self::LockedMemory,
    ];

    /// The `RLIMIT_*` number as the plan and receipts carry it.
    pub fn raw_i32(self) -> i32 {
        self.nix() as i32
    }

    /// The resource with `RLIMIT_*` number `raw` (no allocation: pre_exec).
    pub fn from_raw_i32(raw: i32) -> Option<Resource> {
        Self::ALL.into_iter().find(|r| r.raw_i32() == raw)
    }

    fn nix(self) -> nix::sys::resource::Resource {
        use nix::sys::resource::Resource as R;
        match self {
            Self::AddressSpace => R::RLIMIT_AS,
            Self::Processes => R::RLIMIT_NPROC,
            Self::OpenFiles => R::RLIMIT_NOFILE,
            Self::FileSize => R::RLIMIT_FSIZE,
            Self::CpuSeconds => R::RLIMIT_CPU,
            Self::CoreFileSize => R::RLIMIT_CORE,
            Self::RealtimePriority => R::RLIMIT_RTPRIO,
            Self::Nice => R::RLIMIT_NICE,
            Self::RealtimeMicros => R::RLIMIT_RTTIME,
            Self::PendingSignals => R::RLIMIT_SIGPENDING,
            Self::MessageQueueBytes => R::RLIMIT_MSGQUEUE,
            Self::LockedMemory => R::RLIMIT_MEMLOCK,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimit {
    pub resource: Resource,
    pub soft: u64,
    pub hard: u64,
}

/// How many rlimits a plan holds; fixed so `apply` never allocates.
pub const RLIMIT_COUNT: usize = 12;

/// A fixed-size, `Copy` plan: safe to move into a pre_exec closure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RlimitPlan {
    pub limits: [Rlimit; RLIMIT_COUNT],
}

/// Pure: ceilings → the rlimits to set. Soft equals hard everywhere but
/// CPU, so the sandbox cannot raise any of them.
pub fn plan(ceilings: &ResourceCeilings) -> RlimitPlan {
    let fixed = |resource, value| Rlimit {
        resource,
        soft: value,
        hard: value,
    };
    let cpu_hard = ceilings.cpu_seconds.saturating_add(CPU_KILL_GRACE_SECONDS);
    RlimitPlan {
        limits: [
            fixed(Resource::AddressSpace, ceilings.address_space_bytes),
            fixed(Resource::Processes, ceilings.processes),
            fixed(Resource::OpenFiles, ceilings.open_files),
            fixed(Resource::FileSize, ceilings.file_size_bytes),
            Rlimit {
                resource: Resource::CpuSeconds,
                soft: ceilings.cpu_seconds,
                hard: cpu_hard,
            },
            fixed(Resource::CoreFileSize, 0),
            fixed(Resource::RealtimePriority, RTPRIO),
            fixed(Resource::Nice, NICE),
            fixed(Resource::RealtimeMicros, RTTIME_MICROS),
            fixed(Resource::PendingSignals, SIGPENDING),
            fixed(Resource::MessageQueueBytes, MSGQUEUE_BYTES),
            fixed(Resource::LockedMemory, MEMLOCK_BYTES),
        ],
    }
}

/// Thin and async-signal-safe: only `setrlimit(2)` calls, no allocation,
/// no locks. For pre_exec, between fork and exec of a multi-threaded parent.
/// The error is built from the raw errno, which does not allocate.
pub fn apply(plan: &RlimitPlan) -> io::Result<()> {
    for limit in &plan.limits {
        set_limit(limit.resource.raw_i32(), limit.soft, limit.hard)?;
    }
    Ok(())
}

/// Thin: this process's hard limit of `resource` (raw), if readable.
pub fn current_hard(resource: i32) -> Option<u64> {
    let resource = Resource::from_raw_i32(resource)?;
    nix::sys::resource::getrlimit(resource.nix())
        .ok()
        .map(|(_, hard)| hard)
}

/// The one `setrlimit(2)` call, shared by `apply` and the spawn's pre_exec
/// (`child_fds`), which applies the plan's `RlimitSetting`s by number.
/// Async-signal-safe: a lookup in a fixed array and `nix`'s direct
/// `setrlimit` wrapper; an unknown number is EINVAL.
pub fn set_limit(resource: i32, soft: u64, hard: u64) -> io::Result<()> {
    let resource =
        Resource::from_raw_i32(resource).ok_or(io::Error::from_raw_os_error(libc::EINVAL))?;
    nix::sys::resource::setrlimit(resource.nix(), soft, hard)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn the_default_plan_is_the_preset_ceilings_with_no_core_dumps() {
        let plan = plan(&ResourceCeilings::default());
        let by_name: Vec<(&str, u64, u64)> = plan
            .limits
            .iter()
            .map(|l| (l.resource.name(), l.soft, l.hard))
            .collect();
        assert_eq!(
            by_name,
            vec![
                ("AS", 256 << 20, 256 << 20),
                ("NPROC", 64, 64),
                ("NOFILE", 256, 256),
                ("FSIZE", 64 << 20, 64 << 20),
                ("CPU", 30, 31),
                ("CORE", 0, 0),
                ("RTPRIO", 0, 0),
                ("NICE", 0, 0),
                ("RTTIME", 0, 0),
                ("SIGPENDING", 1024, 1024),
                ("MSGQUEUE", 0, 0),
                ("MEMLOCK", 65_536, 65_536),
            ]
        );
    }

    #[test]
    fn a_huge_cpu_ceiling_saturates_instead_of_wrapping() {
        let ceilings = ResourceCeilings {
            cpu_seconds: u64::MAX,
            ..ResourceCeilings::default()
        };
        let cpu = plan(&ceilings).limits[4];
        assert_eq!((cpu.soft, cpu.hard), (u64::MAX, u64::MAX));
    }

    #[test]
    fn applied_limits_are_what_a_child_process_sees() {
        let plan = plan(&ResourceCeilings {
            open_files: 77,
            ..ResourceCeilings::default()
        });
        let mut command = Command::new("/bin/cat");
        command.arg("/proc/self/limits");
        // SAFETY: `apply` only calls setrlimit (async-signal-safe) on a Copy plan.
        unsafe { command.pre_exec(move || apply(&plan)) };
        let output = command.output().unwrap();
        assert!(output.status.success());
        let limits = String::from_utf8_lossy(&output.stdout);
        let row = |name: &str| -> Vec<String> {
            let line = limits.lines().find(|l| l.starts_with(name)).unwrap();
            line[name.len()..]
                .split_whitespace()
                .take(2)
                .map(String::from)
                .collect()
        };
        assert_eq!(row("Max open files"), ["77", "77"]);
        assert_eq!(row("Max core file size"), ["0", "0"]);
        assert_eq!(row("Max cpu time"), ["30", "31"]);
        assert_eq!(row("Max processes"), ["64", "64"]);
        assert_eq!(row("Max address space"), ["268435456", "268435456"]);
        assert_eq!(row("Max file size"), ["67108864", "67108864"]);
        assert_eq!(row("Max realtime priority"), ["0", "0"]);
        assert_eq!(row("Max nice priority"), ["0", "0"]);
        assert_eq!(row("Max realtime timeout"), ["0", "0"]);
        assert_eq!(row("Max pending signals"), ["1024", "1024"]);
        assert_eq!(row("Max msgqueue size"), ["0", "0"]);
        assert_eq!(row("Max locked memory"), ["65536", "65536"]);
    }

    #[test]
    fn a_limit_the_kernel_refuses_fails_the_spawn() {
        // NOFILE above fs.nr_open is refused even for root.
        let plan = plan(&ResourceCeilings {
            open_files: u64::MAX - 1,
            ..ResourceCeilings::default()
        });
        let mut command = Command::new("/bin/true");
        // SAFETY: `apply` only calls setrlimit (async-signal-safe) on a Copy plan.
        unsafe { command.pre_exec(move || apply(&plan)) };
        assert!(command.status().is_err());
    }
}
