//! The host's log lines are written on one thread of their own, fed by a
//! bounded queue (docs/remote.md § Logging): a `logFile` on a slow or stuck
//! disk, or a stderr pipe nobody reads, stalls that thread only — never a
//! runtime worker, so no handshake, relay or accept waits for the log.
//!
//! Why one dedicated thread and not `spawn_blocking` per line: a stuck disk
//! would park one blocking-pool thread per line, up to the pool's limit,
//! and that pool also runs the launches, uploads and receipt writes; one
//! thread keeps the lines in order and at most one thread blocked. The
//! queue holds [`QUEUE_LINES`] lines; past that a line is dropped and
//! counted, and the writer says how many (`"event": "log-dropped"`) before
//! its next line: memory stays bounded whatever the disk does.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

/// Lines waiting for the writer before new ones are dropped.
pub const QUEUE_LINES: usize = 4096;

/// Where the writer thread writes; swapped at SIGHUP (session_log.rs).
pub type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

pub struct LogWriter {
    /// `None` once closed: later lines are dropped.
    queue: Mutex<Option<SyncSender<String>>>,
    dropped: Arc<AtomicU64>,
    /// Closes (the sender dropped) when the writer thread has ended.
    ended: Mutex<Option<Receiver<()>>>,
}

impl LogWriter {
    /// Starts the writer thread over `sink`.
    pub fn start(sink: Sink) -> std::io::Result<LogWriter> {
        let (queue, lines) = sync_channel::<String>(QUEUE_LINES);
        let (ended_tx, ended) = sync_channel::<()>(0);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&dropped);
        std::thread::Builder::new()
            .name("cordon-host-log".into())
            .spawn(move || {
                // Held until the thread ends: its drop is the "ended" signal.
                let _ended = ended_tx;
                for line in lines {
                    let Ok(mut sink) = sink.lock() else { return };
                    let lost = counted.swap(0, Ordering::Relaxed);
                    if lost > 0 {
                        let _ = sink.write_all(dropped_line(lost).as_bytes());
                    }
                    let _ = sink.write_all(line.as_bytes());
                    let _ = sink.flush();
                }
                // Closed: what was dropped since the last line is said too.
                let lost = counted.swap(0, Ordering::Relaxed);
                if let (true, Ok(mut sink)) = (lost > 0, sink.lock()) {
                    let _ = sink.write_all(dropped_line(lost).as_bytes());
                    let _ = sink.flush();
                }
            })?;
        Ok(LogWriter {
            queue: Mutex::new(Some(queue)),
            dropped,
            ended: Mutex::new(Some(ended)),
        })
    }

    /// Queues one whole line (newline included); never blocks on the sink.
    pub fn push(&self, line: String) {
        let sent = match self.queue.lock() {
            Ok(queue) => match queue.as_ref() {
                Some(tx) => tx.try_send(line),
                None => return,
            },
            Err(_) => return,
        };
        if let Err(TrySendError::Full(_)) = sent {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Lines queued so far are written, within `bound` (a stuck sink must
    /// not keep a stopping host alive); later lines are dropped. Blocking:
    /// call it off the runtime's workers.
    pub fn close(&self, bound: Duration) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.take();
        }
        let ended = self.ended.lock().ok().and_then(|mut e| e.take());
        if let Some(ended) = ended {
            let _ = ended.recv_timeout(bound);
        }
    }
}

/// The line that says how many lines the full queue dropped.
fn dropped_line(lines: u64) -> String {
    let ts = cordon_egress::timestamp::rfc3339(std::time::SystemTime::now());
    format!(
        "{}\n",
        json!({"event": "log-dropped", "lines": lines, "ts": ts})
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A sink the test holds shut: every write waits for the gate.
    struct Gated {
        gate: Arc<Mutex<()>>,
        out: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _open = self.gate.lock().unwrap();
            self.out.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_sink_never_blocks_push_and_the_lines_past_the_queue_are_counted() {
        let gate = Arc::new(Mutex::new(()));
        let out = Arc::new(Mutex::new(Vec::new()));
        let held = gate.lock().unwrap();
        let sink: Sink = Arc::new(Mutex::new(Box::new(Gated {
            gate: Arc::clone(&gate),
            out: Arc::clone(&out),
        })));
        let writer = LogWriter::start(sink).unwrap();
        // The writer takes one line and blocks on it; the queue fills; the
        // rest are counted. Every push returns although nothing is written.
        let total = QUEUE_LINES + 100;
        for i in 0..total {
            writer.push(format!("{{\"n\":{i}}}\n"));
        }
        assert!(out.lock().unwrap().is_empty());
        drop(held);
        writer.close(Duration::from_secs(60));
        let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let written = lines.iter().filter(|l| l.get("n").is_some()).count();
        let dropped: u64 = lines
            .iter()
            .filter(|l| l["event"] == "log-dropped")
            .map(|l| l["lines"].as_u64().unwrap())
            .sum();
        // The writer may have taken 0 or 1 line before it blocked.
        assert!(written >= QUEUE_LINES, "{written}");
        assert_eq!(written as u64 + dropped, total as u64, "{text}");
        assert!(dropped > 0);
        // Closed: later lines go nowhere, and nothing blocks.
        writer.push("{\"late\":1}\n".into());
    }
}
