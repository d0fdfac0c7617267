//! cordon-launcher: run a program under Bubblewrap with an empty
//! environment, no network, a read-only workspace, a private temp and one
//! protocol channel on fd 3 — and account for it in a receipt.
//!
//! Pipeline (see launch.rs): validate → probe backend → control root →
//! plan (pure) → bwrap argv (pure) → spawn → pumps → reap → receipt.
//! No napi here: the addon crate maps this API to JavaScript.

pub mod atomic_file;
pub mod backend;
pub mod bwrap_argv;
pub mod cgroup;
pub mod child_fds;
pub mod confinement;
pub mod control_root;
pub mod error_code;
pub mod events;
pub mod exec_hash;
pub mod execution;
pub mod host_path;
pub mod host_probe;
pub mod js_number;
pub mod launch;
pub mod launch_request;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod live_support;
pub mod network_plan;
pub mod network_policy;
pub mod network_receipts;
pub mod network_setup;
pub mod observe;
pub mod paths;
pub mod pidfd;
pub mod plan;
pub mod policy;
pub mod presets;
pub mod process_identity;
pub mod pumps;
pub mod receipt;
pub mod reserved_id_nss;
pub mod rlimits;
pub mod run_identity;
pub mod run_result;
pub mod runtime_layout;
pub mod sealed_memfd;
pub mod seccomp;
pub mod spawn;
pub mod stop_ladder;
pub mod strict_json;
pub mod subordinate_ids;
pub mod supervision_runtime;
pub mod supervisor;
#[cfg(test)]
mod test_skip;
pub mod tree_removal;
pub mod uid_lease;
pub mod userns_map;
pub mod workspace_access;
pub mod workspace_owner;

pub use error_code::ErrorCode;
pub use events::{Completion, Event, EventSink, LaunchFailure, Stream};
pub use execution::{ExecutionHandle, WriteOutcome, WRITE_QUEUE_DEPTH};
pub use launch::{launch, start, LaunchError};
pub use launch_request::{LaunchOptions, LaunchRequest};
pub use stop_ladder::StopReason;
