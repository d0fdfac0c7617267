//! The provider-liveness gate: the program starts only in a sandbox whose
//! death is still tied to its provider.
//!
//! bwrap's namespace init arms its parent-death signal in `do_init`, after
//! the sandbox's set-up; the outer bwrap dies with the provider (the
//! launcher arms its signal before bwrap's exec). A provider that dies in
//! between leaves the init orphaned, and without this gate the init would
//! start the program with no deadline, no stop and no receipt
//! (docs/security.md § "Processes of a dead provider").
//!
//! Two checks, in this order:
//! 1. the init (pid 1 here) has armed its signal. bwrap's `do_init` loads
//!    the seccomp filters right after `PR_SET_PDEATHSIG`, the same ones
//!    bwrap loaded in this process before its exec (every cordon plan has
//!    one), so once the init's `Seccomp_filters:` count in `/proc/1/status`
//!    reaches ours (`/proc/self/status`), the arming is behind it. A count,
//!    not the `Seccomp:` mode: a provider that itself runs under seccomp
//!    (a container runtime, systemd's `SystemCallFilter=`, a sandbox) hands
//!    its filters down, and the init's mode is then non-zero from its birth
//!    (white-box review of the gate, F1). A kernel without the count (before
//!    5.9) falls back to the mode;
//! 2. the outer bwrap is still alive: the launcher gives it one end of a Unix
//!    socket pair as `--json-status-fd` (bwrap closes that descriptor in the
//!    sandbox before the init exists, and the launcher closes its own after
//!    the fork), and this process the other end: a hang-up on ours means
//!    the outer bwrap's end is closed, so the outer bwrap is gone.
//!
//! If the outer bwrap died before the init armed, check 2 sees the hang-up
//! (a process's descriptors close before its parent-death signals go out).
//! If it is alive at check 2, the armed init dies with it later, and the
//! pid namespace with the init. Either way no program runs unsupervised.

use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Where the namespace init's status is read.
pub const INIT_STATUS: &str = "/proc/1/status";
/// Where this process's own status is read (the filters it runs under).
pub const OWN_STATUS: &str = "/proc/self/status";
/// How long the init may take to arm (it does so right after forking us:
/// microseconds, unless the machine is starved).
pub const ARM_BOUND: Duration = Duration::from_secs(10);
/// Pause between two looks at the init's status.
const POLL_STEP: Duration = Duration::from_micros(50);

#[derive(Debug, PartialEq, Eq)]
pub enum GateError {
    /// The init did not arm within [`ARM_BOUND`], or its status is unreadable.
    InitNotArmed(String),
    /// The outer bwrap is gone: its provider died before the init armed.
    ProviderGone,
    /// The liveness descriptor could not be polled.
    Poll(String),
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateError::InitNotArmed(why) => {
                write!(
                    f,
                    "the sandbox's init did not arm its parent-death signal: {why}"
                )
            }
            GateError::ProviderGone => write!(
                f,
                "the sandbox's supervisor is gone (its provider died during the set-up): \
                 the program was not started"
            ),
            GateError::Poll(why) => write!(f, "cannot poll the liveness descriptor: {why}"),
        }
    }
}

/// Where the init's arming is read from.
pub struct StatusFiles<'a> {
    pub init: &'a Path,
    pub own: &'a Path,
}

/// Both checks, then the liveness descriptor is closed (the program never holds it).
pub fn pass(alive: OwnedFd, status: &StatusFiles<'_>, bound: Duration) -> Result<(), GateError> {
    wait_armed(status, bound)?;
    if hung_up(&alive)? {
        return Err(GateError::ProviderGone);
    }
    drop(alive);
    Ok(())
}

/// What a status text says of its process's seccomp state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeccompState {
    /// The `Seccomp:` mode (0 none, 2 filter).
    pub mode: u32,
    /// The `Seccomp_filters:` count, when the kernel shows it.
    pub filters: Option<u32>,
}

/// Whether the init has loaded every filter this process runs under.
pub fn init_has_armed(init: SeccompState, own: SeccompState) -> bool {
    match (init.filters, own.filters) {
        (Some(theirs), Some(ours)) => theirs >= ours && ours > 0,
        _ => init.mode != 0,
    }
}

/// Waits until the init shows it has armed (see [`init_has_armed`]).
pub fn wait_armed(status: &StatusFiles<'_>, bound: Duration) -> Result<(), GateError> {
    let own = read_state(status.own)?;
    let until = Instant::now() + bound;
    loop {
        if init_has_armed(read_state(status.init)?, own) {
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(GateError::InitNotArmed(format!("not within {bound:?}")));
        }
        std::thread::sleep(POLL_STEP);
    }
}

fn read_state(path: &Path) -> Result<SeccompState, GateError> {
    let text = fs::read_to_string(path)
        .map_err(|e| GateError::InitNotArmed(format!("{}: {e}", path.display())))?;
    seccomp_state(&text)
        .ok_or_else(|| GateError::InitNotArmed(format!("{} has no Seccomp line", path.display())))
}

