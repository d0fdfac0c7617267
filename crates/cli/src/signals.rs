//! SIGTERM, SIGINT and SIGHUP (a closed terminal, or the npm shim passing
//! one on) to `cordon run` become a stop of the sandbox, never an abrupt
//! death of the relay. Order matters: the signals are blocked on
//! the main thread *before* any other thread exists (threads inherit the
//! mask), and one thread takes them with `sigwait`. The sandbox does not
//! inherit the mask: the launcher empties it in the forked child before it
//! execs bwrap (`spawn.rs`), or the stop ladder's SIGTERM would never arrive.

use nix::sys::signal::{SigSet, Signal};

/// The signals that stop the sandbox.
const STOP_SIGNALS: [Signal; 3] = [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP];

#[derive(Debug)]
pub struct SignalSetupError(pub std::io::Error);

impl std::fmt::Display for SignalSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block SIGTERM/SIGINT/SIGHUP: {}", self.0)
    }
}

/// Blocks the stop signals in the calling thread (call first in `main`) and
/// starts the thread that hands each one to `received` (until it returns false).
pub fn forward_stop_signals(
    mut received: impl FnMut(Signal) -> bool + Send + 'static,
) -> Result<(), SignalSetupError> {
    let set: SigSet = STOP_SIGNALS.into_iter().collect();
    set.thread_block()
        .map_err(|errno| SignalSetupError(errno.into()))?;
    std::thread::Builder::new()
        .name("cordon-signals".into())
        .spawn(move || loop {
            if let Ok(signal) = set.wait() {
                if !received(signal) {
                    return;
                }
            }
        })
        .map_err(SignalSetupError)?;
    Ok(())
}
