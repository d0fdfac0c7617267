//! The byte relay of `cordon run`, around one launched execution:
//! - our stdin → the program's fd 3, one chunk at a time (the launcher's
//!   writer accepts one pending write), then `SHUT_WR` on stdin EOF;
//! - the program's fd 3 → our stdout, drained to EOF;
//! - the program's stdout+stderr → our stderr;
//! - SIGTERM/SIGINT → the stop ladder (first request wins, idempotent).
//!
//! Every launcher event and every signal arrives on one channel, handled in
//! order on the main thread; write completions go to the stdin thread.
//! Backpressure: a stream's next chunk is granted only after the previous
//! one was written out, so a slow reader of our stdout slows the program.

use std::io::{Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cordon_launcher::events::{Completion, Event, EventSink, LaunchFailure, Stream};
use cordon_launcher::{ExecutionHandle, StopReason, WriteOutcome};

/// Bytes read from our stdin per protocol write.
const STDIN_CHUNK_BYTES: usize = 64 * 1024;

/// What the main thread reacts to.
#[derive(Debug)]
pub enum Message {
    Event(Event),
    /// SIGTERM or SIGINT reached `cordon run`.
    Signal,
    /// The launcher let go of the run's event sink: its teardown after
    /// `Finished` (the control root's removal) is done.
    Released,
}

/// Routes the launcher's events: completions of our writes to the stdin
/// thread, everything else to the main thread.
struct Router {
    main: Mutex<Sender<Message>>,
    writes: Mutex<Sender<()>>,
}

impl EventSink for Router {
    fn emit(&self, event: Event) {
        let target = match event {
            Event::WriteDone { .. } | Event::ShutdownDone => {
                if let Ok(tx) = self.writes.lock() {
                    let _ = tx.send(());
                }
                return;
            }
            other => other,
        };
        if let Ok(tx) = self.main.lock() {
            let _ = tx.send(Message::Event(target));
        }
    }
}

/// The last reference goes when the run's supervision ends, after the
/// control root is removed (it is removed after `Finished`, so the run
/// settles first): [`Channels::relay`] waits for this, briefly, so that
/// `cordon run` does not exit before it and leave the root to a later sweep.
impl Drop for Router {
    fn drop(&mut self) {
        if let Ok(tx) = self.main.lock() {
            let _ = tx.send(Message::Released);
        }
    }
}

/// How long `cordon run` waits after `Finished` for the run's teardown
/// ([`Router`]'s drop): a root holding a huge tree the sandbox left is
/// then left to the stale-root sweep instead.
const TEARDOWN_WAIT: Duration = Duration::from_secs(2);

/// The channels of one run, created before the launch.
pub struct Channels {
    pub main_tx: Sender<Message>,
    main_rx: Receiver<Message>,
    writes_rx: Receiver<()>,
    sink: Arc<dyn EventSink>,
}

impl Channels {
    pub fn new() -> Channels {
        let (main_tx, main_rx) = mpsc::channel();
        let (writes_tx, writes_rx) = mpsc::channel();
        let sink: Arc<dyn EventSink> = Arc::new(Router {
            main: Mutex::new(main_tx.clone()),
            writes: Mutex::new(writes_tx),
        });
        Channels {
            main_tx,
            main_rx,
            writes_rx,
            sink,
        }
    }

    pub fn sink(&self) -> Arc<dyn EventSink> {
        Arc::clone(&self.sink)
    }

    /// Relays until the execution finished (both streams ended, bwrap reaped).
    pub fn relay(self, handle: ExecutionHandle) -> Result<Completion, LaunchFailure> {
        let Channels {
            main_tx: _keep_open,
            main_rx,
            writes_rx,
            sink,
        } = self;
        drop(sink); // the launcher's clone is then the last one (see Router's Drop)
        let handle = Arc::new(handle);
        start_stdin_pump(Arc::clone(&handle), writes_rx);
        let mut out = Output::default();
        loop {
            let Ok(message) = main_rx.recv() else {
                // Unreachable while `main_tx` lives in self; fail closed anyway.
                return Err(lost_events());
            };
            match message {
                Message::Signal => handle.stop(StopReason::Signal),
                Message::Event(Event::Data { stream, bytes }) => {
                    out.write(stream, &bytes);
                    handle.grant(stream);
                }
                Message::Event(Event::End { stream, error }) => out.ended(stream, error),
                Message::Event(Event::Finished(outcome)) => {
                    wait_released(&main_rx);
                    return outcome;
                }
                Message::Released => {}
                Message::Event(
                    Event::WriteDone { .. } | Event::ShutdownDone | Event::Observed { .. },
                ) => {}
            }
        }
    }
}

/// Waits up to [`TEARDOWN_WAIT`] for [`Message::Released`]; anything else
/// (a late signal) is moot once the run finished.
fn wait_released(main_rx: &Receiver<Message>) {
    let until = Instant::now() + TEARDOWN_WAIT;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match main_rx.recv_timeout(left) {
            Ok(Message::Released) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

impl Default for Channels {
    fn default() -> Self {
        Channels::new()
    }
}

fn lost_events() -> LaunchFailure {
    LaunchFailure {
        code: cordon_launcher::ErrorCode::SpawnFailed,
        message: "the launcher's event channel closed before the run finished".into(),
        receipt: None,
    }
}

/// Our stdout and stderr; a reader that went away (EPIPE) is remembered and
/// the rest of its stream is discarded, so the program still drains.
#[derive(Default)]
struct Output {
    stdout_gone: bool,
    stderr_gone: bool,
}

impl Output {
    fn write(&mut self, stream: Stream, bytes: &[u8]) {
        let gone = match stream {
            Stream::Protocol => &mut self.stdout_gone,
            Stream::Stderr => &mut self.stderr_gone,
        };
        if *gone {
            return;
        }
        let written = match stream {
            Stream::Protocol => write_flush(std::io::stdout(), bytes),
            Stream::Stderr => write_flush(std::io::stderr(), bytes),
        };
        *gone = written.is_err();
    }

    fn ended(&mut self, stream: Stream, error: Option<String>) {
        if let Some(error) = error {
            let name = match stream {
                Stream::Protocol => "fd 3",
                Stream::Stderr => "stdout/stderr",
            };
            let _ = writeln!(
                std::io::stderr(),
                "cordon run: reading the program's {name}: {error}"
            );
        }
    }
}

fn write_flush(mut to: impl Write, bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(bytes)?;
    to.flush()
}

/// Our stdin → fd 3, then the half-close. Ends early when the execution
/// refuses a write (it ended); a stdin still open then is simply abandoned.
fn start_stdin_pump(handle: Arc<ExecutionHandle>, writes: Receiver<()>) {
    // Without the pump the program would never see our stdin: half-close at once.
    let fallback = Arc::clone(&handle);
    let pump = move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; STDIN_CHUNK_BYTES];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => 0,
            };
            if n == 0 {
                if handle.shutdown_write() == WriteOutcome::Queued {
                    let _ = writes.recv();
                }
                return;
            }
            // One write in flight (we wait for its WriteDone), so the queue is
            // never full here: anything but Queued means the run ended.
            if handle.write(buf[..n].to_vec()) != WriteOutcome::Queued || writes.recv().is_err() {
                return;
            }
        }
    };
    if std::thread::Builder::new()
        .name("cordon-stdin".into())
        .spawn(pump)
        .is_err()
    {
        fallback.shutdown_write();
    }
}
