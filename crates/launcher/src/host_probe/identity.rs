//! Doctor checks of a non-root provider's identity: the subordinate ids
//! its sandboxes run as (subordinate_ids.rs, run_identity.rs), and whether
//! systemd delegated a cgroup v2 subtree to it (`user@UID.service`), which
//! is what would bound memory and processes per run without root.

use std::path::Path;

use super::{Check, Importance};
use crate::host::subordinate_ids::{self, Missing};

pub const SUBORDINATE_NAME: &str = "subordinate ids (non-root provider)";
pub const DELEGATION_NAME: &str = "delegated cgroup (non-root provider)";

/// Required for a non-root provider (launches are refused without them,
/// unless a policy shares the provider's identity); passes for root.
pub fn check_subordinate_ids() -> Check {
    if nix::unistd::geteuid().is_root() {
        let detail = "not needed: a root provider's sandboxes run as uids of cordon's reserved \
                      range"
            .to_string();
        return Check::pass(SUBORDINATE_NAME, Importance::Required, detail);
    }
    match subordinate_ids::for_current_user() {
        Ok(ids) => {
            let (u, g) = (ids.uids, ids.gids);
            let detail = format!(
                "uids {}..{} and gids {}..{}: workspace owners {}..{}, per-run ids {}..{}",
                u.first,
                u64::from(u.first) + u64::from(u.count),
                g.first,
                u64::from(g.first) + u64::from(g.count),
                u.owners().first,
                u64::from(u.owners().first) + u64::from(u.owners().count),
                u.per_run().first,
                u64::from(u.per_run().first) + u64::from(u.per_run().count),
            );
            Check::pass(SUBORDINATE_NAME, Importance::Required, detail)
        }
        Err(missing) => {
            let detail = match &missing {
                Missing::Helpers => format!(
                    "{} or {} is missing: launches are refused \
                     (ERR_CORDON_IDENTITY_UNAVAILABLE) unless a policy sets \
                     process.identity \"shared-with-provider\"",
                    subordinate_ids::NEWUIDMAP,
                    subordinate_ids::NEWGIDMAP
                ),
                Missing::Range { file } => format!(
                    "no usable range for uid {} in {file}: launches are refused \
                     (ERR_CORDON_IDENTITY_UNAVAILABLE) unless a policy sets \
                     process.identity \"shared-with-provider\"",
                    nix::unistd::getuid()
                ),
            };
            let fix = subordinate_ids::fix_commands(&missing);
            Check::fail(SUBORDINATE_NAME, Importance::Required, detail, &fix)
        }
    }
}

/// Optional: reports the delegation, or why there is none and the commands
/// that give one. Informational for root (it has the whole hierarchy).
pub fn check_delegated_cgroup() -> Check {
    let uid = nix::unistd::geteuid().as_raw();
    if uid == 0 {
        let detail = "not needed: a root provider creates run cgroups itself".to_string();
        return Check::pass(DELEGATION_NAME, Importance::Optional, detail);
    }
    let root = Path::new(crate::plan::cgroup::CGROUP_ROOT);
    let fix = format!(
        "on a systemd host with cgroup v2 (systemd.unified_cgroup_hierarchy=1): as root, \
         `loginctl enable-linger {uid}` (starts user@{uid}.service) and make sure it delegates \
         memory and pids (`systemctl edit user@.service`: [Service] Delegate=memory pids); then \
         run the provider inside it: `systemd-run --user --scope -p Delegate=yes node app.js`"
    );
    // v1 hierarchies the provider can write (made writable for it by hand):
    // runs get cgroups there, since bwrap's child joins them itself with
    // the provider's uid (plan/cgroup/plan.rs `spawn_joins`).
    if let Ok(crate::plan::cgroup::Hierarchy::V1 {
        memory_own,
        pids_own,
    }) = crate::plan::cgroup::detect()
    {
        let detail = format!(
            "writable v1 hierarchies {} and {} (memory, pids): run cgroups go under them",
            memory_own.display(),
            pids_own.display()
        );
        return Check::pass(DELEGATION_NAME, Importance::Optional, detail);
    }
    if !root.join("cgroup.controllers").is_file() {
        let detail = "no cgroup v2 at /sys/fs/cgroup (a v1 or hybrid host delegates nothing to \
                      users): sandboxes of this provider are bounded per process by rlimits only"
            .to_string();
        return Check::fail(DELEGATION_NAME, Importance::Optional, detail, &fix);
    }
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    match crate::plan::cgroup::delegated_v2(root, &own, uid) {
        Ok(dir) => {
            let detail = format!(
                "{} (memory, pids), provider inside it: run cgroups go under it",
                dir.display()
            );
            Check::pass(DELEGATION_NAME, Importance::Optional, detail)
        }
        Err(why) => Check::fail(DELEGATION_NAME, Importance::Optional, why, &fix),
    }
}
