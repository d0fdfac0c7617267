//! The launcher is synchronous (its threads emit events; `start` does file
//! and process work): this bridges it to the session's async task. Events
//! go to an unbounded channel whose depth the launcher's own flow control
//! bounds (one `Data` per stream until granted, `WRITE_QUEUE_DEPTH` write
//! completions); `start` runs on the blocking pool.

use std::sync::Arc;

use cordon_launcher::events::{Event, EventSink};
use cordon_launcher::{start, ExecutionHandle, LaunchError, LaunchRequest};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

struct ChannelSink(UnboundedSender<Event>);

impl EventSink for ChannelSink {
    fn emit(&self, event: Event) {
        // A session that went away no longer needs the events.
        let _ = self.0.send(event);
    }
}

pub struct Launched {
    pub handle: Arc<ExecutionHandle>,
    pub events: UnboundedReceiver<Event>,
}

#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("the launch task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

pub async fn launch(request: LaunchRequest) -> Result<Launched, BridgeError> {
    let (tx, events) = unbounded_channel();
    let sink: Arc<dyn EventSink> = Arc::new(ChannelSink(tx));
    let handle = tokio::task::spawn_blocking(move || start(request, sink)).await??;
    Ok(Launched {
        handle: Arc::new(handle),
        events,
    })
}
