//! The reader thread (§8): reads host frames for the whole execution.
//!
//! It is started before the execute frame is read (a thread start is
//! ~0.1 ms, off a pooled run's critical path that way) and parks until
//! [`ParkedReader::start`] hands it the frame reader, positioned just after
//! the execute frame: it reads nothing before that.
//!
//! `cancel` frames are never queued: they set the cancel flag and wake the
//! tool wait; the interrupt handler stops busy code. Any read error (EOF,
//! NUL, oversize, bad JSON, duplicate keys, non-object) or a ninth queued
//! frame sets the protocol latch and ends the thread.

use std::io::{self, Read};
use std::sync::mpsc::{self, SyncSender};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::frame_reader::FrameReader;
use crate::latches::Latches;
use crate::mailbox::Mailbox;

/// Stack of the reader thread: JSON decoding is depth-limited by serde_json
/// (128 levels), with room for unoptimised builds; untouched pages cost nothing.
const READER_STACK_BYTES: usize = 1024 * 1024;

/// A started reader thread that has not read anything yet.
pub struct ParkedReader<R> {
    hand_over: SyncSender<FrameReader<R>>,
}

/// The parked thread is gone (only a panic could end it): nothing is read.
#[derive(Debug)]
pub struct ReaderGone;

impl<R> ParkedReader<R> {
    /// Hands the frame reader to the thread, which reads from then on.
    pub fn start(self, reader: FrameReader<R>) -> Result<(), ReaderGone> {
        self.hand_over.send(reader).map_err(|_| ReaderGone)
    }
}

/// Starts the reader thread, parked until [`ParkedReader::start`]. Dropping
/// the [`ParkedReader`] instead ends the thread without reading.
pub fn spawn_parked<R: Read + Send + 'static>(
    mailbox: Arc<Mailbox>,
    latches: Arc<Latches>,
) -> io::Result<ParkedReader<R>> {
    let (hand_over, handed) = mpsc::sync_channel::<FrameReader<R>>(1);
    std::thread::Builder::new()
        .name("bridge-reader".into())
        .stack_size(READER_STACK_BYTES)
        .spawn(move || {
            if let Ok(reader) = handed.recv() {
                read_frames(reader, &mailbox, &latches);
            }
        })?;
    Ok(ParkedReader { hand_over })
}

fn read_frames<R: Read>(mut reader: FrameReader<R>, mailbox: &Mailbox, latches: &Latches) {
    loop {
        let queued = match reader.read_frame() {
            Ok(frame) if is_cancel(&frame) => {
                latches.cancel();
                Ok(())
            }
            Ok(frame) => mailbox.push(frame).map_err(|_| ()),
            Err(_) => Err(()),
        };
        if queued.is_err() {
            latches.fail_protocol();
            mailbox.notify();
            return;
        }
        mailbox.notify();
    }
}

/// A cancel frame: `type` is `"cancel"`; its `executionId` is not checked.
fn is_cancel(frame: &Map<String, Value>) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("cancel")
}
