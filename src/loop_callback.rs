//! A JavaScript function called straight from a libuv callback of its
//! environment's loop (the loop reader's poll: loop_reader.rs), as Node
//! calls an I/O callback: `napi_make_callback` enters the function's
//! context, and closing its callback scope runs `process.nextTick` and the
//! microtask queue before the loop goes on. No threadsafe-function queue:
//! the poll callback already runs on the JS thread.
//!
//! No V8 context is entered outside `napi_make_callback`, so nothing is
//! created here that needs one (a `Buffer` does): the function is called
//! with a number (what happened) only, and takes what it needs through the
//! addon's methods (which run inside the call's context).
//!
//! An exception thrown by the call (a `'data'` listener's, or one of the
//! ticks it queued) is caught by N-API, which cannot report it outside a
//! context: it is handed back to the same function (`f(thrown, error)`), which must
//! rethrow it from its own callback (lib/isolated-execution.js:
//! `setImmediate`), so it becomes an `uncaughtException` as from any I/O
//! callback.

use std::ptr;

use napi::sys;
use napi::Env;

/// A strong reference to one function, called on its environment's loop
/// thread only. Released with [`LoopCallback::release`] in a JS call
/// (never from a finalizer: the environment may be half torn down), or
/// forgotten ([`LoopCallback::forget`]).
pub struct LoopCallback {
    env: sys::napi_env,
    func: sys::napi_ref,
}

// SAFETY: the pointers are used only on the environment's thread (the loop
// reader keeps this in its locked state and calls it from its loop
// callbacks and from JS calls, all on that thread).
unsafe impl Send for LoopCallback {}

impl LoopCallback {
    /// On the JS thread, during a call.
    pub fn new(env: &Env, func: sys::napi_value) -> napi::Result<LoopCallback> {
        let mut reference = ptr::null_mut();
        // SAFETY: a live env and a value of the current call.
        let status = unsafe { sys::napi_create_reference(env.raw(), func, 1, &mut reference) };
        if status != sys::Status::napi_ok {
            return Err(napi::Error::from_reason(format!(
                "napi_create_reference failed ({status})"
            )));
        }
        Ok(LoopCallback {
            env: env.raw(),
            func: reference,
        })
    }

    /// Calls `f(event)` from a libuv callback (no JS on the stack); what it
    /// throws is handed back as `f(thrown, error)`. Returns whether the
    /// call ran; `false` also when the environment can no longer run
    /// JavaScript (a terminating worker).
    pub fn call(&self, event: u32, thrown: u32) -> bool {
        let env = self.env;
        let mut scope = ptr::null_mut();
        // SAFETY: on the env's thread with no scope open (a loop callback);
        // the scope is closed below on every path.
        if unsafe { sys::napi_open_handle_scope(env, &mut scope) } != sys::Status::napi_ok {
            return false;
        }
        let ran = self.make_callback(event, None);
        if !ran {
            // Whether something was thrown, asked before it is cleared: the
            // value itself may be `undefined` (`throw undefined` was taken
            // for "nothing thrown" and swallowed: round 15r, R15r-4).
            let mut pending = false;
            // SAFETY: inside the handle scope.
            let asked = unsafe { sys::napi_is_exception_pending(env, &mut pending) };
            let mut error = ptr::null_mut();
            // SAFETY: inside the handle scope; clears what the call threw.
            let caught = unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
            let thrown_here = asked == sys::Status::napi_ok
                && pending
                && caught == sys::Status::napi_ok
                && !error.is_null();
            if thrown_here && !self.make_callback(thrown, Some(error)) {
                // The rethrow itself failed: nothing more can report it.
                // SAFETY: as above.
                unsafe { sys::napi_get_and_clear_last_exception(env, &mut error) };
            }
        }
        // SAFETY: the scope opened above.
        unsafe { sys::napi_close_handle_scope(env, scope) };
        ran
    }

    /// `f(event)` or `f(event, error)` through `napi_make_callback` (inside
    /// a handle scope; a number needs no V8 context to be made).
    fn make_callback(&self, event: u32, error: Option<sys::napi_value>) -> bool {
        let env = self.env;
        let mut func = ptr::null_mut();
        let mut global = ptr::null_mut();
        let mut kind = ptr::null_mut();
        // SAFETY: a live reference of this env; values of the open scope.
        unsafe {
            if sys::napi_get_reference_value(env, self.func, &mut func) != sys::Status::napi_ok
                || func.is_null()
                || sys::napi_get_global(env, &mut global) != sys::Status::napi_ok
                || sys::napi_create_uint32(env, event, &mut kind) != sys::Status::napi_ok
            {
                return false;
            }
        }
        let mut args = vec![kind];
        args.extend(error);
        let mut result = ptr::null_mut();
        // SAFETY: as above; a null async context is N-API's empty one.
        let status = unsafe {
            sys::napi_make_callback(
                env,
                ptr::null_mut(),
                global,
                func,
                args.len(),
                args.as_ptr(),
                &mut result,
            )
        };
        status == sys::Status::napi_ok
    }

    /// Deletes the reference (JS thread, during a call).
    pub fn release(self) {
        // SAFETY: a reference of this env, deleted once (self is consumed).
        unsafe { sys::napi_delete_reference(self.env, self.func) };
    }

    /// Leaves the reference to the environment being torn down (its
    /// finalizer must not call N-API on it).
    pub fn forget(self) {}
}
