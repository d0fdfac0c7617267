//! Launch-time check that no account the name service knows holds the uid
//! or gid a run is about to use.
//!
//! Why: a sandbox's uid is meant to belong to no one on the host (processes
//! of that uid could signal, trace and read the sandbox, and files it writes
//! would be that account's). `cordon doctor` reads `/etc/passwd`,
//! `/etc/group` and the subordinate ranges, but accounts from LDAP/AD
//! (sssd's default id-mapping range, 200000–2000200000, covers cordon's
//! reserved range) are only visible through NSS, and doctor is not run
//! before every launch. So the launcher asks NSS (`getpwuid`/`getgrgid`)
//! about exactly the ids of this run, right before using them.

use nix::unistd::{Gid, Group, Uid, User};

#[derive(Debug, thiserror::Error)]
pub enum ReservedIdError {
    #[error(
        "the sandbox uid {uid} is the host account {name:?} (known to the name service): \
         cordon's reserved range (0x70000000…) must belong to no account; move that \
         account or the id range it comes from (e.g. sssd's ldap_idmap_range_min), \
         see `npx cordon doctor`"
    )]
    User { uid: u32, name: String },
    #[error(
        "the sandbox gid {gid} is the host group {name:?} (known to the name service): \
         cordon's reserved range (0x70000000…) must belong to no group; move that \
         group or the id range it comes from, see `npx cordon doctor`"
    )]
    Group { gid: u32, name: String },
}

/// Thin: refuses when NSS names an account for `uid` or a group for `gid`.
/// A lookup that fails (the service unreachable) is not a refusal: it says
/// nothing about the id, and doctor reports the files it can read.
pub fn check(uid: u32, gid: u32) -> Result<(), ReservedIdError> {
    if let Ok(Some(user)) = User::from_uid(Uid::from_raw(uid)) {
        return Err(ReservedIdError::User {
            uid,
            name: user.name,
        });
    }
    if let Ok(Some(group)) = Group::from_gid(Gid::from_raw(gid)) {
        return Err(ReservedIdError::Group {
            gid,
            name: group.name,
        });
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn an_id_the_name_service_knows_is_refused_naming_the_account() {
        // uid/gid 0 is root on every host; the reserved range's first id
        // is no one's on a host doctor passes.
        let err = check(0, 0x7000_0000).unwrap_err();
        assert!(
            err.to_string()
                .contains("uid 0 is the host account \"root\""),
            "{err}"
        );
        let err = check(0x7000_0000, 0).unwrap_err();
        assert!(
            err.to_string().contains("gid 0 is the host group \"root\""),
            "{err}"
        );
        check(0x7000_0000, 0x7000_0000).unwrap();
    }
}
