//! Which host uid and gid a run's sandbox gets. A sandbox never runs as
//! the provider's uid unless the policy says so (`process.identity:
//! "shared-with-provider"`): every per-user kernel quota (epoll watches,
//! inotify, RLIMIT_NPROC, message queues, …) would be shared between the
//! sandbox and the provider, and a sandbox can exhaust one to crash it.
//!
//! - Provider root, caller-provided workspace owned by a uid of the
//!   workspace-owner range: that owner (and the workspace's gid if it is in
//!   the range, else the same number). Runs on one workspace share a uid —
//!   the files they leave stay theirs, so the workspace works across runs.
//! - Provider root otherwise: a per-run uid (gid = the same number) leased
//!   from its own range for the run's life ([`crate::host::uid_lease`]), so two
//!   sandboxes that do not share a workspace never share a host uid.
//! - Provider not root, with subordinate ids (subordinate_ids.rs): the same
//!   two cases over the provider's own ranges — the owner half for a
//!   workspace it owns, a leased id of the per-run half otherwise — entered
//!   through a user namespace that maps exactly that uid and gid
//!   (userns_map.rs).
//! - Provider not root, policy `"shared-with-provider"`: the provider's own
//!   uid, by the caller's explicit choice (recorded in the receipt).
//! - Provider not root otherwise: refused, naming the fix
//!   (`ERR_CORDON_IDENTITY_UNAVAILABLE`).

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;

use crate::host::process_identity::{
    Identity, RUN_UIDS, RUN_UID_FIRST, SANDBOX_UID, WORKSPACE_UIDS,
};
use crate::host::session_owner_claims;
use crate::host::subordinate_ids::{self, Missing, SubordinateIds};
use crate::host::uid_lease::{UidLease, UidLeaseError};
use crate::host::userns_map::{self, UsernsMapError};
use crate::request::policy::IdentityMode;

/// How the run's uid was chosen (recorded in the receipt).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UidAllocation {
    /// The provider's own uid (not root, and the policy asked for it).
    SharedWithProvider,
    /// The owner of the caller's workspace, from the workspace-owner range.
    WorkspaceOwner,
    /// A uid leased for this run alone.
    PerRun,
    /// The owner of the caller's workspace, from the first half of the
    /// (non-root) provider's subordinate range.
    SubordinateOwner,
    /// A uid of the second half of the provider's subordinate range, leased
    /// for this run alone.
    SubordinatePerRun,
}

impl UidAllocation {
    pub fn as_str(self) -> &'static str {
        match self {
            UidAllocation::SharedWithProvider => "shared-with-provider",
            UidAllocation::WorkspaceOwner => "workspace-owner",
            UidAllocation::PerRun => "per-run",
            UidAllocation::SubordinateOwner => "subordinate-owner",
            UidAllocation::SubordinatePerRun => "subordinate-per-run",
        }
    }

    /// Whether the sandbox enters a user namespace of subordinate ids.
    pub fn is_subordinate(self) -> bool {
        matches!(
            self,
            UidAllocation::SubordinateOwner | UidAllocation::SubordinatePerRun
        )
    }
}

/// What [`choose`] decided; the per-run choices still need a lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    SharedWithProvider,
    WorkspaceOwner(Identity),
    PerRun,
    SubordinateOwner(Identity),
    SubordinatePerRun(SubordinateIds),
    Unavailable(Missing),
}

/// The facts [`choose`] decides from.
#[derive(Debug, Clone)]
pub struct IdentityFacts {
    pub provider_is_root: bool,
    pub mode: IdentityMode,
    /// The owner (uid, gid) of the workspace the run mounts, if the caller
    /// provided one.
    pub workspace_owner: Option<(u32, u32)>,
    /// A non-root provider's subordinate ids, or what is missing.
    pub subordinate: Result<SubordinateIds, Missing>,
}

/// A run's identity. `lease` must live until the run's processes are gone;
/// `userns` (subordinate ids) until bwrap has been spawned into it.
#[derive(Debug)]
pub struct RunIdentity {
    pub identity: Option<Identity>,
    pub allocation: UidAllocation,
    pub lease: Option<UidLease>,
    pub userns: Option<OwnedFd>,
    /// A caller's workspace owner uid, checked against the sessions'
    /// claims at planning: checked again once bwrap exists as it
    /// (session_owner_claims.rs).
    pub claim_recheck: Option<session_owner_claims::ClaimRecheck>,
}

