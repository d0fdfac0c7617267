//! The stable error codes JavaScript sees (`err.code`). Every module's error
//! enum maps onto one of these; callers branch on the code, never on text.
//! Documented in docs/errors.md.

/// A stable, documented failure class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// `command` is not a non-empty argv whose first entry is an absolute,
    /// normalized path to an existing executable regular file.
    InvalidCommand,
    /// An option other than the policy is malformed.
    InvalidOptions,
    /// The policy object does not match the documented format.
    PolicyInvalid,
    /// The policy asks for something cordon refuses to do yet (fail closed).
    Unsupported,
    /// Bubblewrap is missing or cannot create the namespaces the policy needs.
    BackendUnavailable,
    /// Preparing or starting the sandbox failed after validation.
    SpawnFailed,
    /// The policy requires a confinement mechanism this host lacks (e.g. a
    /// whole-sandbox memory or process ceiling without a usable cgroup).
    ConfinementUnavailable,
    /// A mediated network policy whose frontend cannot be set up here (the
    /// relay binary is missing, the engine socket cannot be created, …):
    /// never a fallback to no network or to open network.
    NetworkUnavailable,
    /// A non-root provider has no host ids to give its sandbox (no
    /// subordinate uid/gid range, or `newuidmap`/`newgidmap` missing or
    /// refusing), and the policy does not opt in to sharing the provider's
    /// own identity: a sandbox never runs as the provider's uid by default.
    IdentityUnavailable,
    /// The running sandbox, observed from outside, did not show the
    /// confinement the plan applied; the run was stopped (fail closed).
    ConfinementMismatch,
    /// The caller's workspace cannot be used by the sandbox's uid (an
    /// ancestor it cannot traverse, or a workspace-write policy on a
    /// directory it cannot write); the message names the fix.
    WorkspaceUnusable,
    /// The run's receipt could not be written or read back: without it the
    /// run is not accounted for, so it is never reported as a success.
    ReceiptUnavailable,
}

impl ErrorCode {
    /// The `ERR_CORDON_…` string carried by JavaScript errors.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidCommand => "ERR_CORDON_INVALID_COMMAND",
            ErrorCode::InvalidOptions => "ERR_CORDON_INVALID_OPTIONS",
            ErrorCode::PolicyInvalid => "ERR_CORDON_POLICY_INVALID",
            ErrorCode::Unsupported => "ERR_CORDON_UNSUPPORTED",
            ErrorCode::BackendUnavailable => "ERR_CORDON_BACKEND_UNAVAILABLE",
            ErrorCode::SpawnFailed => "ERR_CORDON_SPAWN_FAILED",
            ErrorCode::ConfinementUnavailable => "ERR_CORDON_CONFINEMENT_UNAVAILABLE",
            ErrorCode::NetworkUnavailable => "ERR_CORDON_NETWORK_UNAVAILABLE",
            ErrorCode::IdentityUnavailable => "ERR_CORDON_IDENTITY_UNAVAILABLE",
            ErrorCode::ConfinementMismatch => "ERR_CORDON_CONFINEMENT_MISMATCH",
            ErrorCode::ReceiptUnavailable => "ERR_CORDON_RECEIPT_UNAVAILABLE",
            ErrorCode::WorkspaceUnusable => "ERR_CORDON_WORKSPACE_UNUSABLE",
        }
    }
}
