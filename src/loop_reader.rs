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
//! Pulled (`pull`, what lib/isolated-execution.js asks for): a chunk is
//! not emitted as a `Data` event through the run's threadsafe function (a
//! queue hop, an `uv_async_send`, a loop turn and two copies per chunk)
//! but read by JS itself: the poll callback calls the consumer's function
//! straight from the loop (loop_callback.rs), which takes the chunk with
//! `read`: received straight into a Node `Buffer` (chunk_buffer.rs
//! `NodeChunk`), up to 256 KiB when the consumer takes it at once. A
//! consumer that is called and does not read stops the poll until its
//! next grant (never a spinning loop). The owner's reads stop once the
//! launcher's teardown reads (`ReaderParts::read_for_owner`), so a pulled
//! chunk never overtakes one still in the event queue, and `End` follows
//! through that queue.
//!
//! The reader ends at fd 3's end, or when the run settles (`Finished`
//! delivered) or its environment is torn down: then it abandons fd 3
//! (its queue drained, no `End`) and closes its handles; a worker's loop
//! must not be closed with them open.

use std::sync::{Arc, Mutex, MutexGuard};

use cordon_launcher::run::pumps::READ_CHUNK_BYTES;
use cordon_launcher::{OwnerReader, ReadStep, ReaderParts, OWNER_READ_BYTES};
use napi::bindgen_prelude::Buffer;
use napi::sys::{napi_value, uv_loop_s};
use napi::Env;

