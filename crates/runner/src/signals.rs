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

use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};

static EXECUTING: AtomicBool = AtomicBool::new(false);
static CANCEL_REQUESTED: AtomicBool = AtomicBool::new(false);

/// The signals that cancel an execution.
const CANCEL_SIGNALS: [Signal; 2] = [Signal::SIGINT, Signal::SIGTERM];

extern "C" fn on_termination(raw: libc::c_int) {
    if EXECUTING.load(Ordering::SeqCst) {
        CANCEL_REQUESTED.store(true, Ordering::SeqCst);
        return;
    }
    // Unblocking the signal first makes raise() deliver it now, with its
    // default action; if that does nothing (a PID-namespace init ignores
    // default-action signals), _exit still ends the process with the
    // conventional 128+signal status.
    let received = Signal::try_from(raw).ok();
    // SAFETY: restoring SIG_DFL installs no Rust handler; signal(2),
    // sigemptyset/sigaddset (SigSet), sigprocmask, raise and _exit are all
    // async-signal-safe, and _exit ends the process without running anything
    // else (no atexit handlers, no destructors).
    unsafe {
        if let Some(received) = received {
            let _ = signal::signal(received, SigHandler::SigDfl);
            let only = SigSet::from(received);
            let _ = signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&only), None);
            let _ = signal::raise(received);
        }
        libc::_exit(128 + raw)
    }
}

/// Installs the handler for SIGINT and SIGTERM and unblocks both (a mask
/// inherited from the parent must not keep a cancel from arriving).
pub fn install() -> io::Result<()> {
    // SA_RESTART keeps blocking calls going.
    let action = SigAction::new(
        SigHandler::Handler(on_termination),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for received in CANCEL_SIGNALS {
        SigSet::from(received).thread_unblock()?;
        // SAFETY: the handler only touches atomics and async-signal-safe
        // calls (see on_termination), so it may interrupt any code.
        unsafe { signal::sigaction(received, &action) }?;
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
