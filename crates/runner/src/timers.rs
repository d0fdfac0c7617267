//! Timers and cancellation (the `timers` extension, docs/runner.md):
//! `setTimeout`/`setInterval`/`setImmediate` and their `clear*`,
//! `AbortController`/`AbortSignal`, `Event`/`EventTarget`.
//!
//! The JavaScript half (`timers.js`) keeps each timer's callback, arguments
//! and `Timeout` object; this half keeps only the schedule: which timer id
//! is due when, in (due time, scheduling order) — the order Node runs
//! timers in. The evaluation loop ([`crate::evaluation`]) asks for the
//! next due time, sleeps until then (bounded by the deadline, woken by
//! cancel) and fires one due timer at a time, running every QuickJS job
//! between two timers, as Node drains microtasks between callbacks.
//!
//! Bounds: at most `maxLive` timers are scheduled at once; one more is a
//! catchable `RangeError` that names the limit. An error thrown by a timer
//! callback or an event listener is uncaught, as in Node: the run ends
//! with it ([`Timers::take_uncaught`]).

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::context::EvalOptions;
use rquickjs::object::{Accessor, Property};
use rquickjs::{Ctx, Exception, Function, Object, Persistent, Value};

use crate::js_errors::describe;

const SCRIPT: &str = include_str!("timers.js");

/// The globals `timers.js` defines.
const GLOBAL_NAMES: [&str; 10] = [
    "setTimeout",
    "setInterval",
    "setImmediate",
    "clearTimeout",
    "clearInterval",
    "clearImmediate",
    "Event",
    "EventTarget",
    "AbortSignal",
    "AbortController",
];

/// Most live timers a host may ask for (`timers.maxLive`): each costs a
/// map entry here and a closure in JavaScript, a few hundred bytes.
pub const MAX_LIVE_CEILING: u64 = 100_000;

/// Node's ceiling for a delay (a 32-bit signed millisecond count); the
/// script turns anything outside 1..=this into 1 before it gets here.
const MAX_DELAY_MS: f64 = 2_147_483_647.0;

/// One scheduled timer: where it sits in the queue, and whether it keeps
/// the run waiting (`unref()` clears that, as in Node).
struct Entry {
    key: (Instant, u64),
    refed: bool,
}

pub struct Timers {
    max_live: usize,
    next_seq: Cell<u64>,
    /// (due, scheduling order) → timer id.
    queue: RefCell<BTreeMap<(Instant, u64), u64>>,
    by_id: RefCell<HashMap<u64, Entry>>,
    /// The script's `fire(id)`.
    fire: RefCell<Option<Persistent<Function<'static>>>>,
    /// The first error a callback or listener threw, as text.
    uncaught: RefCell<Option<String>>,
}

impl Timers {
    pub fn new(max_live: u64) -> Self {
        Timers {
            max_live: usize::try_from(max_live).unwrap_or(usize::MAX),
            next_seq: Cell::new(0),
            queue: RefCell::default(),
            by_id: RefCell::default(),
            fire: RefCell::new(None),
            uncaught: RefCell::new(None),
        }
    }

