//! Bookkeeping of the concurrent-calls extension: the calls outstanding on
//! the wire (at most K, by id) and the FIFO of admitted calls waiting for a
//! free slot. Each call keeps its promise's resolve/reject functions.
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

/// One admitted call: what its frame carries and how to settle it.
pub struct Call {
    name: String,
    arguments: Json,
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

impl Call {
    pub fn new<'js>(
        ctx: &Ctx<'js>,
        name: String,
        arguments: Json,
        resolve: Function<'js>,
        reject: Function<'js>,
    ) -> Self {
        Call {
            name,
            arguments,
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn arguments(&self) -> &Json {
        &self.arguments
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
    /// Calls on the wire, in id order.
    outstanding: RefCell<Vec<(u64, Call)>>,
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

    pub fn is_outstanding(&self, id: u64) -> bool {
        self.outstanding
            .borrow()
            .iter()
            .any(|(each, _)| *each == id)
    }

    pub fn record_outstanding(&self, id: u64, call: Call) {
        self.outstanding.borrow_mut().push((id, call));
    }

    pub fn take_outstanding(&self, id: u64) -> Option<Call> {
        let mut outstanding = self.outstanding.borrow_mut();
        let index = outstanding.iter().position(|(each, _)| *each == id)?;
        Some(outstanding.remove(index).1)
    }

    pub fn enqueue(&self, call: Call) {
        self.queued.borrow_mut().push_back(call);
    }

    pub fn dequeue(&self) -> Option<Call> {
        self.queued.borrow_mut().pop_front()
    }
}
