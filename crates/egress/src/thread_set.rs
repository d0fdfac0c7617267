//! The threads a run's engine started, so teardown can join every one of
//! them (none outlives the run). Finished handles are reaped as new ones are
//! added, so the set stays as small as the run's open streams.

use std::sync::Mutex;
use std::thread::JoinHandle;

#[derive(Debug, Default)]
pub struct ThreadSet {
    handles: Mutex<Vec<JoinHandle<()>>>,
}

impl ThreadSet {
    /// Spawns `work`; if the OS refuses a thread, `work` is dropped (its
    /// sockets close) and false is returned.
    pub fn spawn(&self, work: impl FnOnce() + Send + 'static) -> bool {
        let Ok(handle) = std::thread::Builder::new()
            .name("cordon-egress".into())
            .spawn(work)
        else {
            return false;
        };
        if let Ok(mut handles) = self.handles.lock() {
            let (done, running): (Vec<_>, Vec<_>) =
                handles.drain(..).partition(|h| h.is_finished());
            for h in done {
                let _ = h.join();
            }
            *handles = running;
            handles.push(handle);
        }
        true
    }

    /// Joins every thread (callers cancel first so they are all ending).
    pub fn join_all(&self) {
        let handles = self
            .handles
            .lock()
            .map(|mut h| std::mem::take(&mut *h))
            .unwrap_or_default();
        for h in handles {
            let _ = h.join();
        }
    }
}