    /// Announces the globals of `timers.js` (accessors): compiling the
    /// script costs ~1.5 ms, so it runs on the first read of any of them
    /// and replaces every accessor by its value. An assignment before that
    /// defines the name as the code wants.
    pub fn install<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        for name in GLOBAL_NAMES {
            let this = Rc::clone(self);
            let get = move |ctx: Ctx<'js>| -> rquickjs::Result<Value<'js>> {
                if this.fire.borrow().is_none() {
                    this.build(&ctx)?;
                }
                // The script defined every announced name as a data property.
                ctx.globals().get(name)
            };
            let set = move |ctx: Ctx<'js>, value: Value<'js>| -> rquickjs::Result<()> {
                ctx.globals()
                    .prop(name, Property::from(value).writable().configurable())
            };
            ctx.globals()
                .prop(name, Accessor::new(get, set).configurable())?;
        }
        Ok(())
    }

    /// Runs `timers.js` with this schedule behind it.
    fn build<'js>(self: &Rc<Self>, ctx: &Ctx<'js>) -> rquickjs::Result<()> {
        let native = Object::new(ctx.clone())?;
        let this = Rc::clone(self);
        native.prop(
            "schedule",
            Function::new(ctx.clone(), move |ctx, id, delay| {
                this.schedule(&ctx, id, delay)
            })?,
        )?;
        let this = Rc::clone(self);
        native.prop(
            "cancel",
            Function::new(ctx.clone(), move |id: u64| this.cancel(id))?,
        )?;
        let this = Rc::clone(self);
        native.prop(
            "setRef",
            Function::new(ctx.clone(), move |id: u64, refed: bool| {
                if let Some(entry) = this.by_id.borrow_mut().get_mut(&id) {
                    entry.refed = refed;
                }
            })?,
        )?;
        let this = Rc::clone(self);
        native.prop(
            "reportError",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, error: Value<'js>| {
                this.report(&ctx, &error);
            })?,
        )?;
        let mut options = EvalOptions::default();
        options.strict = true;
        options.filename = Some("<timers>".to_owned());
        let script: Function = ctx.eval_with_options(SCRIPT, options)?;
        let fire: Function = script.call((native,))?;
        *self.fire.borrow_mut() = Some(Persistent::save(ctx, fire));
        Ok(())
    }

    /// Puts timer `id` in the queue `delay_ms` from now (moving it if it
    /// was queued: an interval's next run, `refresh()`).
    fn schedule(&self, ctx: &Ctx<'_>, id: u64, delay_ms: f64) -> rquickjs::Result<()> {
        let mut by_id = self.by_id.borrow_mut();
        let refed = match by_id.remove(&id) {
            Some(entry) => {
                self.queue.borrow_mut().remove(&entry.key);
                entry.refed
            }
            None if by_id.len() >= self.max_live => {
                return Err(Exception::throw_range(
                    ctx,
                    &format!(
                        "too many live timers: at most {} may be pending at once (the timers limit); \
                         clear timers you no longer need with clearTimeout/clearInterval",
                        self.max_live
                    ),
                ));
            }
            None => true,
        };
        let delay = Duration::from_secs_f64(delay_ms.clamp(0.0, MAX_DELAY_MS) / 1000.0);
        let seq = self.next_seq.get();
        self.next_seq.set(seq + 1);
        // A delay beyond the clock (never, in practice) waits "forever":
        // the deadline ends the run first.
        let now = Instant::now();
        let due = now
            .checked_add(delay)
            .unwrap_or(now + Duration::from_secs(1 << 32));
        let key = (due, seq);
        self.queue.borrow_mut().insert(key, id);
        by_id.insert(id, Entry { key, refed });
        Ok(())
    }

    fn cancel(&self, id: u64) {
        if let Some(entry) = self.by_id.borrow_mut().remove(&id) {
            self.queue.borrow_mut().remove(&entry.key);
        }
    }

    fn report<'js>(&self, ctx: &Ctx<'js>, error: &Value<'js>) {
        let mut uncaught = self.uncaught.borrow_mut();
        if uncaught.is_none() {
            *uncaught = Some(format!("Uncaught {}", describe(ctx, error)));
        }
    }

    /// When the earliest timer is due, `unref()`'d ones included: while a
    /// call or fetch is outstanding the run is alive anyway, and Node fires
    /// an unref'd timer (`AbortSignal.timeout`) whenever its loop is alive.
    pub fn next_scheduled(&self) -> Option<Instant> {
        self.queue.borrow().keys().next().map(|(due, _)| *due)
    }

    /// When the earliest timer is due, if some scheduled timer keeps the
    /// run waiting (an `unref()`'d timer alone does not, as in Node).
    pub fn next_due(&self) -> Option<Instant> {
        if !self.by_id.borrow().values().any(|entry| entry.refed) {
            return None;
        }
        self.queue.borrow().keys().next().map(|(due, _)| *due)
    }

    /// Runs the callback of the earliest timer if it is due. Returns
    /// whether one ran. An interrupt (a latch) ends the callback; the
    /// latch then decides the outcome.
    pub fn fire_due(&self, ctx: &Ctx<'_>) -> bool {
        let id = {
            let mut queue = self.queue.borrow_mut();
            match queue.first_key_value() {
                Some((key, _)) if key.0 <= Instant::now() => {
                    let key = *key;
                    queue.remove(&key)
                }
                _ => None,
            }
        };
        let Some(id) = id else { return false };
        self.by_id.borrow_mut().remove(&id);
        let fire = self
            .fire
            .borrow()
            .as_ref()
            .map(|fire| fire.clone().restore(ctx));
        if let Some(Ok(fire)) = fire {
            if let Err(rquickjs::Error::Exception) = fire.call::<_, ()>((id,)) {
                let thrown = ctx.catch();
                self.report(ctx, &thrown);
            }
        }
        true
    }

    /// The first uncaught error of a callback or listener, once.
    pub fn take_uncaught(&self) -> Option<String> {
        self.uncaught.borrow_mut().take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rquickjs::{Context, Runtime};

    fn with_timers(max_live: u64, f: impl FnOnce(&Ctx<'_>, &Rc<Timers>)) {
        let runtime = Runtime::new().expect("runtime");
        let context = Context::full(&runtime).expect("context");
        let timers = Rc::new(Timers::new(max_live));
        context.with(|ctx| {
            timers.install(&ctx).expect("installed");
            f(&ctx, &timers);
        });
        std::mem::forget(timers);
        std::mem::forget(context);
        std::mem::forget(runtime);
    }

    #[test]
    fn equal_delays_fire_in_scheduling_order_and_a_cleared_timer_never_fires() {
        with_timers(8, |ctx, timers| {
            ctx.eval::<(), _>(
                "globalThis.seen = []; setTimeout(() => seen.push('a'), 0);
                 const b = setTimeout(() => seen.push('b'), 0);
                 setTimeout(() => seen.push('c'), 0); clearTimeout(b);",
            )
            .expect("scheduled");
            std::thread::sleep(Duration::from_millis(2));
            while timers.fire_due(ctx) {}
            let seen: String = ctx.eval("seen.join()").expect("seen");
            assert_eq!(seen, "a,c");
            assert!(timers.next_due().is_none());
        });
    }

    #[test]
    fn one_timer_past_the_live_limit_is_a_range_error_naming_it() {
        with_timers(2, |ctx, _| {
            let message: String = ctx
                .eval(
                    "setTimeout(() => {}, 10); setTimeout(() => {}, 10);
                     try { setTimeout(() => {}, 10); 'none' } catch (e) { e.name + ': ' + e.message }",
                )
                .expect("evaluated");
            assert!(
                message.starts_with("RangeError: too many live timers: at most 2"),
                "{message}"
            );
        });
    }

    #[test]
    fn an_unrefed_timer_alone_does_not_keep_the_run_waiting() {
        with_timers(8, |ctx, timers| {
            ctx.eval::<(), _>("setTimeout(() => {}, 5).unref()")
                .expect("scheduled");
            assert!(timers.next_due().is_none());
            ctx.eval::<(), _>("setTimeout(() => {}, 50)")
                .expect("scheduled");
            assert!(timers.next_due().is_some());
        });
    }
}
