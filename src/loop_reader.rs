//! fd 3 read on Node's event loop (`cordon_launcher::OwnerReader`): a frame
//! the sandbox sends wakes the JS thread directly, not a reader thread that
//! then wakes the JS thread (one wake-up less per tool call and per chunk;
//! docs/performance.md › "Protocol reads on the JS thread").
//!
//! Flow control is the reader thread's, moved here: one chunk per credit
//! (`grant`, from `ProtocolStream._read`); with no credit the descriptor is
//! not polled and the sandbox meets the socket's backpressure. A grant
//! reads at once when a chunk is already queued and the poll is off.
//!
//! Every read is the launcher's (`ReaderParts::read_once`: passed
//! descriptors neutralised, bytes counted, `Data`/`End` emitted through the
//! run's event function, so they stay in order with its other events). Once
//! the sandbox is gone the launcher's teardown reads the rest itself, so a
//! busy JS thread never holds up a run's end (owner_reader.rs).
//!
//! The reader ends at fd 3's end, or when the run settles (`Finished`
//! delivered) or its environment is torn down: then it abandons fd 3
//! (its queue drained, no `End`) and closes its handles; a worker's loop
//! must not be closed with them open.

use std::sync::{Arc, Mutex, MutexGuard};

use cordon_launcher::{OwnerReader, ReadStep, ReaderParts};
use napi::sys::uv_loop_s;
use napi::Env;

use crate::uv::{LoopCallbacks, Poll, Wake};

/// Descriptor-only messages read in one turn before the reader yields.
const READS_PER_TURN: usize = 16;

/// The loop of the environment that spawned the run. Used only on that
/// loop's thread (the state's lock does not make it usable elsewhere).
struct EventLoop(*mut uv_loop_s);

// SAFETY: the pointer is only dereferenced by libuv on its own thread (the
// poll is created in `woken`, a callback of that loop).
unsafe impl Send for EventLoop {}

struct State {
    event_loop: EventLoop,
    /// Handed over by the launcher's thread, taken on the loop's thread.
    pending: Option<ReaderParts>,
    parts: Option<ReaderParts>,
    poll: Option<Poll>,
    wake: Option<Wake>,
    /// The consumer wants one more chunk (one to start with, as the
    /// reader thread's gate).
    credit: bool,
    /// The reader is done: handles closed, nothing more is read.
    closed: bool,
}

pub struct Shared {
    state: Mutex<State>,
}

/// One run's fd 3 reader on the loop of the environment that spawned it.
#[derive(Clone)]
pub struct LoopReader(Arc<Shared>);

impl LoopReader {
    /// On the JS thread, before the launch.
    pub fn new(env: &Env) -> napi::Result<LoopReader> {
        let event_loop = env.get_uv_event_loop()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                event_loop: EventLoop(event_loop),
                pending: None,
                parts: None,
                poll: None,
                wake: None,
                credit: true,
                closed: false,
            }),
        });
        let wake = Wake::new(event_loop, &shared).map_err(napi::Error::from_reason)?;
        if let Ok(mut st) = shared.state.lock() {
            st.wake = Some(wake);
        }
        Ok(LoopReader(shared))
    }

    /// The consumer wants one more chunk (JS thread).
    pub fn grant(&self) {
        if let Some(mut st) = self.0.lock() {
            st.credit = true;
            // A watching poll reports a queued chunk itself; a stopped one
            // means a chunk may already wait: read it now.
            if !st.poll.as_ref().is_some_and(Poll::watching) {
                self.0.pump(&mut st);
            }
        }
    }

    /// The run settled, or its environment is going away (JS thread): stop
    /// reading and close the handles (see the module's last paragraph).
    pub fn settle(&self) {
        if let Some(mut st) = self.0.lock() {
            if let Some(parts) = st.parts.take().or_else(|| st.pending.take()) {
                parts.abandon();
            }
            Shared::close(&mut st);
        }
    }

    pub fn owner(&self) -> Arc<dyn OwnerReader> {
        Arc::clone(&self.0) as Arc<dyn OwnerReader>
    }

    pub fn downgrade(&self) -> std::sync::Weak<Shared> {
        Arc::downgrade(&self.0)
    }

    pub fn from_shared(shared: Arc<Shared>) -> LoopReader {
        LoopReader(shared)
    }
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    /// Reads one chunk when the consumer wants one. The poll stays on after
    /// a chunk (the consumer's next grant usually comes before the next
    /// frame, and the level-triggered poll then reports it: no poll
    /// syscalls per frame); it stops when fd 3 is readable and nobody wants
    /// the chunk, so the sandbox meets backpressure.
    fn pump(&self, st: &mut State) {
        for _ in 0..READS_PER_TURN {
            let Some(parts) = st.parts.as_ref() else {
                return;
            };
            if !st.credit {
                self.watch(st, false);
                return;
            }
            match parts.read_once() {
                ReadStep::Emitted => {
                    st.credit = false;
                    self.watch(st, true);
                    return;
                }
                // Descriptors alone: the credit stands.
                ReadStep::Nothing => {}
                ReadStep::WouldBlock => {
                    self.watch(st, true);
                    return;
                }
                ReadStep::Ended => {
                    st.parts = None;
                    Self::close(st);
                    return;
                }
            }
        }
        // A sandbox sending descriptor-only messages as fast as it can:
        // the poll reports the rest on the next turn, after the loop's
        // other work.
        self.watch(st, true);
    }

    /// Polls fd 3 or stops; a poll that cannot be set ends the stream with
    /// the reason (never a silent stall).
    fn watch(&self, st: &mut State, on: bool) {
        let result = match st.poll.as_mut() {
            Some(poll) => poll.watch::<Shared>(on),
            None => Ok(()),
        };
        if let Err(why) = result {
            if let Some(parts) = st.parts.take() {
                parts.fail(why);
            }
            Self::close(st);
        }
    }

    /// Closes both handles once (loop thread). After it the launcher's
    /// threads send no more wakes.
    fn close(st: &mut State) {
        if st.closed {
            return;
        }
        st.closed = true;
        if let Some(poll) = st.poll.take() {
            poll.close::<Shared>();
        }
        if let Some(wake) = st.wake.take() {
            wake.close::<Shared>();
        }
    }

    /// Takes the handed-over parts and starts polling (loop thread).
    fn adopt(self: &Arc<Self>, st: &mut State) {
        let Some(parts) = st.pending.take() else {
            return;
        };
        match Poll::new(st.event_loop.0, parts.raw_fd(), self) {
            Ok(poll) => {
                st.poll = Some(poll);
                st.parts = Some(parts);
            }
            Err(why) => {
                parts.fail(why);
                Self::close(st);
            }
        }
    }
}

impl LoopCallbacks for Shared {
    fn readable(this: &Arc<Self>, stopped: bool) {
        if let Some(mut st) = this.lock() {
            if stopped {
                if let Some(poll) = st.poll.as_mut() {
                    poll.stopped_by_libuv();
                }
            }
            this.pump(&mut st);
        }
    }

    fn woken(this: &Arc<Self>) {
        if let Some(mut st) = this.lock() {
            this.adopt(&mut st);
            this.pump(&mut st);
        }
    }
}

impl OwnerReader for Shared {
    fn start(&self, parts: ReaderParts) {
        let Some(mut st) = self.lock() else {
            parts.abandon();
            return;
        };
        if st.closed {
            drop(st);
            parts.abandon();
            return;
        }
        st.pending = Some(parts);
        if let Some(wake) = &st.wake {
            wake.send();
        }
    }
}
