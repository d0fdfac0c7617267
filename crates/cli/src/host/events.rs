//! Hooks for observers of the host (metrics): called at each session's
//! milestones. The default does nothing; a metrics registry implements it.

use std::time::Duration;

/// Why a session was refused, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The host-wide session cap.
    Capacity,
    /// The tenant's quota.
    TenantQuota,
    /// The spawn request failed validation.
    Invalid,
    /// The launcher could not start the sandbox.
    LaunchFailed,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Capacity => "capacity",
            Refusal::TenantQuota => "tenant-quota",
            Refusal::Invalid => "invalid",
            Refusal::LaunchFailed => "launch-failed",
        }
    }
}

pub trait HostEvents: Send + Sync + 'static {
    /// A sandbox was admitted (counted until `session_ended`).
    fn session_started(&self) {}
    /// The sandbox's run settled; `stop_reason` as in its receipt.
    fn session_ended(&self, _stop_reason: Option<&str>) {}
    /// `spawn` → `started`: validation, clamping and the launch.
    fn launched(&self, _latency: Duration) {}
    fn refused(&self, _reason: Refusal) {}
    /// A connection was closed before `welcome` (auth, bound, malformed).
    fn handshake_failed(&self) {}
}

/// The default observer: nothing.
pub struct NoEvents;

impl HostEvents for NoEvents {}
