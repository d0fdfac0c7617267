//! SIGTERM and SIGINT (stop the host) and SIGHUP (reopen the log file),
//! taken by the `cordon-signals` thread of `crate::signals` — blocked in
//! every thread from before the runtime starts, received with `sigwait` —
//! instead of tokio's signal driver. Why: tokio's `signal` feature gives
//! every runtime with IO a signal driver, so the CLI's tokio could not have
//! the addon's feature set (scripts/napi-cargo.sh). Signals that arrive
//! before anything waits for them are counted, not lost and not fatal: the
//! default action is gone from `take` on.

use std::sync::OnceLock;

use nix::sys::signal::Signal;
use tokio::sync::watch;

use crate::signals::SignalSetupError;

struct Counts {
    stops: watch::Sender<u64>,
    hangups: watch::Sender<u64>,
}

static COUNTS: OnceLock<Counts> = OnceLock::new();

/// Blocks the three signals in the calling thread and starts the thread
/// that counts them. Call before any other thread exists (threads inherit
/// the mask; the launcher empties it in a sandbox's child before bwrap).
pub fn take() -> Result<(), SignalSetupError> {
    let counts = COUNTS.get_or_init(|| Counts {
        stops: watch::Sender::new(0),
        hangups: watch::Sender::new(0),
    });
    crate::signals::forward_stop_signals(move |signal| {
        let count = if signal == Signal::SIGHUP {
            &counts.hangups
        } else {
            &counts.stops
        };
        count.send_modify(|n| *n += 1);
        true
    })
}

/// Resolves once a SIGTERM or SIGINT has arrived, at any time since
/// [`take`]; never without it.
pub async fn stopped() {
    match COUNTS.get() {
        Some(counts) => {
            let _ = counts.stops.subscribe().wait_for(|n| *n > 0).await;
        }
        None => std::future::pending().await,
    }
}

/// Changes at each SIGHUP from now on; `None` without [`take`].
pub fn hangups() -> Option<watch::Receiver<u64>> {
    COUNTS.get().map(|counts| counts.hangups.subscribe())
}
