//! Executions still running in one JavaScript environment. When that
//! environment is torn down while the process lives on (a worker thread
//! terminated), bwrap's parent-death signal never fires: the environment's
//! instance-data finalizer stops every execution it still owns instead, and
//! settles their fd 3 readers, whose loop is going away (loop_reader.rs).

use std::sync::{Arc, Mutex, Weak};

use cordon_launcher::run::execution::Control;
use cordon_launcher::StopReason;
use napi::Env;

use crate::loop_reader::{LoopReader, Shared};

type Live = (Weak<Control>, Weak<Shared>);

#[derive(Default)]
struct LiveExecutions(Mutex<Vec<Live>>);

impl LiveExecutions {
    /// Adds one execution, forgetting those nobody references any more.
    fn add(&self, control: &Arc<Control>, reader: &LoopReader) {
        if let Ok(mut live) = self.0.lock() {
            live.retain(|(c, r)| c.strong_count() > 0 || r.strong_count() > 0);
            live.push((Arc::downgrade(control), reader.downgrade()));
        }
    }

    /// Straight to the forced rung: the environment is going away now.
    fn stop_all(&self) {
        let Ok(live) = self.0.lock() else { return };
        for (control, reader) in live.iter() {
            if let Some(control) = control.upgrade() {
                control.stop_now(StopReason::Requested);
            }
            if let Some(reader) = reader.upgrade() {
                LoopReader::from_shared(reader).settle_at_teardown();
            }
        }
    }
}

/// Registers one execution with `env`'s registry, creating it on first use.
pub fn register(env: &Env, control: &Arc<Control>, reader: &LoopReader) -> napi::Result<()> {
    if env.get_instance_data::<LiveExecutions>()?.is_none() {
        env.set_instance_data(LiveExecutions::default(), (), |ctx| ctx.value.stop_all())?;
    }
    if let Some(live) = env.get_instance_data::<LiveExecutions>()? {
        live.add(control, reader);
    }
    Ok(())
}
