//! Where the sockets handed to a sandbox (fd 3, fd 4, the fd-4 streams)
//! are made: in the pair maker's empty network namespace, or — where this
//! process may not make user namespaces — in the provider's own, where a
//! sandbox can probe the host's abstract Unix names and list its network
//! interfaces through them (round 16b, R16b-2; docs/security.md). Optional:
//! launches go on either way.

use cordon_passed_fds::PairNamespace;

use super::{Check, Importance};

const NAME: &str = "sandbox sockets' namespace";
const FIX: &str = "let this process make user namespaces: on Ubuntu 24.04 \
                   (kernel.apparmor_restrict_unprivileged_userns=1) an AppArmor profile \
                   with `userns,` for node, as for bwrap; in a container, a seccomp profile \
                   that allows clone(CLONE_NEWUSER)";

/// Pure: the empty namespace passes; the provider's is a warning.
pub fn check_pair_namespace(namespace: &PairNamespace) -> Check {
    match namespace {
        PairNamespace::Empty => Check::pass(
            NAME,
            Importance::Optional,
            "fd 3, fd 4 and the fd-4 streams are made in an empty network namespace".into(),
        ),
        PairNamespace::Failing(why) => Check::fail(
            NAME,
            Importance::Optional,
            format!("no socket pair can be made for a sandbox now ({why}): launches fail"),
            FIX,
        ),
        PairNamespace::Provider(why) => Check::fail(
            NAME,
            Importance::Optional,
            format!(
                "no pair maker ({why}): fd 3, fd 4 and the fd-4 streams are made in this \
                 process's network namespace, so a sandbox can tell which abstract Unix names \
                 the host listens on and list its network interfaces"
            ),
            FIX,
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_namespace_passes_and_the_providers_warns_with_its_reason_and_fix() {
        assert!(check_pair_namespace(&PairNamespace::Empty).ok);
        let own = check_pair_namespace(&PairNamespace::Provider("Operation not permitted".into()));
        assert!(!own.ok);
        assert_eq!(own.importance, Importance::Optional);
        assert!(own.detail.contains("Operation not permitted"));
        assert!(own.fix.contains("userns"));
    }

    #[test]
    fn this_host_makes_them_in_an_empty_namespace() {
        assert_eq!(cordon_passed_fds::pair_namespace(), PairNamespace::Empty);
    }
}
