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
    // SAFETY: signal() and raise() are async-signal-safe; the re-raised
    // signal is delivered with its default action once this handler returns.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() -> io::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value;
        // the handler is an `extern "C" fn(c_int)` that only touches atomics
        // and async-signal-safe calls; SA_RESTART keeps blocking calls going.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction =
                on_termination as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
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