impl RunIdentity {
    /// Whom the launcher hands the control root and its directories to
    /// (chown): only a root provider can; a subordinate identity reaches
    /// what it needs through bound descriptors and world-readable modes.
    pub fn chown_target(&self) -> Option<Identity> {
        self.identity.filter(|_| !self.allocation.is_subordinate())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunIdentityError {
    #[error("lease a sandbox uid: {0}")]
    Lease(#[from] UidLeaseError),
    #[error(
        "a sandbox must not run as the provider's uid {uid}, and this non-root provider has no \
         subordinate ids to give it one ({reason}). Fix: {fix}; then `npx cordon doctor`. Or \
         opt in to sharing the provider's identity with policy.process.identity = \
         \"shared-with-provider\" (a sandbox can then exhaust the provider's per-user quotas \
         and crash it: docs/security.md)"
    )]
    Unavailable {
        uid: u32,
        reason: String,
        fix: String,
    },
    #[error("enter the sandbox's subordinate ids: {0}")]
    Userns(#[from] UsernsMapError),
    #[error(
        "the workspace is owned by uid {uid}, which an agent session holds: a run as that uid \
         would share it with the session, whose sweep after a dead provider kills every \
         process of it. Give the workspace an owner uid no session holds (docs/policy.md)"
    )]
    HeldBySession { uid: u32 },
}

/// Whether `id` lies in the workspace-owner range.
pub fn is_workspace_owner_id(id: u32) -> bool {
    (SANDBOX_UID..SANDBOX_UID + WORKSPACE_UIDS).contains(&id)
}

/// Pure: the facts → the choice.
pub fn choose(facts: &IdentityFacts) -> Choice {
    if facts.provider_is_root {
        return match facts.workspace_owner {
            Some((uid, gid)) if is_workspace_owner_id(uid) => {
                let gid = if is_workspace_owner_id(gid) { gid } else { uid };
                Choice::WorkspaceOwner(Identity { uid, gid })
            }
            _ => Choice::PerRun,
        };
    }
    if facts.mode == IdentityMode::SharedWithProvider {
        return Choice::SharedWithProvider;
    }
    let ids = match &facts.subordinate {
        Ok(ids) => *ids,
        Err(missing) => return Choice::Unavailable(missing.clone()),
    };
    match facts.workspace_owner {
        Some((uid, gid)) if ids.uids.owners().contains(uid) => {
            let paired = ids.gid_for(uid).unwrap_or(ids.gids.first);
            let gid = if ids.gids.owners().contains(gid) {
                gid
            } else {
                paired
            };
            Choice::SubordinateOwner(Identity { uid, gid })
        }
        _ => Choice::SubordinatePerRun(ids),
    }
}

