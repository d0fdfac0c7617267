//! cordon-launcher: run a program under Bubblewrap with an empty
//! environment, no network, a read-only workspace, a private temp and one
//! protocol channel on fd 3 — and account for it in a receipt.
//!
//! Pipeline (see launch.rs): validate → probe backend → control root →
//! plan (pure) → bwrap argv (pure) → spawn → pumps → reap → receipt.
//! No napi here: the addon crate maps this API to JavaScript.
//!
//! The folders follow the launch, each importing only those before it
//! (__test__/module-cycles.test.js checks it, and that no modules import
//! each other in a cycle):
//! `request/` (what the caller asked) → `host/` (host facts and files, ids)
//! → `plan/` (the pure plan and its confinement) → `run/` (spawn, pumps,
//! stop) → `observe/` (the running sandbox seen from outside) →
//! `receipt/` (the record and how `wait()` settles). `launch.rs` (the
//! caller's thread up to the fork) and `supervisor/` (the run's life)
//! drive them; `host_probe/` is `cordon doctor`'s view of the same checks.

pub mod error_code;
pub mod events;
pub mod host;
pub mod host_probe;
pub mod launch;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod live_support;
pub mod observe;
pub mod plan;
pub mod receipt;
pub mod request;
pub mod run;
pub mod supervisor;
// Compiled outside tests and public for the tests of a crate below this
// one (cordon-passed-fds, a dev-dependency cycle Cargo allows): one skip
// contract for the workspace.
#[doc(hidden)]
pub mod test_skip;

pub use error_code::ErrorCode;
pub use events::{Completion, Event, EventSink, LaunchFailure, Stream};
pub use launch::{launch, launch_reading, start, LaunchError};
pub use request::launch_request::{LaunchOptions, LaunchRequest};
pub use run::execution::{ExecutionHandle, WriteNow, WriteOutcome, WritePart, WRITE_QUEUE_DEPTH};
pub use run::owner_reader::{OwnerReader, ReadStep, ReaderParts, OWNER_READ_BYTES};
pub use run::stop_ladder::StopReason;
