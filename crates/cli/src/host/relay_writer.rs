//! The relay's writes to the client, on their own task: a client slow to
//! take one stream (its socket full) no longer stops the relay's loop, so
//! the session's other work — the client's `stop`, its fd 3 bytes toward
//! the sandbox, credit, pings — goes on meanwhile (docs/remote.md § Flow
//! control).
//!
//! Memory stays constant: the relay queues data frames only while fewer
//! than [`DATA_QUEUE_BYTES`] are waiting here, and a client that makes the
//! host queue more than [`MAX_QUEUED_BYTES`] of anything (pongs to a ping
//! flood it does not read) is a disconnect. Each write must complete within
//! the pong bound, else the task stops and reports the client gone.

use std::time::Duration;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;
use tokio::time::timeout;

use super::frame::{self, Kind};

/// Data frames are queued only while less than this waits (two chunks).
pub const DATA_QUEUE_BYTES: usize = 2 * frame::MAX_DATA_BYTES;
/// Past this much waiting (data plus control frames), the client is gone.
pub const MAX_QUEUED_BYTES: usize = 4 * frame::MAX_DATA_BYTES;

/// What the writer task reports.
pub enum Note {
    /// A frame of this many bytes is written.
    Written(usize),
    /// A write failed or did not complete within the bound: the task ended.
    Failed,
}

pub struct Outgoing<W> {
    tx: Option<UnboundedSender<Vec<u8>>>,
    notes: UnboundedReceiver<Note>,
    queued: usize,
    task: JoinHandle<Option<W>>,
}

impl<W: AsyncWrite + Unpin + Send + 'static> Outgoing<W> {
    /// Starts the task; each write is bounded by `bound`.
    pub fn spawn(mut writer: W, bound: Duration) -> Outgoing<W> {
        let (tx, mut rx) = unbounded_channel::<Vec<u8>>();
        let (note_tx, notes) = unbounded_channel();
        let task = tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                let written = timeout(bound, async {
                    writer.write_all(&bytes).await?;
                    writer.flush().await
                })
                .await;
                if !matches!(written, Ok(Ok(()))) {
                    let _ = note_tx.send(Note::Failed);
                    return None;
                }
                let _ = note_tx.send(Note::Written(bytes.len()));
            }
            Some(writer)
        });
        Outgoing {
            tx: Some(tx),
            notes,
            queued: 0,
            task,
        }
    }

    /// Queues one frame; `false` when the queue is past its bound or the
    /// task has ended (the caller then treats the client as gone).
    pub fn push(&mut self, kind: Kind, payload: &[u8]) -> bool {
        let bytes = frame::encode(kind, payload);
        self.queued += bytes.len();
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(bytes).is_ok());
        sent && self.queued <= MAX_QUEUED_BYTES
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// The next report (pending forever once the task's sender is gone).
    pub async fn note(&mut self) -> Note {
        match self.notes.recv().await {
            Some(Note::Written(n)) => {
                self.queued = self.queued.saturating_sub(n);
                Note::Written(n)
            }
            Some(Note::Failed) => Note::Failed,
            None => std::future::pending().await,
        }
    }

    /// Everything queued written (within `bound` in all), then the writer
    /// back; `None` if that failed or took longer.
    pub async fn finish(mut self, bound: Duration) -> Option<W> {
        self.tx = None;
        let abort = self.task.abort_handle();
        match timeout(bound, self.task).await {
            Ok(Ok(writer)) => writer,
            _ => {
                abort.abort();
                None
            }
        }
    }

    /// Drops what is queued and the connection's write half.
    pub fn abort(self) {
        self.task.abort();
    }
}
