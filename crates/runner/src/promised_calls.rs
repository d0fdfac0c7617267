//! Bookkeeping of the concurrent-calls extension: the calls outstanding on
//! the wire (at most K, by slot) and the FIFO of admitted calls waiting for a
//! free slot. Each call keeps its promise's resolve/reject functions. A call
//! is a tool call or, with the fetch extension, a `fetch.request`: both
//! share the K slots, because both replies share the reader queue of 8.
//!
//! A call abandoned by the terminal frame (the code returned, a latch
//! fired) is simply never settled: the process ends right after. Its
//! persistent handles are never dropped either (the session forgets the
//! world at exit): QuickJS aborts when a runtime is freed while a
//! persistent handle still holds one of its objects.

use std::cell::RefCell;
use std::collections::VecDeque;

use rquickjs::{Ctx, Function, Persistent, Value};
use serde_json::Value as Json;

/// Which reply settles an outstanding call: tool calls and fetches have
/// their own id sequences (`tool.call` ids stay 1, 2, 3, … as in v1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Tool(u64),
    Fetch(u64),
}

/// What an admitted call sends.
pub enum Wire {
    /// A `tool.call`; its id is assigned when the frame is written.
    Tool { name: String, arguments: Json },
    /// A `fetch.request`; its id was assigned at admission (an abort can
    /// name a fetch that is still queued).
    Fetch { id: u64, request: Json },
}

/// One admitted call: what its frame carries and how to settle it.
pub struct Call {
    wire: Wire,
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

impl Call {
    pub fn new<'js>(
        ctx: &Ctx<'js>,
        wire: Wire,
        resolve: Function<'js>,
        reject: Function<'js>,
    ) -> Self {
        Call {
            wire,
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        }
    }

    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    pub fn resolve<'js>(self, ctx: &Ctx<'js>, value: Value<'js>) -> rquickjs::Result<()> {
        self.resolve.restore(ctx)?.call((value,))
    }

    pub fn reject<'js>(self, ctx: &Ctx<'js>, reason: Value<'js>) -> rquickjs::Result<()> {
        self.reject.restore(ctx)?.call((reason,))
    }
}

pub struct PromisedCalls {
    max_outstanding: usize,
    /// Calls on the wire, in wire order.
    outstanding: RefCell<Vec<(Slot, Call)>>,
    /// Admitted calls waiting for a slot, oldest first.
    queued: RefCell<VecDeque<Call>>,
}

impl PromisedCalls {
    pub fn new(max_outstanding: u64) -> Self {
        PromisedCalls {
            max_outstanding: usize::try_from(max_outstanding).unwrap_or(usize::MAX),
            outstanding: RefCell::default(),
            queued: RefCell::default(),
        }
    }

    /// Whether one more call may go on the wire now.
    pub fn has_room(&self) -> bool {
        self.outstanding.borrow().len() < self.max_outstanding
    }

    pub fn has_outstanding(&self) -> bool {
        !self.outstanding.borrow().is_empty()
    }

    pub fn is_outstanding(&self, slot: Slot) -> bool {
        self.outstanding
            .borrow()
            .iter()
            .any(|(each, _)| *each == slot)
    }

    pub fn record_outstanding(&self, slot: Slot, call: Call) {
        self.outstanding.borrow_mut().push((slot, call));
    }

    pub fn take_outstanding(&self, slot: Slot) -> Option<Call> {
        let mut outstanding = self.outstanding.borrow_mut();
        let index = outstanding.iter().position(|(each, _)| *each == slot)?;
        Some(outstanding.remove(index).1)
    }

    /// Removes queued fetch `id` (aborted before it was sent).
    pub fn take_queued_fetch(&self, id: u64) -> Option<Call> {
        let mut queued = self.queued.borrow_mut();
        let index = queued
            .iter()
            .position(|call| matches!(call.wire, Wire::Fetch { id: each, .. } if each == id))?;
        queued.remove(index)
    }

    pub fn enqueue(&self, call: Call) {
        self.queued.borrow_mut().push_back(call);
    }

    pub fn dequeue(&self) -> Option<Call> {
        self.queued.borrow_mut().pop_front()
    }
}
