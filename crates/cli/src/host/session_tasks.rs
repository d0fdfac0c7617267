//! The task of every accepted connection (`session::serve`), held so the
//! host's stop ends them before the log closes: a session writes its line
//! (or is counted in a `*-suppressed` line) when its record drops, and a
//! task the runtime dropped after the log closed lost that line. A client
//! that was refused and closed just before the host's SIGTERM had its
//! session still lingering (session.rs, `EXIT_LINGER`), so its line was
//! neither written nor counted (remote-log-bound.test.js, flaky under load).

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::JoinSet;

/// The connections' tasks still open.
#[derive(Default)]
pub struct SessionTasks {
    set: Mutex<JoinSet<()>>,
}

impl SessionTasks {
    /// Serves one connection on its task. Tasks that ended are reaped here
    /// (at each accept), so the set holds the open ones and the few that
    /// ended since the last accept.
    pub fn spawn<F>(&self, session: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match self.set.lock() {
            Ok(mut set) => {
                while set.try_join_next().is_some() {}
                set.spawn(session);
            }
            // A poisoned lock (a panic while held, never expected): still
            // served, only not ended at the stop.
            Err(_) => drop(tokio::spawn(session)),
        }
    }

    /// The host stops (its listener closed, its sandboxes stopped): the
    /// sessions still open get `grace` to end on their own (an `exit` being
    /// written, a client closing after it), then the rest, which run
    /// nothing more, are ended, and so are the sessions a TLS handshake
    /// still in progress started meanwhile. When this returns, each one's
    /// record has dropped and its line is queued or counted, before the
    /// log's summary and close.
    pub async fn end(&self, grace: Duration) {
        let mut grace = Some(grace);
        loop {
            let mut open = match self.set.lock() {
                Ok(mut set) => std::mem::take(&mut *set),
                Err(_) => return,
            };
            if open.is_empty() {
                return;
            }
            if let Some(grace) = grace.take() {
                let ended = async { while open.join_next().await.is_some() {} };
                if tokio::time::timeout(grace, ended).await.is_ok() {
                    continue;
                }
            }
            open.abort_all();
            // An aborted task resolves once its future is dropped.
            while open.join_next().await.is_some() {}
        }
    }
}
