//! Executions still running in one JavaScript environment. When that
//! environment is torn down while the process lives on (a worker thread
//! terminated), bwrap's parent-death signal never fires: the environment's
//! instance-data finalizer stops every execution it still owns instead.

use std::sync::{Arc, Mutex, Weak};

use cordon_launcher::run::execution::Control;
use cordon_launcher::StopReason;
use napi::Env;

#[derive(Default)]
struct LiveExecutions(Mutex<Vec<Weak<Control>>>);

impl LiveExecutions {
    /// Adds `control`, forgetting executions nobody references any more.
    fn add(&self, control: &Arc<Control>) {
        if let Ok(mut live) = self.0.lock() {
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(control));
        }
    }

    /// Straight to the forced rung: the environment is going away now.
    fn stop_all(&self) {
        let Ok(live) = self.0.lock() else { return };
        for control in live.iter().filter_map(Weak::upgrade) {
            control.stop_now(StopReason::Requested);
        }
    }
}

/// Registers `control` with `env`'s registry, creating it on first use.
pub fn register(env: &Env, control: &Arc<Control>) -> napi::Result<()> {
    if env.get_instance_data::<LiveExecutions>()?.is_none() {
        env.set_instance_data(LiveExecutions::default(), (), |ctx| ctx.value.stop_all())?;
    }
    if let Some(live) = env.get_instance_data::<LiveExecutions>()? {
        live.add(control);
    }
    Ok(())
}