/// The `Seccomp:` and `Seccomp_filters:` fields of a `/proc/<pid>/status` text.
pub fn seccomp_state(status: &str) -> Option<SeccompState> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|value| value.trim().parse().ok())
    };
    Some(SeccompState {
        mode: field("Seccomp:")?,
        filters: field("Seccomp_filters:"),
    })
}

/// Whether the other end is closed (data alone is no hang-up: bwrap writes
/// its status lines there).
fn hung_up(alive: &OwnedFd) -> Result<bool, GateError> {
    let mut fds = [PollFd::new(alive.as_fd(), PollFlags::empty())];
    poll(&mut fds, PollTimeout::ZERO).map_err(|e| GateError::Poll(e.to_string()))?;
    let revents = fds[0].revents().unwrap_or(PollFlags::empty());
    Ok(revents.intersects(PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    fn pair() -> (OwnedFd, UnixStream) {
        let (ours, theirs) = UnixStream::pair().unwrap();
        (OwnedFd::from(ours), theirs)
    }

    fn status_file(mode: u32, filters: u32) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        write!(
            file,
            "Name:\tbwrap\nState:\tS (sleeping)\nSeccomp:\t{mode}\nSeccomp_filters:\t{filters}\n"
        )
        .unwrap();
        file
    }

    /// The gate against the init's status file and ours.
    fn run(
        init: &tempfile::NamedTempFile,
        own: &tempfile::NamedTempFile,
        alive: OwnedFd,
        bound: Duration,
    ) -> Result<(), GateError> {
        let files = StatusFiles {
            init: init.path(),
            own: own.path(),
        };
        pass(alive, &files, bound)
    }

    #[test]
    fn the_seccomp_fields_are_read_from_a_status_text() {
        let state = |mode, filters| Some(SeccompState { mode, filters });
        assert_eq!(
            seccomp_state("Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t3\n"),
            state(2, Some(3))
        );
        assert_eq!(seccomp_state("Seccomp:\t0\n"), state(0, None));
        assert_eq!(seccomp_state("Name:\tx\n"), None);
    }

    #[test]
    fn an_init_has_armed_once_it_holds_as_many_filters_as_we_do() {
        let s = |mode, filters| SeccompState { mode, filters };
        // The provider unconfined: the init goes 0 -> 1, we hold 1.
        assert!(!init_has_armed(s(0, Some(0)), s(2, Some(1))));
        assert!(init_has_armed(s(2, Some(1)), s(2, Some(1))));
        // The provider under a filter of its own: the init is born in mode 2
        // with 1 filter (the provider's), and has armed only at 2 (F1).
        assert!(!init_has_armed(s(2, Some(1)), s(2, Some(2))));
        assert!(init_has_armed(s(2, Some(2)), s(2, Some(2))));
        // No count shown by the kernel: the mode.
        assert!(!init_has_armed(s(0, None), s(2, None)));
        assert!(init_has_armed(s(2, None), s(2, None)));
        // We run under no filter: nothing to wait for proves the arming.
        assert!(!init_has_armed(s(0, Some(0)), s(0, Some(0))));
    }

    #[test]
    fn a_live_peer_and_an_armed_init_pass() {
        let (r, _w) = pair();
        let (init, own) = (status_file(2, 1), status_file(2, 1));
        assert_eq!(run(&init, &own, r, Duration::from_millis(100)), Ok(()));
    }

    #[test]
    fn pending_data_with_a_live_peer_is_no_hang_up() {
        let (r, mut w) = pair();
        w.write_all(b"{ \"child-pid\": 2 }\n").unwrap();
        let (init, own) = (status_file(2, 1), status_file(2, 1));
        assert_eq!(run(&init, &own, r, Duration::from_millis(100)), Ok(()));
    }

    #[test]
    fn a_closed_peer_refuses_the_program() {
        let (r, w) = pair();
        drop(w);
        let (init, own) = (status_file(2, 1), status_file(2, 1));
        assert_eq!(
            run(&init, &own, r, Duration::from_millis(100)),
            Err(GateError::ProviderGone)
        );
    }

    #[test]
    fn an_init_that_never_arms_refuses_the_program_after_the_bound() {
        let (r, _w) = pair();
        // Born under the provider's own filter: mode 2, one filter short of ours.
        let (init, own) = (status_file(2, 1), status_file(2, 2));
        let started = Instant::now();
        let got = run(&init, &own, r, Duration::from_millis(30));
        assert!(matches!(got, Err(GateError::InitNotArmed(_))), "{got:?}");
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn the_gate_waits_for_the_init_to_arm() {
        let (r, _w) = pair();
        let (init, own) = (status_file(0, 0), status_file(2, 1));
        let path = init.path().to_owned();
        let arm = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            // Renamed into place: a read of /proc/1/status is one snapshot,
            // so the gate never sees a half-written file (fs::write would
            // truncate first).
            let next = path.with_extension("next");
            fs::write(&next, "Name:\tbwrap\nSeccomp:\t2\nSeccomp_filters:\t1\n").unwrap();
            fs::rename(&next, &path).unwrap();
        });
        assert_eq!(run(&init, &own, r, Duration::from_secs(5)), Ok(()));
        arm.join().unwrap();
    }
}