/// Thin: stats the workspace, reads the subordinate ids (non-root), decides,
/// leases a per-run uid and creates the user namespace as needed.
pub fn resolve(
    provider_is_root: bool,
    mode: IdentityMode,
    workspace: Option<&Path>,
) -> Result<RunIdentity, RunIdentityError> {
    // An unreadable workspace fails later, at its bind, with its own error.
    let workspace_owner = workspace
        .and_then(|ws| std::fs::metadata(ws).ok())
        .map(|m| (m.uid(), m.gid()));
    let subordinate = if provider_is_root {
        Err(Missing::Helpers)
    } else {
        subordinate_ids::for_current_user()
    };
    let facts = IdentityFacts {
        provider_is_root,
        mode,
        workspace_owner,
        subordinate,
    };
    let fixed = |identity, allocation| RunIdentity {
        identity,
        allocation,
        lease: None,
        userns: None,
        claim_recheck: None,
    };
    let choice = choose(&facts);
    // Never a session's uid for a caller's workspace (session_owner_claims.rs, round 8 R8-1).
    let mut claim_recheck = None;
    if let (Choice::WorkspaceOwner(id) | Choice::SubordinateOwner(id), Some(ws)) =
        (&choice, workspace)
    {
        let recheck = session_owner_claims::ClaimRecheck::new(provider_is_root, id.uid, ws);
        if recheck.held() {
            return Err(RunIdentityError::HeldBySession { uid: id.uid });
        }
        claim_recheck = Some(recheck);
    }
    let mut resolved = match choice {
        Choice::SharedWithProvider => fixed(None, UidAllocation::SharedWithProvider),
        Choice::WorkspaceOwner(id) => fixed(Some(id), UidAllocation::WorkspaceOwner),
        Choice::PerRun => {
            let lease = UidLease::acquire(RUN_UID_FIRST, RUN_UIDS)?;
            let id = lease.uid();
            RunIdentity {
                lease: Some(lease),
                ..fixed(Some(Identity { uid: id, gid: id }), UidAllocation::PerRun)
            }
        }
        Choice::SubordinateOwner(id) => RunIdentity {
            userns: Some(userns_map::create(id)?),
            ..fixed(Some(id), UidAllocation::SubordinateOwner)
        },
        Choice::SubordinatePerRun(ids) => {
            let range = ids.uids.per_run();
            let lease = UidLease::acquire(range.first, range.count)?;
            let uid = lease.uid();
            let gid = ids.gid_for(uid).unwrap_or(uid);
            let id = Identity { uid, gid };
            RunIdentity {
                lease: Some(lease),
                userns: Some(userns_map::create(id)?),
                ..fixed(Some(id), UidAllocation::SubordinatePerRun)
            }
        }
        Choice::Unavailable(missing) => {
            let reason = match &missing {
                Missing::Helpers => "newuidmap/newgidmap are not installed".to_string(),
                Missing::Range { file } => format!("no usable range for this user in {file}"),
            };
            return Err(RunIdentityError::Unavailable {
                uid: nix::unistd::getuid().as_raw(),
                reason,
                fix: subordinate_ids::fix_commands(&missing),
            });
        }
    };
    resolved.claim_recheck = claim_recheck;
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::subordinate_ids::IdRange;

    const IDS: SubordinateIds = SubordinateIds {
        uids: IdRange {
            first: 100_000,
            count: 65536,
        },
        gids: IdRange {
            first: 300_000,
            count: 65536,
        },
    };

    fn facts(root: bool, owner: Option<(u32, u32)>) -> IdentityFacts {
        IdentityFacts {
            provider_is_root: root,
            mode: IdentityMode::Own,
            workspace_owner: owner,
            subordinate: Ok(IDS),
        }
    }

    #[test]
    fn a_workspace_owned_by_a_reserved_owner_uid_runs_as_that_owner() {
        let owner = SANDBOX_UID + 5;
        assert_eq!(
            choose(&facts(true, Some((owner, owner)))),
            Choice::WorkspaceOwner(Identity {
                uid: owner,
                gid: owner
            })
        );
        assert_eq!(
            choose(&facts(true, Some((owner, 1000)))),
            Choice::WorkspaceOwner(Identity {
                uid: owner,
                gid: owner
            }),
            "a gid outside the range is not adopted"
        );
    }

    #[test]
    fn every_other_root_run_gets_a_uid_of_its_own_whatever_the_policy_says() {
        assert_eq!(choose(&facts(true, None)), Choice::PerRun);
        assert_eq!(choose(&facts(true, Some((0, 0)))), Choice::PerRun);
        assert_eq!(choose(&facts(true, Some((1000, 1000)))), Choice::PerRun);
        assert_eq!(
            choose(&facts(true, Some((RUN_UID_FIRST, RUN_UID_FIRST)))),
            Choice::PerRun,
            "per-run uids are never adopted as owners"
        );
        let shared = IdentityFacts {
            mode: IdentityMode::SharedWithProvider,
            ..facts(true, None)
        };
        assert_eq!(choose(&shared), Choice::PerRun, "root is never shared");
    }

    #[test]
    fn a_non_root_provider_runs_each_sandbox_as_a_subordinate_id_never_as_itself() {
        assert_eq!(choose(&facts(false, None)), Choice::SubordinatePerRun(IDS));
        assert_eq!(
            choose(&facts(false, Some((1000, 1000)))),
            Choice::SubordinatePerRun(IDS),
            "a workspace of the provider's own uid is not adopted"
        );
        assert_eq!(
            choose(&facts(false, Some((132_768, 332_768)))),
            Choice::SubordinatePerRun(IDS),
            "per-run ids are never adopted as owners"
        );
    }

    #[test]
    fn a_workspace_owned_by_an_id_of_the_owner_half_runs_as_that_owner() {
        assert_eq!(
            choose(&facts(false, Some((100_007, 300_009)))),
            Choice::SubordinateOwner(Identity {
                uid: 100_007,
                gid: 300_009
            })
        );
        assert_eq!(
            choose(&facts(false, Some((100_007, 1000)))),
            Choice::SubordinateOwner(Identity {
                uid: 100_007,
                gid: 300_007
            }),
            "the provider's gid is never adopted: the paired gid instead"
        );
    }

    #[test]
    fn without_subordinate_ids_a_non_root_provider_is_refused_unless_the_policy_opts_in() {
        let missing = Missing::Range {
            file: crate::host::subordinate_ids::SUBUID_FILE,
        };
        let without = IdentityFacts {
            subordinate: Err(missing.clone()),
            ..facts(false, None)
        };
        assert_eq!(choose(&without), Choice::Unavailable(missing));
        let shared = IdentityFacts {
            mode: IdentityMode::SharedWithProvider,
            ..without
        };
        assert_eq!(choose(&shared), Choice::SharedWithProvider);
    }
}
