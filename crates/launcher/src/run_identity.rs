//! Which host uid and gid a run's sandbox gets.
//!
//! - Provider not root: its own uid (bwrap runs unprivileged as it); its
//!   sandboxes share that uid and its per-user quotas.
//! - Provider root, caller-provided workspace owned by a uid of the
//!   workspace-owner range: that owner (and the workspace's gid if it is in
//!   the range, else the same number). Runs on one workspace share a uid —
//!   the files they leave stay theirs, so the workspace works across runs.
//! - Provider root otherwise: a per-run uid (gid = the same number) leased
//!   from its own range for the run's life ([`crate::uid_lease`]), so two
//!   sandboxes that do not share a workspace never share a host uid.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;

use crate::plan::Identity;
use crate::process_identity::{RUN_UIDS, RUN_UID_FIRST, SANDBOX_UID, WORKSPACE_UIDS};
use crate::uid_lease::{UidLease, UidLeaseError};

/// How the run's uid was chosen (recorded in the receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UidAllocation {
    /// The provider's own uid (it is not root).
    Provider,
    /// The owner of the caller's workspace, from the workspace-owner range.
    WorkspaceOwner,
    /// A uid leased for this run alone.
    PerRun,
}

impl UidAllocation {
    pub fn as_str(self) -> &'static str {
        match self {
            UidAllocation::Provider => "provider",
            UidAllocation::WorkspaceOwner => "workspace-owner",
            UidAllocation::PerRun => "per-run",
        }
    }
}

/// What [`choose`] decided; `PerRun` still needs a lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Provider,
    WorkspaceOwner(Identity),
    PerRun,
}

/// A run's identity; the lease (if any) must live until the run's
/// processes are gone.
#[derive(Debug)]
pub struct RunIdentity {
    pub identity: Option<Identity>,
    pub allocation: UidAllocation,
    pub lease: Option<UidLease>,
}

/// Whether `id` lies in the workspace-owner range.
pub fn is_workspace_owner_id(id: u32) -> bool {
    (SANDBOX_UID..SANDBOX_UID + WORKSPACE_UIDS).contains(&id)
}

/// Pure: provider root or not, and the owner (uid, gid) of the workspace
/// the run mounts (if the caller provided one) → the choice.
pub fn choose(provider_is_root: bool, workspace_owner: Option<(u32, u32)>) -> Choice {
    if !provider_is_root {
        return Choice::Provider;
    }
    match workspace_owner {
        Some((uid, gid)) if is_workspace_owner_id(uid) => {
            let gid = if is_workspace_owner_id(gid) { gid } else { uid };
            Choice::WorkspaceOwner(Identity { uid, gid })
        }
        _ => Choice::PerRun,
    }
}

/// Thin: stats the workspace, decides, leases a per-run uid if needed.
pub fn resolve(
    provider_is_root: bool,
    workspace: Option<&Path>,
) -> Result<RunIdentity, UidLeaseError> {
    // An unreadable workspace fails later, at its bind, with its own error.
    let owner = workspace
        .and_then(|ws| std::fs::metadata(ws).ok())
        .map(|m| (m.uid(), m.gid()));
    Ok(match choose(provider_is_root, owner) {
        Choice::Provider => RunIdentity {
            identity: None,
            allocation: UidAllocation::Provider,
            lease: None,
        },
        Choice::WorkspaceOwner(identity) => RunIdentity {
            identity: Some(identity),
            allocation: UidAllocation::WorkspaceOwner,
            lease: None,
        },
        Choice::PerRun => {
            let lease = UidLease::acquire(RUN_UID_FIRST, RUN_UIDS)?;
            let id = lease.uid();
            RunIdentity {
                identity: Some(Identity { uid: id, gid: id }),
                allocation: UidAllocation::PerRun,
                lease: Some(lease),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_root_provider_runs_its_sandboxes_as_itself() {
        assert_eq!(
            choose(false, Some((SANDBOX_UID, SANDBOX_UID))),
            Choice::Provider
        );
        assert_eq!(choose(false, None), Choice::Provider);
    }

    #[test]
    fn a_workspace_owned_by_a_reserved_owner_uid_runs_as_that_owner() {
        let owner = SANDBOX_UID + 5;
        assert_eq!(
            choose(true, Some((owner, owner))),
            Choice::WorkspaceOwner(Identity {
                uid: owner,
                gid: owner
            })
        );
        assert_eq!(
            choose(true, Some((owner, 1000))),
            Choice::WorkspaceOwner(Identity {
                uid: owner,
                gid: owner
            }),
            "a gid outside the range is not adopted"
        );
    }

    #[test]
    fn every_other_root_run_gets_a_uid_of_its_own() {
        assert_eq!(choose(true, None), Choice::PerRun);
        assert_eq!(
            choose(true, Some((0, 0))),
            Choice::PerRun,
            "root-owned workspace"
        );
        assert_eq!(choose(true, Some((1000, 1000))), Choice::PerRun);
        assert_eq!(
            choose(true, Some((RUN_UID_FIRST, RUN_UID_FIRST))),
            Choice::PerRun,
            "per-run uids are never adopted as owners"
        );
    }
}
