//! The few libuv calls the loop reader needs (loop_reader.rs), on the loop
//! of the Node environment that spawned the run. Node exports libuv's
//! symbols to addons (node-gyp addons link against them); this cdylib
//! resolves them when Node loads it, like the napi symbols.
//!
//! A handle is heap memory of libuv's own size for its type
//! (`uv_handle_size`), so no struct layout is restated here; its context
//! goes through `uv_handle_set_data`/`get_data`. Every call is made on the
//! loop's thread, except [`Wake::send`] (`uv_async_send`, which libuv
//! documents as callable from any thread). A handle's memory is freed only
//! by its close callback: libuv may touch it until then.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use napi::sys::uv_loop_s;

/// uv.h `uv_handle_type`: `UV_UNKNOWN_HANDLE = 0`, then the handle map in
/// order (ASYNC, CHECK, FS_EVENT, FS_POLL, HANDLE, IDLE, NAMED_PIPE, POLL).
const UV_ASYNC: c_int = 1;
const UV_POLL: c_int = 8;
/// uv.h `enum uv_poll_event`.
const UV_READABLE: c_int = 1;
const UV_WRITABLE: c_int = 2;

type PollCb = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type AsyncCb = unsafe extern "C" fn(*mut c_void);
type CloseCb = unsafe extern "C" fn(*mut c_void);

extern "C" {
    fn uv_handle_size(kind: c_int) -> usize;
    fn uv_handle_get_type(handle: *const c_void) -> c_int;
    fn uv_handle_set_data(handle: *mut c_void, data: *mut c_void);
    fn uv_handle_get_data(handle: *const c_void) -> *mut c_void;
    fn uv_unref(handle: *mut c_void);
    fn uv_close(handle: *mut c_void, cb: CloseCb);
    fn uv_poll_init(event_loop: *mut uv_loop_s, handle: *mut c_void, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut c_void, events: c_int, cb: PollCb) -> c_int;
    fn uv_poll_stop(handle: *mut c_void) -> c_int;
    fn uv_async_init(event_loop: *mut uv_loop_s, handle: *mut c_void, cb: AsyncCb) -> c_int;
    fn uv_async_send(handle: *mut c_void) -> c_int;
}

/// What a handle's callbacks are given: the context they were created
/// with. Implemented by the loop reader.
pub trait LoopCallbacks: Send + Sync + 'static {
    /// The poll reported an error (POLLERR, e.g. a peer that closed with
    /// our bytes unread), on which libuv stops the handle itself before
    /// calling back: [`Poll::stopped_by_libuv`] must be called, or a later
    /// [`Poll::watch`] would not start it again (round 15r, R15r-2). Called
    /// before `writable` and `readable`, which both follow (their next
    /// call meets the error, or what is still queued).
    fn stopped(this: &Arc<Self>);
    /// The polled descriptor is readable (or in error: see `stopped`).
    fn readable(this: &Arc<Self>);
    /// The polled descriptor is writable (or in error: the next write
    /// reports it), while writability is watched.
    fn writable(this: &Arc<Self>);
    /// A [`Wake::send`] arrived (any number of sends, one call).
    fn woken(this: &Arc<Self>);
}

fn layout(kind: c_int) -> Option<Layout> {
    // SAFETY: a pure function of a valid handle type.
    let size = unsafe { uv_handle_size(kind) };
    Layout::from_size_align(size, 16)
        .ok()
        .filter(|l| l.size() > 0)
}

/// Memory for one handle of `kind`, its data set to a strong reference to
/// `ctx` (released by [`on_closed`]). Null when the allocation failed.
fn allocate<T: LoopCallbacks>(kind: c_int, ctx: &Arc<T>) -> *mut c_void {
    let Some(layout) = layout(kind) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a non-zero size; zeroed memory is what libuv's init expects
    // to overwrite (it reads nothing before initialising).
    let handle = unsafe { alloc_zeroed(layout) }.cast::<c_void>();
    if !handle.is_null() {
        // SAFETY: `handle` is a live allocation of the handle's size.
        unsafe { uv_handle_set_data(handle, Arc::into_raw(Arc::clone(ctx)) as *mut c_void) };
    }
    handle
}

/// Frees a handle that libuv never took (its init failed).
fn free_unused<T: LoopCallbacks>(kind: c_int, handle: *mut c_void) {
    // SAFETY: `handle` came from `allocate::<T>(kind, …)` and libuv does
    // not know it: its data is our strong reference, its memory ours.
    unsafe {
        drop(Arc::from_raw(uv_handle_get_data(handle) as *const T));
        if let Some(layout) = layout(kind) {
            dealloc(handle.cast(), layout);
        }
    }
}

/// libuv is done with the handle: its context reference and memory go.
unsafe extern "C" fn on_closed<T: LoopCallbacks>(handle: *mut c_void) {
    // SAFETY: called once by libuv for a handle made by `allocate::<T>`;
    // nothing touches it after this.
    unsafe {
        let kind = uv_handle_get_type(handle);
        drop(Arc::from_raw(uv_handle_get_data(handle) as *const T));
        if let Some(layout) = layout(kind) {
            dealloc(handle.cast(), layout);
        }
    }
}

/// The context of a handle, lent for one callback: the handle's own strong
/// reference, never released here (ManuallyDrop).
///
/// SAFETY (callers): `handle` is live and was made by `allocate::<T>`.
unsafe fn context<T: LoopCallbacks>(handle: *mut c_void) -> std::mem::ManuallyDrop<Arc<T>> {
    // SAFETY: the data is the strong reference `allocate` stored; wrapped
    // in ManuallyDrop it is lent, and only `on_closed` releases it.
    unsafe { std::mem::ManuallyDrop::new(Arc::from_raw(uv_handle_get_data(handle) as *const T)) }
}

