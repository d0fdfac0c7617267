//! The run's three pumps (two readers, one writer; pumps.rs): started once
//! bwrap holds its options, joined — bounded when the namespace could not be
//! confirmed empty — before the receipt counts their bytes. fd 3's reader is
//! a thread, or the owner's own loop when it gave one (owner_reader.rs).

use std::os::fd::{AsRawFd, OwnedFd};

use nix::sys::socket::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::run_error::RunError;
use crate::events::{EventSink, Stream};
use crate::receipt::ByteCounts;
use crate::run::execution::{Control, DirectWrite};
use crate::run::owner_reader::{drain_to_end, OwnerReader, ReaderParts};
use crate::run::pumps::{spawn_reader, spawn_writer, WriteCmd, WriterCounters};

/// How often a bounded pump join looks again (only for a namespace that
/// could not be confirmed empty).
const PUMP_POLL: Duration = Duration::from_millis(5);

pub struct Pumps {
    threads: Vec<JoinHandle<()>>,
    /// fd 3 (shut for reading once containment is confirmed).
    protocol: Arc<OwnedFd>,
    /// fd 3's reading when the owner's loop does it while the sandbox lives.
    owner: Option<ReaderParts>,
    writer: Option<JoinHandle<()>>,
    protocol_out: Arc<AtomicU64>,
    stderr: Arc<AtomicU64>,
    writes: Arc<WriterCounters>,
}

/// Starts the readers (fd 3 — on `owner`'s loop when there is one — and
/// stderr) and the writer (fd 3). A pump that cannot start is an error:
/// without it the streams could never end, so the caller takes the sandbox
/// down.
pub fn start(
    control: &Control,
    protocol: OwnedFd,
    stderr: OwnedFd,
    writer_rx: Receiver<WriteCmd>,
    sink: Arc<dyn EventSink>,
    owner: Option<Arc<dyn OwnerReader>>,
) -> (Pumps, Option<RunError>) {
    let protocol = Arc::new(protocol);
    let protocol_out = Arc::new(AtomicU64::new(0));
    let stderr_count = Arc::new(AtomicU64::new(0));
    let writes = Arc::new(WriterCounters::default());
    let mut readers = Vec::with_capacity(2);
    let owner = match owner {
        Some(owner) => {
            let parts = ReaderParts::new(
                Arc::clone(&protocol),
                Arc::clone(&sink),
                Arc::clone(&protocol_out),
            );
            owner.start(parts.clone());
            Some(parts)
        }
        None => {
            readers.push(spawn_reader(
                Stream::Protocol,
                Arc::clone(&protocol),
                Arc::clone(&control.protocol_gate),
                Arc::clone(&sink),
                Arc::clone(&protocol_out),
            ));
            None
        }
    };
    readers.push(spawn_reader(
        Stream::Stderr,
        Arc::new(stderr),
        Arc::clone(&control.stderr_gate),
        Arc::clone(&sink),
        Arc::clone(&stderr_count),
    ));
    let writer = spawn_writer(
        Arc::clone(&protocol),
        writer_rx,
        sink,
        Arc::clone(&writes),
        Arc::clone(&control.queued),
    );
    if writer.is_ok() {
        if let Ok(mut direct) = control.direct.lock() {
            *direct = Some(DirectWrite {
                fd: Arc::clone(&protocol),
                counters: Arc::clone(&writes),
            });
        }
    }
    let mut error = None;
    let mut threads = Vec::with_capacity(2);
    for reader in readers {
        match reader {
            Ok(thread) => threads.push(thread),
            Err(e) => error = error.or(Some(RunError::StartPumps(e))),
        }
    }
    let writer = match writer {
        Ok(thread) => Some(thread),
        Err(e) => {
            error = error.or(Some(RunError::StartPumps(e)));
            None
        }
    };
    let pumps = Pumps {
        threads,
        protocol: Arc::clone(&protocol),
        owner,
        writer,
        protocol_out,
        stderr: stderr_count,
        writes,
    };
    (pumps, error)
}

/// Joins the pumps (the sandbox is gone: the readers read to EOF without
/// credits; fd 3 on this thread when the owner's loop read it); with a
/// `bound`, a pump still blocked past it is left running (it ends at its
/// EOF or EPIPE) so the run settles anyway.
pub fn join(pumps: Pumps, control: &Control, bound: Option<Instant>) -> ByteCounts {
    if bound.is_none() {
        // Containment confirmed: no sandbox process can send on fd 3 any
        // more, so what is queued is all there is. Its end comes after that
        // queue even when a copy of the sandbox's end outlives the sandbox
        // (one it passed to the host, held by a closer thread: R14w-2).
        let _ = nix::sys::socket::shutdown(pumps.protocol.as_raw_fd(), Shutdown::Read);
    }
    control.protocol_gate.drain();
    control.stderr_gate.drain();
    if let Some(parts) = &pumps.owner {
        drain_to_end(parts, bound);
    }
    for thread in pumps.threads {
        join_within(thread, bound);
    }
    // A rest the owner still keeps for fd 3's writability is never sent
    // now: discarded, like what the writer could not send (round 15r,
    // R15r-1), so protocolIn + protocolInDiscarded is every byte accepted.
    let kept = control.close_writer();
    if let Some(writer) = pumps.writer {
        join_within(writer, bound);
    }
    ByteCounts {
        protocol_in: pumps.writes.written.load(Ordering::Relaxed),
        protocol_in_discarded: pumps.writes.discarded.load(Ordering::Relaxed) + kept,
        protocol_out: pumps.protocol_out.load(Ordering::Relaxed),
        stderr: pumps.stderr.load(Ordering::Relaxed),
    }
}

fn join_within(thread: JoinHandle<()>, bound: Option<Instant>) {
    if let Some(bound) = bound {
        while !thread.is_finished() && Instant::now() < bound {
            std::thread::sleep(PUMP_POLL);
        }
        if !thread.is_finished() {
            return;
        }
    }
    let _ = thread.join();
}
