//! SIGINT and SIGTERM (§8): they set the cancel flag.
//!
//! Order: block both signals in the main thread before any other thread
//! starts (every thread inherits the mask), then one thread takes them with
//! `sigwait`, so nothing runs in signal-handler context. Before an execute
//! frame was read there is nothing to cancel: the signal's default action
//! then ends the process.

use std::io;
use std::mem::MaybeUninit;
use std::sync::Arc;

use crate::latches::{Latches, Phase};
use crate::mailbox::Mailbox;

/// Stack of the signal thread: it only flips flags.
const SIGNAL_STACK_BYTES: usize = 64 * 1024;

fn termination_set() -> io::Result<libc::sigset_t> {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset only
    // reads and writes that initialised set.
    unsafe {
        if libc::sigemptyset(set.as_mut_ptr()) != 0
            || libc::sigaddset(set.as_mut_ptr(), libc::SIGINT) != 0
            || libc::sigaddset(set.as_mut_ptr(), libc::SIGTERM) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(set.assume_init())
    }
}

fn change_mask(how: libc::c_int, set: &libc::sigset_t) -> io::Result<()> {
    // SAFETY: `set` is an initialised signal set; the old mask is not wanted.
    let result = unsafe { libc::pthread_sigmask(how, set, std::ptr::null_mut()) };
    match result {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Blocks SIGINT/SIGTERM in this thread and starts the thread that takes them.
/// Must run before any other thread is spawned.
pub fn watch(latches: Arc<Latches>, mailbox: Arc<Mailbox>) -> io::Result<()> {
    let set = termination_set()?;
    change_mask(libc::SIG_BLOCK, &set)?;
    std::thread::Builder::new()
        .name("signals".into())
        .stack_size(SIGNAL_STACK_BYTES)
        .spawn(move || loop {
            let mut signal: libc::c_int = 0;
            // SAFETY: `set` is initialised and `signal` is a valid out pointer.
            if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
                continue;
            }
            if latches.phase() == Phase::AwaitingExecute {
                die_by(signal, &set);
            }
            latches.cancel();
            mailbox.notify();
        })?;
    Ok(())
}

/// Ends the process as the signal's default action would.
fn die_by(signal: libc::c_int, set: &libc::sigset_t) -> ! {
    // SAFETY: restoring the default disposition and re-raising the signal in
    // this thread (after unblocking it here) is the documented way to die by
    // a signal; no Rust state is touched.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let _ = change_mask(libc::SIG_UNBLOCK, set);
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}
