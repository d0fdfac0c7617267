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
//!    the seccomp filter right after `PR_SET_PDEATHSIG`, so the init's
//!    `Seccomp:` line in `/proc/1/status` turning non-zero is observed
//!    after the arming (every cordon plan has a filter);
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

/// Both checks, then the liveness descriptor is closed (the program never holds it).
pub fn pass(alive: OwnedFd, init_status: &Path, bound: Duration) -> Result<(), GateError> {
    wait_armed(init_status, bound)?;
    if hung_up(&alive)? {
        return Err(GateError::ProviderGone);
    }
    drop(alive);
    Ok(())
}

/// Waits until the init's status shows a seccomp mode other than 0.
pub fn wait_armed(init_status: &Path, bound: Duration) -> Result<(), GateError> {
    let until = Instant::now() + bound;
    loop {
        let status = fs::read_to_string(init_status)
            .map_err(|e| GateError::InitNotArmed(format!("{}: {e}", init_status.display())))?;
        match seccomp_mode(&status) {
            Some(0) => {}
            Some(_) => return Ok(()),
            None => {
                let why = format!("{} has no Seccomp line", init_status.display());
                return Err(GateError::InitNotArmed(why));
            }
        }
        if Instant::now() >= until {
            return Err(GateError::InitNotArmed(format!("not within {bound:?}")));
        }
        std::thread::sleep(POLL_STEP);
    }
}

/// The `Seccomp:` field of a `/proc/<pid>/status` text.
pub fn seccomp_mode(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("Seccomp:"))
        .and_then(|value| value.trim().parse().ok())
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

    fn status_file(mode: u32) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        write!(
            file,
            "Name:\tbwrap\nState:\tS (sleeping)\nSeccomp:\t{mode}\nSeccomp_filters:\t1\n"
        )
        .unwrap();
        file
    }

    #[test]
    fn the_seccomp_field_is_read_from_a_status_text() {
        assert_eq!(seccomp_mode("Name:\tx\nSeccomp:\t2\n"), Some(2));
        assert_eq!(seccomp_mode("Seccomp:\t0\n"), Some(0));
        assert_eq!(seccomp_mode("Name:\tx\n"), None);
    }

    #[test]
    fn a_live_writer_and_an_armed_init_pass() {
        let (r, _w) = pair();
        let status = status_file(2);
        assert_eq!(pass(r, status.path(), Duration::from_millis(100)), Ok(()));
    }

    #[test]
    fn pending_data_with_a_live_writer_is_no_hang_up() {
        let (r, mut w) = pair();
        w.write_all(b"{ \"child-pid\": 2 }\n").unwrap();
        let status = status_file(2);
        assert_eq!(pass(r, status.path(), Duration::from_millis(100)), Ok(()));
    }

    #[test]
    fn a_closed_writer_refuses_the_program() {
        let (r, w) = pair();
        drop(w);
        let status = status_file(2);
        assert_eq!(
            pass(r, status.path(), Duration::from_millis(100)),
            Err(GateError::ProviderGone)
        );
    }

    #[test]
    fn an_init_that_never_arms_refuses_the_program_after_the_bound() {
        let (r, _w) = pair();
        let status = status_file(0);
        let started = Instant::now();
        let got = pass(r, status.path(), Duration::from_millis(30));
        assert!(matches!(got, Err(GateError::InitNotArmed(_))), "{got:?}");
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn the_gate_waits_for_the_init_to_arm() {
        let (r, _w) = pair();
        let status = status_file(0);
        let path = status.path().to_owned();
        let arm = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            fs::write(&path, "Name:\tbwrap\nSeccomp:\t2\n").unwrap();
        });
        assert_eq!(pass(r, status.path(), Duration::from_secs(5)), Ok(()));
        arm.join().unwrap();
    }
}
