//! SIGTERM, SIGINT and SIGHUP (a closed terminal, or the npm shim passing
//! one on) to `cordon run` become a stop of the sandbox, never an abrupt
//! death of the relay. Order matters: the signals are blocked on
//! the main thread *before* any other thread exists (threads inherit the
//! mask), and one thread takes them with `sigwait`. The sandbox does not
//! inherit the mask: std's process spawn resets it in the child.

use std::mem::MaybeUninit;

/// The signals that stop the sandbox.
const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

#[derive(Debug)]
pub struct SignalSetupError(pub std::io::Error);

impl std::fmt::Display for SignalSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block SIGTERM/SIGINT/SIGHUP: {}", self.0)
    }
}

fn stop_set() -> Result<libc::sigset_t, SignalSetupError> {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset only
    // writes into that initialised set; both are given valid pointers.
    unsafe {
        if libc::sigemptyset(set.as_mut_ptr()) != 0 {
            return Err(SignalSetupError(std::io::Error::last_os_error()));
        }
        for signal in STOP_SIGNALS {
            if libc::sigaddset(set.as_mut_ptr(), signal) != 0 {
                return Err(SignalSetupError(std::io::Error::last_os_error()));
            }
        }
        Ok(set.assume_init())
    }
}

/// Blocks the stop signals in the calling thread (call first in `main`) and
/// starts the thread that hands each one to `received` (until it returns false).
pub fn forward_stop_signals(
    mut received: impl FnMut(libc::c_int) -> bool + Send + 'static,
) -> Result<(), SignalSetupError> {
    let set = stop_set()?;
    // SAFETY: `set` is an initialised sigset_t; the old mask is not wanted.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(SignalSetupError(std::io::Error::from_raw_os_error(rc)));
    }
    std::thread::Builder::new()
        .name("cordon-signals".into())
        .spawn(move || loop {
            let mut signal: libc::c_int = 0;
            // SAFETY: `set` is initialised and `signal` is a valid out pointer.
            let rc = unsafe { libc::sigwait(&set, &mut signal) };
            if rc == 0 && !received(signal) {
                return;
            }
        })
        .map_err(SignalSetupError)?;
    Ok(())
}