use crate::chunk_buffer::NodeChunk;
use crate::loop_callback::LoopCallback;
use crate::uv::{LoopCallbacks, Poll, Wake};
use crate::LoopEvent;

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
    /// Pulled (see the module's doc); for good once set.
    pulling: bool,
    /// Called when a wanted chunk waits (out of the state during its call).
    puller: Option<LoopCallback>,
    /// A pulled chunk was asked for since the last call (else the poll
    /// stops: a consumer that does not read must not spin the loop).
    pulled: bool,
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
                pulling: false,
                puller: None,
                pulled: false,
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
            // means a chunk may already wait: read it now (pulled: the poll
            // reports it, the puller reads it).
            if !st.poll.as_ref().is_some_and(Poll::watching) {
                if st.pulling {
                    let on = st.parts.is_some();
                    self.0.watch(&mut st, on);
                } else {
                    self.0.pump(&mut st);
                }
            }
        }
    }

    /// From now on chunks are pulled: `on_readable()` is called from the
    /// loop when one is wanted and waiting, and takes it with [`Self::read`]
    /// (JS thread, before the first chunk: right after the spawn).
    pub fn pull(&self, env: &Env, on_readable: napi_value) -> napi::Result<()> {
        let puller = LoopCallback::new(env, on_readable)?;
        match self.0.lock() {
            Some(mut st) if !st.closed && !st.pulling => {
                st.pulling = true;
                st.puller = Some(puller);
            }
            _ => puller.release(),
        }
        Ok(())
    }

    /// The pulled chunk, if one is wanted and waiting (JS thread): up to
    /// `OWNER_READ_BYTES` when `at_once` (the consumer takes it now), else
    /// one event chunk. Its credit is spent; the poll reports the next
    /// once granted.
    pub fn read(&self, env: &Env, at_once: bool) -> napi::Result<Option<Buffer>> {
        let limit = if at_once {
            OWNER_READ_BYTES
        } else {
            READ_CHUNK_BYTES
        };
        let Some(mut st) = self.0.lock() else {
            return Ok(None);
        };
        if !st.pulling {
            // Chunks are events: one taken here could overtake a queued one.
            return Ok(None);
        }
        st.pulled = true;
        for _ in 0..READS_PER_TURN {
            let Some(parts) = st.parts.as_ref() else {
                return Ok(None);
            };
            if !st.credit {
                self.0.watch(&mut st, false);
                return Ok(None);
            }
            let fresh = |len| NodeChunk::fresh(env, len);
            match parts.read_for_owner(limit, fresh, |bytes| NodeChunk::copy(env, bytes)) {
                Ok((chunk, n)) => {
                    st.credit = false;
                    self.0.watch(&mut st, true);
                    return chunk.finish(env, n).map(Some);
                }
                Err(ReadStep::Nothing) => {}
                Err(ReadStep::WouldBlock | ReadStep::Emitted) => {
                    self.0.watch(&mut st, true);
                    return Ok(None);
                }
                Err(ReadStep::Ended) => {
                    // fd 3's end (its `End` is queued behind this call), or
                    // the teardown reads the rest: nothing more here.
                    st.parts = None;
                    Shared::close(&mut st);
                    return Ok(None);
                }
            }
        }
        self.0.watch(&mut st, true);
        Ok(None)
    }

    /// Whether a write may keep what a full socket did not take and wait
    /// for [`Self::await_writable`] (pulled, with fd 3 polled here).
    pub fn keeps_rest(&self) -> bool {
        self.0
            .lock()
            .is_some_and(|st| st.pulling && st.poll.is_some() && !st.closed)
    }

    /// Tells the puller once when fd 3 is writable (`LoopEvent::Writable`).
    /// False when it cannot (the reader is closed): the caller queues the
    /// rest for the writer instead.
    pub fn await_writable(&self) -> bool {
        let Some(mut st) = self.0.lock() else {
            return false;
        };
        if st.closed || !st.pulling {
            return false;
        }
        st.poll
            .as_mut()
            .is_some_and(|poll| poll.watch_writable::<Shared>(true).is_ok())
    }

    /// The run settled (JS thread, during a call): stop reading and close
    /// the handles (see the module's last paragraph).
    pub fn settle(&self) {
        if let Some(puller) = self.settle_keeping_puller() {
            puller.release();
        }
    }

    /// As [`Self::settle`], from the environment's teardown: the puller's
    /// reference is left to the environment (no N-API call there).
    pub fn settle_at_teardown(&self) {
        if let Some(puller) = self.settle_keeping_puller() {
            puller.forget();
        }
    }

    fn settle_keeping_puller(&self) -> Option<LoopCallback> {
        let mut st = self.0.lock()?;
        if let Some(parts) = st.parts.take().or_else(|| st.pending.take()) {
            parts.abandon();
        }
        Shared::close(&mut st);
        st.puller.take()
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

impl Shared {
    /// Pulled: a chunk may wait. Calls the puller (outside the lock: it
    /// reads through `LoopReader::read`) when one is wanted; stops the poll
    /// when none is, or when the puller did not read (it must not spin).
    fn offer(&self) {
        let call = {
            let Some(mut st) = self.lock() else { return };
            if st.parts.is_none() {
                return;
            }
            if !st.credit {
                self.watch(&mut st, false);
                return;
            }
            st.pulled = false;
            st.puller.take()
        };
        let Some(puller) = call else { return };
        self.call_back(puller, LoopEvent::Readable, |this, st| {
            if !st.pulled {
                this.watch(st, false);
            }
        });
    }

    /// fd 3 is writable: tells the puller once (it writes the rest it
    /// kept, and asks again if the socket fills up again).
    fn offer_writable(&self) {
        let call = {
            let Some(mut st) = self.lock() else { return };
            let stopped = st
                .poll
                .as_mut()
                .map(|poll| poll.watch_writable::<Shared>(false));
            if let Some(Err(why)) = stopped {
                if let Some(parts) = st.parts.take() {
                    parts.fail(why);
                }
                Self::close(&mut st);
            }
            st.puller.take()
        };
        if let Some(puller) = call {
            self.call_back(puller, LoopEvent::Writable, |_, _| {});
        }
    }

    /// Calls `puller` with `event` outside the lock: its reference moves
    /// out for the call and back after (a settle during the call releases
    /// it then), and `after` sees the state the call left.
    fn call_back(
        &self,
        puller: LoopCallback,
        event: LoopEvent,
        after: impl FnOnce(&Self, &mut State),
    ) {
        puller.call(event as u32, LoopEvent::Thrown as u32);
        if let Some(mut st) = self.lock() {
            if st.closed {
                drop(st);
                puller.release();
                return;
            }
            st.puller = Some(puller);
            after(self, &mut st);
        }
    }
}

impl LoopCallbacks for Shared {
    fn stopped(this: &Arc<Self>) {
        if let Some(mut st) = this.lock() {
            if let Some(poll) = st.poll.as_mut() {
                poll.stopped_by_libuv();
            }
        }
    }

    fn writable(this: &Arc<Self>) {
        this.offer_writable();
    }

    fn readable(this: &Arc<Self>) {
        if let Some(mut st) = this.lock() {
            if !st.pulling {
                this.pump(&mut st);
                return;
            }
        }
        this.offer();
    }

    fn woken(this: &Arc<Self>) {
        if let Some(mut st) = this.lock() {
            this.adopt(&mut st);
            if !st.pulling {
                this.pump(&mut st);
            } else {
                let on = st.credit && st.parts.is_some();
                this.watch(&mut st, on);
            }
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
