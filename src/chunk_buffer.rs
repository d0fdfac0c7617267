//! Turns a chunk read by a pump thread (or pulled by JS: loop_reader.rs) into a Node `Buffer` whose bytes V8's
//! garbage collector is told about twice, so a flood of short-lived chunks is
//! collected at the pace the documented per-stream bound needs, on every
//! supported Node.
//!
//! Why: a stream hands every chunk to its consumer as a fresh `Buffer`; once
//! read, the chunk is garbage that only a GC frees. V8 collects such
//! ArrayBuffer garbage when either (1) young backing-store bytes reach twice
//! the default semi-space, or (2) external memory grows 64 MiB past its last
//! baseline. V8 13.6 (Node 24) raised the default new-space capacity from 8 to
//! 32 MB, moving trigger (1) from 32 MiB to 128 MiB, so up to ~64 MiB of read
//! chunks piled up before trigger (2) fired (Node's own pipes show the same:
//! nodejs/node#61967). Reporting each chunk's bytes once more through
//! `napi_adjust_external_memory` while the chunk is alive makes trigger (2)
//! fire after ~32 MiB of chunks, as trigger (1) did before Node 24; the
//! finalizer takes the bytes back, so the accounting never drifts.

use napi::bindgen_prelude::{Buffer, BufferSlice, FromNapiValue, JsObjectValue};
use napi::{sys, Env};

/// Copies `bytes` into a Node-allocated `Buffer` (V8 accounts for it; the
/// reader's buffer is the caller's to reuse or free) and reports its length
/// as extra external memory until the `Buffer` is collected.
pub fn chunk_buffer(env: &Env, bytes: &[u8]) -> napi::Result<Buffer> {
    accounted(env, BufferSlice::copy_from(env, bytes)?)
}

/// Reports `slice`'s length as extra external memory until it is collected.
fn accounted(env: &Env, mut slice: BufferSlice<'_>) -> napi::Result<Buffer> {
    let len = i64::try_from(slice.len()).unwrap_or(i64::MAX);
    env.adjust_external_memory(len)?;
    if let Err(e) = slice.add_finalizer((), len, |ctx| {
        // Runs once, when V8 collected the Buffer: the bytes are free again.
        let _ = ctx.env.adjust_external_memory(-ctx.hint);
    }) {
        let _ = env.adjust_external_memory(-len);
        return Err(e);
    }
    slice.into_buffer(env)
}

/// A pulled chunk's Node `Buffer` while fd 3 is read into it
/// (loop_reader.rs): a fresh one the bytes are received into (no copy), or
/// a copy of what the reused read buffer holds.
pub struct NodeChunk<'env>(napi::Result<BufferSlice<'env>>);

impl<'env> NodeChunk<'env> {
    /// A Node-allocated `Buffer` of `len` bytes to receive into (its memory
    /// not initialised: the read overwrites what the chunk keeps); `None`
    /// when none could be made (the read copies instead).
    pub fn fresh(env: &'env Env, len: usize) -> Option<NodeChunk<'env>> {
        let mut data = std::ptr::null_mut();
        let mut value = std::ptr::null_mut();
        // SAFETY: a live env during a JS call; both out-pointers are valid.
        let status = unsafe { sys::napi_create_buffer(env.raw(), len, &mut data, &mut value) };
        if status != sys::Status::napi_ok {
            return None;
        }
        // SAFETY: `value` is the Buffer just made, alive in the call's scope.
        unsafe { BufferSlice::from_napi_value(env.raw(), value) }
            .ok()
            .filter(|slice| slice.len() == len)
            .map(|slice| NodeChunk(Ok(slice)))
    }

    /// A copy of `bytes`.
    pub fn copy(env: &'env Env, bytes: &[u8]) -> NodeChunk<'env> {
        NodeChunk(BufferSlice::copy_from(env, bytes))
    }

    /// The `Buffer` of the chunk's first `n` bytes (a fresh chunk the read
    /// did not fill is copied to its length), accounted as `chunk_buffer`'s.
    pub fn finish(self, env: &Env, n: usize) -> napi::Result<Buffer> {
        let slice = self.0?;
        if n < slice.len() {
            return chunk_buffer(env, &slice[..n]);
        }
        accounted(env, slice)
    }
}

impl AsMut<[u8]> for NodeChunk<'_> {
    fn as_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            Ok(slice) => slice,
            // Only a copy can have failed, and a copy is never read into.
            Err(_) => &mut [],
        }
    }
}
