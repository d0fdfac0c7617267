//! Host facts and the host filesystem: the control root and its atomic
//! files, hostile-tree removal, the executable's hash and staged copy, the
//! read-only runtime's shape, process identities and descriptors, starting
//! a process without a copy of the provider (clone_exec), orphaned
//! namespace inits, and the ids a run may use (reserved range, subordinate
//! ids, uid leases, the user namespace, workspace owners and access).

pub mod atomic_file;
pub mod clone_exec;
pub mod control_root;
pub mod exec_hash;
pub mod namespace_holder;
pub mod orphan_init;
pub mod pidfd;
pub mod process_identity;
pub mod reserved_id_nss;
pub mod runtime_layout;
pub mod session_owner_claims;
pub mod step_trace;
pub mod subordinate_ids;
pub mod tree_removal;
pub mod uid_lease;
pub mod uid_sweep;
pub mod userns_chain;
pub mod userns_map;
pub mod workspace_access;
pub mod workspace_grant;
pub mod workspace_owner;
