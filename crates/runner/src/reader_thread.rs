//! The reader thread (§8): reads host frames for the whole execution.
//!
//! `cancel` frames are never queued: they set the cancel flag and wake the
//! tool wait; the interrupt handler stops busy code. Any read error (EOF,
//! NUL, oversize, bad JSON, duplicate keys, non-object) or a ninth queued
//! frame sets the protocol latch and ends the thread.

use std::io::{self, Read};
use std::sync::Arc;
use std::thread::JoinHandle;

use serde_json::{Map, Value};

use crate::frame_reader::FrameReader;
use crate::latches::Latches;
use crate::mailbox::Mailbox;

/// Stack of the reader thread: JSON decoding is depth-limited by serde_json
/// (128 levels), with room for unoptimised builds; untouched pages cost nothing.
const READER_STACK_BYTES: usize = 1024 * 1024;

pub fn spawn<R: Read + Send + 'static>(
    mut reader: FrameReader<R>,
    mailbox: Arc<Mailbox>,
    latches: Arc<Latches>,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("bridge-reader".into())
        .stack_size(READER_STACK_BYTES)
        .spawn(move || loop {
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
        })
}

/// A cancel frame: `type` is `"cancel"`; its `executionId` is not checked.
fn is_cancel(frame: &Map<String, Value>) -> bool {
    frame.get("type").and_then(Value::as_str) == Some("cancel")
}
