//! The stderr tap: forwards every event to the owner and keeps the head of
//! stderr, which explains a sandbox set-up that failed (bwrap's own
//! diagnostics arrive there).

use std::sync::{Arc, Mutex};

use crate::events::{Event, EventSink, Stream};

/// Leading stderr bytes kept to explain a failed sandbox set-up.
const DIAGNOSTIC_HEAD_BYTES: usize = 2048;

/// Forwards events and keeps the head of stderr for diagnostics.
pub struct Tap {
    sink: Arc<dyn EventSink>,
    head: Mutex<Vec<u8>>,
}

impl Tap {
    pub fn new(sink: Arc<dyn EventSink>) -> Tap {
        Tap {
            sink,
            head: Mutex::new(Vec::new()),
        }
    }

    /// The first [`DIAGNOSTIC_HEAD_BYTES`] of stderr, as text, trimmed.
    pub fn head(&self) -> String {
        self.head
            .lock()
            .map(|h| String::from_utf8_lossy(&h).trim().to_string())
            .unwrap_or_default()
    }
}

impl EventSink for Tap {
    fn emit(&self, event: Event) {
        if let Event::Data {
            stream: Stream::Stderr,
            bytes,
        } = &event
        {
            if let Ok(mut head) = self.head.lock() {
                let room = DIAGNOSTIC_HEAD_BYTES.saturating_sub(head.len());
                head.extend_from_slice(&bytes[..room.min(bytes.len())]);
            }
        }
        self.sink.emit(event);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl EventSink for Count {
        fn emit(&self, _event: Event) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn the_tap_forwards_everything_and_keeps_only_the_head_of_stderr() {
        let count = Arc::new(Count::default());
        let tap = Tap::new(count.clone());
        let data = |stream, bytes: &[u8]| Event::Data {
            stream,
            bytes: bytes.to_vec(),
        };
        tap.emit(data(Stream::Protocol, b"not stderr"));
        tap.emit(data(Stream::Stderr, b"  bwrap: no  "));
        tap.emit(data(Stream::Stderr, &[b'x'; DIAGNOSTIC_HEAD_BYTES]));
        tap.emit(Event::ShutdownDone);
        assert_eq!(count.0.load(Ordering::Relaxed), 4);
        let head = tap.head();
        assert!(head.starts_with("bwrap: no  xx"), "{head}");
        assert_eq!(head.len(), DIAGNOSTIC_HEAD_BYTES - 2, "trimmed, bounded");
    }
}