unsafe extern "C" fn on_ready<T: LoopCallbacks>(handle: *mut c_void, status: c_int, events: c_int) {
    // SAFETY: libuv calls this only for a live poll handle of ours.
    let ctx = unsafe { context::<T>(handle) };
    // On an error (status < 0) libuv stopped the handle, and both sides
    // are told: their next call meets it.
    if status < 0 {
        T::stopped(&ctx);
    }
    if status < 0 || events & UV_WRITABLE != 0 {
        T::writable(&ctx);
    }
    if status < 0 || events & UV_READABLE != 0 {
        T::readable(&ctx);
    }
}

unsafe extern "C" fn on_woken<T: LoopCallbacks>(handle: *mut c_void) {
    // SAFETY: libuv calls this only for a live async handle of ours.
    let ctx = unsafe { context::<T>(handle) };
    T::woken(&ctx);
}

/// A poll handle on one descriptor, unref'd (it never keeps Node alive by
/// itself: the run's event function does while it is held). Loop thread only.
pub struct Poll {
    handle: *mut c_void,
    /// The events being watched (0: stopped).
    events: c_int,
}

impl Poll {
    /// Watches `fd` (nothing is reported before [`Poll::watch`]).
    pub fn new<T: LoopCallbacks>(
        event_loop: *mut uv_loop_s,
        fd: c_int,
        ctx: &Arc<T>,
    ) -> Result<Poll, String> {
        let handle = allocate(UV_POLL, ctx);
        if handle.is_null() {
            return Err("no memory for a poll handle".into());
        }
        // SAFETY: a fresh handle of the poll size on this thread's loop.
        let rc = unsafe { uv_poll_init(event_loop, handle, fd) };
        if rc != 0 {
            free_unused::<T>(UV_POLL, handle);
            return Err(format!("uv_poll_init failed ({rc})"));
        }
        // SAFETY: initialised above.
        unsafe { uv_unref(handle) };
        Ok(Poll { handle, events: 0 })
    }

    /// Whether readability is being reported.
    pub fn watching(&self) -> bool {
        self.events & UV_READABLE != 0
    }

    /// libuv stopped the handle on an error (see [`LoopCallbacks::stopped`]).
    pub fn stopped_by_libuv(&mut self) {
        self.events = 0;
    }

    /// Reports readability to `T::readable` while `on`, else nothing.
    pub fn watch<T: LoopCallbacks>(&mut self, on: bool) -> Result<(), String> {
        self.set::<T>(UV_READABLE, on)
    }

    /// Reports writability to `T::writable` while `on`, else nothing.
    pub fn watch_writable<T: LoopCallbacks>(&mut self, on: bool) -> Result<(), String> {
        self.set::<T>(UV_WRITABLE, on)
    }

    fn set<T: LoopCallbacks>(&mut self, event: c_int, on: bool) -> Result<(), String> {
        let events = if on {
            self.events | event
        } else {
            self.events & !event
        };
        if events == self.events {
            return Ok(());
        }
        // SAFETY: a live, initialised poll handle of ours; starting an
        // active handle again changes the events it watches.
        let rc = unsafe {
            if events == 0 {
                uv_poll_stop(self.handle)
            } else {
                uv_poll_start(self.handle, events, on_ready::<T>)
            }
        };
        if rc != 0 {
            return Err(format!(
                "uv_poll_{} failed ({rc})",
                if events == 0 { "stop" } else { "start" }
            ));
        }
        self.events = events;
        Ok(())
    }

    /// Stops and closes the handle (its fd may be closed after this call).
    pub fn close<T: LoopCallbacks>(self) {
        // SAFETY: a live handle, closed once (self is consumed); uv_close
        // stops the watcher and forgets the fd at once.
        unsafe { uv_close(self.handle, on_closed::<T>) };
    }
}

/// An async handle: the one way another thread wakes the loop reader.
pub struct Wake {
    handle: *mut c_void,
}

impl Wake {
    /// Loop thread only. Unref'd like [`Poll`].
    pub fn new<T: LoopCallbacks>(event_loop: *mut uv_loop_s, ctx: &Arc<T>) -> Result<Wake, String> {
        let handle = allocate(UV_ASYNC, ctx);
        if handle.is_null() {
            return Err("no memory for an async handle".into());
        }
        // SAFETY: a fresh handle of the async size on this thread's loop.
        let rc = unsafe { uv_async_init(event_loop, handle, on_woken::<T>) };
        if rc != 0 {
            free_unused::<T>(UV_ASYNC, handle);
            return Err(format!("uv_async_init failed ({rc})"));
        }
        // SAFETY: initialised above.
        unsafe { uv_unref(handle) };
        Ok(Wake { handle })
    }

    /// Any thread, only before [`Wake::close`] (the loop reader holds its
    /// state's lock for both and checks that it is not closed).
    pub fn send(&self) {
        // SAFETY: a live async handle; uv_async_send is thread-safe.
        unsafe { uv_async_send(self.handle) };
    }

    /// Loop thread only, once.
    pub fn close<T: LoopCallbacks>(&self) {
        // SAFETY: a live handle; the caller closes it once.
        unsafe { uv_close(self.handle, on_closed::<T>) };
    }
}

// SAFETY: the handle pointer is only used as the methods above say: send()
// from any thread (thread-safe in libuv), everything else on the loop's
// thread; the loop reader serialises send() against close() with its lock.
unsafe impl Send for Wake {}
// SAFETY: as above: `send` is the one method used through a shared
// reference from other threads.
unsafe impl Sync for Wake {}
// SAFETY: a Poll is kept in the loop reader's locked state and used only on
// the loop's thread (its callbacks and the JS thread's calls).
unsafe impl Send for Poll {}
