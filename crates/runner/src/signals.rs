//! SIGINT and SIGTERM (§8): they set the cancel flag.
//!
//! The handler only stores into atomics (async-signal-safe). Before an
//! execute frame was read there is nothing to cancel: the handler restores
//! the default action and re-raises, so the process dies by the signal as
//! any program would. Afterwards it sets [`cancel_requested`]; the QuickJS
//! interrupt handler sees it at its next check and a pending tool wait
//! within one [`crate::mailbox::SIGNAL_POLL`] tick. (A handler instead of a
//! `sigwait` thread: one thread fewer to start on every run.)

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

static EXECUTING: AtomicBool = AtomicBool::new(false);
static CANCEL_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_termination(signal: libc::c_int) {
    if EXECUTING.load(Ordering::SeqCst) {
        CANCEL_REQUESTED.store(true, Ordering::SeqCst);
        return;
    }
    // SAFETY: signal(), sigemptyset(), sigaddset(), sigprocmask(), raise()
    // and _exit() are async-signal-safe. Unblocking the signal first makes
    // raise() deliver it now, with its default action; if that does nothing
    // (a PID-namespace init ignores default-action signals), _exit still ends
    // the process with the conventional 128+signal status.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let mut only = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut only);
        libc::sigaddset(&mut only, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
        libc::raise(signal);
        libc::_exit(128 + signal);
    }
}

/// Installs the handler for SIGINT and SIGTERM and unblocks both (a mask
/// inherited from the parent must not keep a cancel from arriving).
pub fn install() -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
        // the handler is an `extern "C" fn(c_int)` that only touches atomics
        // and async-signal-safe calls; SA_RESTART keeps blocking calls going.
        // The signal set is initialised by sigemptyset before use.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_termination as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut only = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut only);
            libc::sigaddset(&mut only, signal);
            let unblocked = libc::pthread_sigmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
            if unblocked == 0 {
                libc::sigaction(signal, &action, std::ptr::null_mut())
            } else {
                -1
            }
        };
        if installed != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// From now on a termination signal cancels the execution.
pub fn enter_execution() {
    EXECUTING.store(true, Ordering::SeqCst);
}

/// Whether SIGINT or SIGTERM arrived during the execution.
pub fn cancel_requested() -> bool {
    CANCEL_REQUESTED.load(Ordering::SeqCst)
}
