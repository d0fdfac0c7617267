//! Turns a chunk read by a pump thread into a Node `Buffer` whose bytes V8's
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

use napi::bindgen_prelude::{Buffer, BufferSlice, JsObjectValue};
use napi::Env;

/// Copies `bytes` into a Node-allocated `Buffer` (V8 accounts for it, and
/// the Rust chunk is freed at once) and reports its length as extra external
/// memory until the `Buffer` is collected.
pub fn chunk_buffer(env: &Env, bytes: Vec<u8>) -> napi::Result<Buffer> {
    let len = i64::try_from(bytes.len()).unwrap_or(i64::MAX);
    let mut slice = BufferSlice::copy_from(env, bytes)?;
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
