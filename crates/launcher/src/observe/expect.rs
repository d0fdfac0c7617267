//! Pure: what the observation must show, derived from the plan (the plan's
//! own fields, not the constants that produced them), the confinement plan
//! and the provider's facts.

use crate::plan::cgroup::Write;
use crate::plan::confinement::ConfinementPlan;
use crate::plan::{Plan, RlimitSetting, WritableKind};

use super::reader::{observed_namespaces, ProviderFacts};

/// A mount the plan placed, and whether it must be writable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedMount {
    pub point: String,
    pub writable: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// Filters the program must run under: the provider's plus ours.
    pub seccomp_filters: u32,
    /// bwrap sets no_new_privs with a seccomp program; without it nothing does.
    pub no_new_privs: bool,
    /// `--cap-drop ALL`: nothing effective, nothing in the bounding set.
    pub capabilities_empty: bool,
    /// The host uid/gid bwrap ran as, and so the program.
    pub host_uid: u32,
    pub host_gid: u32,
    /// The provider's uid, which the program must not have (every run but
    /// one whose policy shares the provider's identity): checked on its
    /// own, so a plan that named the provider's uid by mistake still fails.
    pub forbidden_uid: Option<u32>,
    /// No supplementary group (the provider's would otherwise follow the
    /// sandbox); unchecked when the identity is shared with the provider.
    pub no_supplementary_groups: bool,
    /// Namespaces that must differ from the provider's: (name, provider inode).
    pub separate_namespaces: Vec<(&'static str, u64)>,
    /// Hard ceilings the program's rlimits may not exceed.
    pub rlimits: Vec<RlimitSetting>,
    /// The run's cgroup leaf name and the limits written to it.
    pub cgroup_leaf: Option<String>,
    pub cgroup_limits: Vec<Write>,
    /// Each tmpfs the program can write (the plan's writable filesystems
    /// of kind tmpfs: `/dev/shm`, `/tmp`, a default workspace) and its size.
    pub tmpfs_bytes: Vec<(String, u64)>,
    /// `/`, every bind and every writable filesystem, with its planned access.
    pub mounts: Vec<PlannedMount>,
}

/// Who bwrap runs as when the plan has no identity: the provider itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderIds {
    pub uid: u32,
    pub gid: u32,
}

/// Pure: plan + confinement plan + provider facts → expectation.
pub fn expectation(
    plan: &Plan,
    confinement: &ConfinementPlan,
    provider: &ProviderFacts,
    provider_ids: ProviderIds,
) -> Expectation {
    let seccomp = u32::from(plan.seccomp.is_some());
    let shared =
        plan.uid_allocation == crate::plan::run_identity::UidAllocation::SharedWithProvider;
    let identity = plan.identity.map_or(provider_ids, |id| ProviderIds {
        uid: id.uid,
        gid: id.gid,
    });
    let separate_namespaces = observed_namespaces()
        .filter_map(|name| {
            provider
                .namespaces
                .iter()
                .find(|(n, _)| *n == name)
                .copied()
        })
        .collect();
    let mut mounts = vec![PlannedMount {
        point: "/".into(),
        writable: false,
    }];
    mounts.extend(plan.binds.iter().map(|b| PlannedMount {
        point: b.dest.to_string_lossy().into_owned(),
        writable: b.writable,
    }));
    let writable = plan.writable_filesystems();
    for fs in &writable {
        let point = fs.mount.to_string_lossy().into_owned();
        if !mounts.iter().any(|m| m.point == point) {
            mounts.push(PlannedMount {
                point,
                writable: true,
            });
        }
    }
    let tmpfs_bytes = writable
        .iter()
        .filter(|fs| fs.kind == WritableKind::Tmpfs)
        .filter_map(|fs| Some((fs.mount.to_string_lossy().into_owned(), fs.size_bytes?)))
        .collect();
    Expectation {
        seccomp_filters: provider.seccomp_filters + seccomp,
        no_new_privs: seccomp > 0,
        capabilities_empty: true,
        host_uid: identity.uid,
        host_gid: identity.gid,
        forbidden_uid: (!shared).then_some(provider_ids.uid),
        no_supplementary_groups: !shared,
        separate_namespaces,
        rlimits: plan.rlimits.clone(),
        cgroup_leaf: confinement.cgroup.as_ref().map(|c| c.leaf_name.clone()),
        cgroup_limits: confinement
            .cgroup
            .as_ref()
            .map(|c| c.limits.clone())
            .unwrap_or_default(),
        tmpfs_bytes,
        mounts,
    }
}
