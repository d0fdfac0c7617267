//! The closer: one thread per process (`cordon-fd-closer`, started at the
//! first close) that takes the descriptors handed to it ([`crate::neutralise`],
//! [`crate::release_kept`]) and closes them from a short-lived exiting thread
//! (settle.rs): every batch waiting when a round begins goes to one such
//! thread.
//!
//! Why one thread that batches: each exiting thread costs a thread start and
//! a copy of the descriptor table. Started per message, with a thread that
//! started it, that was ~3× the CPU of the closer before it for a message of
//! one descriptor (a sandbox can send thousands); batched, a flood of
//! messages shares a few exiting threads, and the one release a mediated
//! run makes at its end (the proxy listener) costs one. The closer makes no
//! last close itself (the exiting thread holds a copy of each descriptor
//! when the closer drops its own), so no file's release runs on it; the
//! work every close does — a file's `flush`, dropping this process's POSIX
//! locks, which walks every lock of the file (W26-1: tens of thousands, at
//! the sandbox's choice) — does, which is why the engine socket no longer
//! takes descriptors from a program (6.16+).

use std::os::fd::OwnedFd;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::settle;

/// How long the closer waits before it tries again when no exiting thread
/// could be started (a thread limit): the descriptors stay open meanwhile.
const RETRY_AFTER: Duration = Duration::from_millis(50);

/// Where batches go: the closer's queue, once it is started.
static CLOSER: Mutex<Option<Sender<Vec<OwnedFd>>>> = Mutex::new(None);

/// Descriptors handed over while no closer thread could be started, kept
/// open until one can (round 15w, R15w-2: a thread limit once made a
/// supervision worker close them itself and wait in `tcp_close`).
static ORPHANS: Mutex<Vec<OwnedFd>> = Mutex::new(Vec::new());

/// Hands `fds` to the closer; never closes them on the calling thread.
pub(crate) fn hand_over(fds: Vec<OwnedFd>) {
    let mut closer = CLOSER.lock().unwrap_or_else(PoisonError::into_inner);
    let fds = match closer.as_ref() {
        Some(queue) => match queue.send(fds) {
            Ok(()) => return,
            // Its thread ended (only a panic ends it): a new one is started.
            Err(mpsc::SendError(fds)) => fds,
        },
        None => fds,
    };
    let mut waiting = std::mem::take(&mut *ORPHANS.lock().unwrap_or_else(PoisonError::into_inner));
    waiting.extend(fds);
    let (queue, batches) = mpsc::channel();
    // Shared, not moved into the thread: a spawn that fails drops its
    // closure, which would close them here.
    let handed = Arc::new(Mutex::new(Some((batches, waiting))));
    let theirs = Arc::clone(&handed);
    let started = std::thread::Builder::new()
        .name("cordon-fd-closer".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            let taken = theirs.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some((batches, waiting)) = taken {
                run(&batches, waiting);
            }
        });
    match started {
        Ok(_) => *closer = Some(queue),
        Err(_) => {
            let taken = handed.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some((_, waiting)) = taken {
                ORPHANS
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(waiting);
            }
        }
    }
}

/// The closer's loop: each round takes every batch waiting and closes them
/// from one exiting thread; where none can be started, keeps them and tries
/// again after [`RETRY_AFTER`].
fn run(batches: &Receiver<Vec<OwnedFd>>, mut waiting: Vec<OwnedFd>) {
    loop {
        if waiting.is_empty() {
            match batches.recv() {
                Ok(batch) => waiting = batch,
                Err(_) => return,
            }
        }
        while let Ok(more) = batches.try_recv() {
            waiting.extend(more);
        }
        if let Err(unclosed) = settle::close_from_exiting_thread(std::mem::take(&mut waiting)) {
            waiting = unclosed;
            std::thread::sleep(RETRY_AFTER);
        }
    }
}
