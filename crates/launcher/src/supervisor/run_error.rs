//! Why a run failed after the launch pipeline handed it to its supervision:
//! one variant per step, like [`crate::LaunchError`] before it, each mapped
//! to a stable code. The message becomes the receipt's `outcome.message`.

use crate::error_code::ErrorCode;
use crate::plan::cgroup::CgroupError;
use crate::run::spawn::SpawnError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The fork/exec of bwrap (or preparing its descriptors) failed.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("cannot move bwrap into the run's cgroup: {0}")]
    JoinCgroup(CgroupError),
    /// A session claimed the run's workspace owner uid between the run's
    /// planning and its bwrap's start (session_owner_claims.rs).
    #[error(
        "the workspace is owned by uid {uid}, which an agent session claimed while this run \
         started: a run as that uid would share it with the session. Give the workspace an \
         owner uid no session holds (docs/policy.md)"
    )]
    HeldBySession { uid: u32 },
    #[error("cannot send bwrap its options: {0}")]
    SendOptions(std::io::Error),
    #[error("cannot start the stream pumps: {0}")]
    StartPumps(std::io::Error),
    #[error("cannot read bwrap's info fd: {0}")]
    ReadInfo(std::io::Error),
    #[error("bwrap's info fd held no sandbox pid: {0}")]
    InfoMalformed(String),
    #[error("wait for bwrap: {0}")]
    WaitBwrap(std::io::Error),
    /// bwrap ended before reporting a sandbox and the launcher had no reason
    /// of its own: bwrap's stderr explains it.
    #[error("bubblewrap could not set up the sandbox: {stderr_head}")]
    SandboxSetup { stderr_head: String },
}

impl RunError {
    pub fn code(&self) -> ErrorCode {
        match self {
            RunError::Spawn(_)
            | RunError::JoinCgroup(_)
            | RunError::SendOptions(_)
            | RunError::StartPumps(_)
            | RunError::ReadInfo(_)
            | RunError::InfoMalformed(_)
            | RunError::WaitBwrap(_)
            | RunError::SandboxSetup { .. } => ErrorCode::SpawnFailed,
            RunError::HeldBySession { .. } => ErrorCode::WorkspaceUnusable,
        }
    }
}
