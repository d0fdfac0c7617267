//! The running phase of a session: fd 3 and stderr relayed as bytes with
//! the credit windows of docs/remote.md § Flow control, `stop`, liveness.
//!
//! Memory per session is constant: toward the client, the launcher reads a
//! stream's next chunk only after this relay granted it, and it grants only
//! once the previous chunk was sent within the client's credit (so at most
//! one 64 KiB chunk waits here per stream); toward the sandbox, the client
//! may have at most [`WINDOW_BYTES`] unacknowledged, and credit is returned
//! as the launcher's writer completes each chunk.
//!
//! A client that goes away, breaks the protocol, does not answer a ping in
//! time or cannot be written to within that bound is a disconnect: the stop
//! ladder runs (reason `disconnect`) and the relay drains the sandbox's
//! streams until the run finished.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use cordon_launcher::events::{Completion, Event, LaunchFailure, Stream};
use cordon_launcher::{ExecutionHandle, StopReason, WriteOutcome, WRITE_QUEUE_DEPTH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::mpsc::{Receiver, UnboundedReceiver};
use tokio::time::{sleep_until, Instant};

use super::config::Liveness;
use super::frame::{self, Frame, FrameError, Kind};
use super::relay_writer::{Note, Outgoing, DATA_QUEUE_BYTES};

/// Each direction's initial window per stream (bytes).
pub const WINDOW_BYTES: u64 = 256 * 1024;
/// Most credit a client may have granted beyond what is in flight: a
/// larger grant is a protocol violation (it would overflow nothing, but no
/// honest client needs it).
const MAX_CREDIT_BYTES: u64 = 1 << 32;

type Outcome = Result<Completion, LaunchFailure>;

/// One stream toward the client.
struct Outbound {
    stream: Stream,
    credit: u64,
    pending: VecDeque<u8>,
    /// A `Data` event was received and not yet granted back.
    owe_grant: bool,
    ended: bool,
    end_sent: bool,
}

impl Outbound {
    fn new(stream: Stream) -> Outbound {
        Outbound {
            stream,
            credit: WINDOW_BYTES,
            pending: VecDeque::new(),
            owe_grant: false,
            ended: false,
            end_sent: false,
        }
    }

    fn kinds(&self) -> (Kind, Kind) {
        match self.stream {
            Stream::Protocol => (Kind::Data, Kind::End),
            Stream::Stderr => (Kind::Stderr, Kind::StderrEnd),
        }
    }

    fn done(&self) -> bool {
        self.end_sent
    }
}

/// How the relay ended: the run's outcome, and whether the client is
/// still there to be sent `exit`.
pub struct Relayed<W> {
    pub outcome: Outcome,
    /// What became of the client's fd-3 bytes outside the receipt (R17w-1).
    pub inbound: InboundBytes,
    /// The connection's write half, everything queued written; `None` when
    /// the client is gone (nothing more is sent).
    pub writer: Option<W>,
}

/// The client's fd-3 bytes as the host saw them when the relay ended, for
/// `exit` (docs/remote.md): every data byte it read, and those of them in
/// neither of the receipt's protocol counters — handed to the launcher
/// after the receipt was composed (the run had ended), or still held here.
/// The client counts what it sent beyond `received` (still on the wire)
/// and `dropped` in its `protocolDroppedBytes` (round 17w, R17w-1).
#[derive(Debug, Clone, Copy, Default)]
pub struct InboundBytes {
    pub received: u64,
    pub dropped: u64,
}

pub struct Relay<W> {
    /// Writes to the client, off the relay's loop (relay_writer.rs).
    pub outgoing: Outgoing<W>,
    pub handle: Arc<ExecutionHandle>,
    pub events: UnboundedReceiver<Event>,
    pub frames: Receiver<Result<Frame, FrameError>>,
    pub liveness: Liveness,
    /// Becomes `true` when the host stops: the sandbox is stopped (reason
    /// `signal`) and the relay runs on until it finished.
    pub shutdown: tokio::sync::watch::Receiver<bool>,
}

/// The client's side of the state.
struct State {
    out: [Outbound; 2],
    /// Client → sandbox: chunks not yet handed to the launcher's writer.
    inbound: VecDeque<Vec<u8>>,
    /// Client → sandbox: every data byte read from the client.
    received: u64,
    /// Sizes of the writes queued in the launcher (0: the shutdown).
    in_flight: VecDeque<usize>,
    /// Bytes the client may still send before credit comes back.
    inbound_window: u64,
    end_requested: bool,
    shutdown_queued: bool,
    client_present: bool,
    ping: Option<([u8; 8], Instant)>,
    next_ping: Instant,
}

impl State {
    fn new(liveness: &Liveness) -> State {
        State {
            out: [
                Outbound::new(Stream::Protocol),
                Outbound::new(Stream::Stderr),
            ],
            inbound: VecDeque::new(),
            received: 0,
            in_flight: VecDeque::new(),
            inbound_window: WINDOW_BYTES,
            end_requested: false,
            shutdown_queued: false,
            client_present: true,
            ping: None,
            next_ping: Instant::now() + ms(liveness.ping_interval_ms),
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> Relay<W> {
    pub async fn run(mut self) -> Relayed<W> {
        let mut st = State::new(&self.liveness);
        let mut outcome: Option<Outcome> = None;
        let mut drain_until: Option<Instant> = None;
        let mut host_stopping = false;
        let mut finished = false;
        let mut shutdown = self.shutdown.clone();
        loop {
            if let Some(done) = outcome.take() {
                if !st.client_present || st.out.iter().all(Outbound::done) {
                    let inbound = InboundBytes {
                        received: st.received,
                        dropped: self.handle.dropped_after_receipt()
                            + st.inbound.iter().map(|c| c.len() as u64).sum::<u64>(),
                    };
                    return self.finish(done, st.client_present, inbound).await;
                }
                // The client must take what is left within the pong bound.
                let until = *drain_until
                    .get_or_insert_with(|| Instant::now() + ms(self.liveness.pong_timeout_ms));
                if Instant::now() >= until {
                    self.disconnect(&mut st);
                }
                outcome = Some(done);
            }
            let wake = self.next_wake(&st, drain_until);
            tokio::select! {
                // Finished is the last event: the channel then closes.
                event = self.events.recv(), if !finished => match event {
                    Some(Event::Finished(done)) => {
                        finished = true;
                        outcome = Some(done);
                        self.end_streams(&mut st).await;
                    }
                    Some(event) => self.on_event(&mut st, event).await,
                    // The launcher always sends Finished; fail closed.
                    None => {
                        finished = true;
                        outcome = Some(Err(lost_events()));
                        self.end_streams(&mut st).await;
                    }
                },
                frame = self.frames.recv(), if st.client_present => match frame {
                    Some(Ok(frame)) => self.on_frame(&mut st, frame).await,
                    Some(Err(_)) | None => self.disconnect(&mut st),
                },
                () = sleep_until(wake), if st.client_present => self.on_timer(&mut st).await,
                note = self.outgoing.note(), if st.client_present => match note {
                    // Room in the queue: what a full queue held back goes.
                    Note::Written(_) => {
                        self.flush(&mut st, 0).await;
                        self.flush(&mut st, 1).await;
                    }
                    Note::Failed => self.disconnect(&mut st),
                },
                () = stopping(&mut shutdown), if !host_stopping => {
                    host_stopping = true;
                    self.handle.stop(StopReason::Signal);
                }
            }
        }
    }

    /// Nothing follows `Finished`: a stream it left open (a launch that
    /// failed after `started` never opened either) ends here, once what it
    /// holds is sent. Left open, the relay waited the pong bound for an end
    /// that never came, then dropped the client without `exit` (R11-10).
    async fn end_streams(&mut self, st: &mut State) {
        for i in 0..st.out.len() {
            st.out[i].ended = true;
            self.flush(st, i).await;
        }
    }

    /// The run ended and the client took everything (or is gone): the
    /// writer back once what is queued is written, within the pong bound.
    async fn finish(
        self,
        outcome: Outcome,
        client_present: bool,
        inbound: InboundBytes,
    ) -> Relayed<W> {
        let writer = if client_present {
            self.outgoing
                .finish(ms(self.liveness.pong_timeout_ms))
                .await
        } else {
            self.outgoing.abort();
            None
        };
        Relayed {
            outcome,
            inbound,
            writer,
        }
    }

    fn next_wake(&self, st: &State, drain_until: Option<Instant>) -> Instant {
        let mut wake = st.next_ping;
        if let Some((_, sent)) = st.ping {
            wake = wake.min(sent + ms(self.liveness.pong_timeout_ms));
        }
        drain_until.map_or(wake, |d| wake.min(d))
    }

    fn disconnect(&mut self, st: &mut State) {
        if !st.client_present {
            return;
        }
        st.client_present = false;
        self.handle.stop(StopReason::Disconnect);
        // Nobody will read what is held: discard it and let the pumps drain.
        for out in &mut st.out {
            out.pending.clear();
            if std::mem::take(&mut out.owe_grant) {
                self.handle.grant(out.stream);
            }
        }
        st.inbound.clear();
    }

    async fn send(&mut self, st: &mut State, kind: Kind, payload: &[u8]) {
        if !st.client_present {
            return;
        }
        if !self.outgoing.push(kind, payload) {
            self.disconnect(st);
        }
    }

    async fn on_event(&mut self, st: &mut State, event: Event) {
        match event {
            Event::Data { stream, bytes } => {
                let out = &mut st.out[index(stream)];
                if st.client_present {
                    out.pending.extend(bytes);
                    out.owe_grant = true;
                } else {
                    self.handle.grant(stream);
                }
                self.flush(st, index(stream)).await;
            }
            Event::End { stream, .. } => {
                st.out[index(stream)].ended = true;
                self.flush(st, index(stream)).await;
            }
            Event::WriteDone { .. } | Event::ShutdownDone => {
                let size = st.in_flight.pop_front().unwrap_or(0);
                if size > 0 {
                    st.inbound_window += size as u64;
                    let credit = frame::credit_payload(0, size as u32);
                    self.send(st, Kind::Credit, &credit).await;
                }
                self.pump_inbound(st);
            }
            // The remote protocol carries the whole receipt with the exit only.
            Event::Finished(_) | Event::Observed { .. } => {}
        }
    }

    /// Sends what the client's credit allows; grants the launcher's next
    /// chunk once this one is out; `end` once everything before it is.
    async fn flush(&mut self, st: &mut State, i: usize) {
        let (data, end) = st.out[i].kinds();
        loop {
            let out = &mut st.out[i];
            let room = self.outgoing.queued() < DATA_QUEUE_BYTES;
            if out.credit == 0 || out.pending.is_empty() || !room || !st.client_present {
                break;
            }
            let n = (out.credit as usize)
                .min(frame::MAX_DATA_BYTES)
                .min(out.pending.len());
            let chunk: Vec<u8> = out.pending.drain(..n).collect();
            out.credit -= n as u64;
            self.send(st, data, &chunk).await;
        }
        let out = &mut st.out[i];
        if out.pending.is_empty() {
            if std::mem::take(&mut out.owe_grant) {
                self.handle.grant(out.stream);
            }
            if out.ended && !out.end_sent {
                out.end_sent = true;
                self.send(st, end, &[]).await;
            }
        }
    }

    /// Hands queued client bytes to the launcher's writer, at most
    /// `WRITE_QUEUE_DEPTH` at a time; then the half-close, if asked.
    fn pump_inbound(&mut self, st: &mut State) {
        while st.in_flight.len() < WRITE_QUEUE_DEPTH {
            if let Some(chunk) = st.inbound.pop_front() {
                let size = chunk.len();
                match self.handle.write(chunk) {
                    WriteOutcome::Queued => st.in_flight.push_back(size),
                    // The sandbox's side is gone: the bytes are dropped,
                    // and the client's window is not held for them.
                    WriteOutcome::Ended | WriteOutcome::Full => st.inbound_window += size as u64,
                }
            } else if st.end_requested && !st.shutdown_queued {
                st.shutdown_queued = true;
                if self.handle.shutdown_write() == WriteOutcome::Queued {
                    st.in_flight.push_back(0);
                }
            } else {
                return;
            }
        }
    }

    async fn on_frame(&mut self, st: &mut State, frame: Frame) {
        match frame.kind {
            Kind::Data => {
                let size = frame.payload.len() as u64;
                if size > st.inbound_window || st.end_requested {
                    return self.disconnect(st);
                }
                if size > 0 {
                    st.received += size;
                    st.inbound_window -= size;
                    st.inbound.push_back(frame.payload);
                    self.pump_inbound(st);
                }
            }
            Kind::End if frame.payload.is_empty() => {
                st.end_requested = true;
                self.pump_inbound(st);
            }
            Kind::Credit => match frame::parse_credit(&frame.payload) {
                Some((id, bytes)) => {
                    let out = &mut st.out[usize::from(id)];
                    out.credit += u64::from(bytes);
                    if out.credit > MAX_CREDIT_BYTES {
                        return self.disconnect(st);
                    }
                    self.flush(st, usize::from(id)).await;
                }
                None => self.disconnect(st),
            },
            Kind::Stop => self.handle.stop(StopReason::Requested),
            Kind::Ping if frame.payload.len() == 8 => {
                self.send(st, Kind::Pong, &frame.payload).await;
            }
            Kind::Pong => {
                if st
                    .ping
                    .is_some_and(|(bytes, _)| bytes[..] == frame.payload[..])
                {
                    st.ping = None;
                }
            }
            _ => self.disconnect(st),
        }
    }

    async fn on_timer(&mut self, st: &mut State) {
        let now = Instant::now();
        if let Some((_, sent)) = st.ping {
            if now >= sent + ms(self.liveness.pong_timeout_ms) {
                return self.disconnect(st);
            }
        }
        if now >= st.next_ping {
            st.next_ping = now + ms(self.liveness.ping_interval_ms);
            if st.ping.is_none() {
                let bytes = ping_bytes();
                st.ping = Some((bytes, now));
                self.send(st, Kind::Ping, &bytes).await;
            }
        }
    }
}

/// Resolves once the host is stopping (or its sender is gone).
async fn stopping(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stopping| *stopping).await;
}

fn index(stream: Stream) -> usize {
    match stream {
        Stream::Protocol => 0,
        Stream::Stderr => 1,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn ping_bytes() -> [u8; 8] {
    let hex = cordon_launcher::host::process_identity::random_hex(4).unwrap_or_default();
    let mut out = [0u8; 8];
    out.iter_mut().zip(hex.bytes()).for_each(|(o, b)| *o = b);
    out
}

fn lost_events() -> LaunchFailure {
    LaunchFailure {
        code: cordon_launcher::ErrorCode::SpawnFailed,
        message: "the launcher's event channel closed before the run finished".into(),
        receipt: None,
    }
}

/// Reads the client's frames into a small channel (reading a frame is not
/// cancel-safe, so it never sits in the relay's `select!`). Ends at the
/// first error, which it forwards. The session aborts it when it ends (it
/// holds the connection's read half).
pub fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    mut reader: R,
) -> (
    Receiver<Result<Frame, FrameError>>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let task = tokio::spawn(async move {
        loop {
            let frame = frame::read_frame(&mut reader).await;
            let last = frame.is_err();
            if last {
                return;
            }
            if tx.send(frame).await.is_err() {
                // The session has ended (its `exit` is written): what the
                // client still sends (a late `credit`, a `stop` racing the
                // exit) is read and dropped, so the socket is never closed
                // with unread bytes in it — that would reset the connection
                // and could destroy the `exit` before the client read it.
                // The caller bounds how long this lasts.
                let mut sink = [0u8; 4096];
                while matches!(reader.read(&mut sink).await, Ok(n) if n > 0) {}
                return;
            }
        }
    });
    (rx, task)
}
