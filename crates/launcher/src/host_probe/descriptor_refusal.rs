//! Whether this kernel lets the provider's sockets refuse descriptors a
//! sandbox passes (`SO_PASSRIGHTS` off, Linux 6.16+), reported by
//! `cordon doctor` for what it means.
//!
//! Why a check: with it, no socket a program writes to and the provider
//! reads — fd 3, the fd-4 channel and streams, every engine-socket
//! connection after the relay's — takes a descriptor (`sendmsg` fails with
//! `EPERM`). Without it they arrive in the provider's table and are closed
//! there, at a cost per close the program chooses: a file with tens of
//! thousands of POSIX locks passed over and over fills the provider's
//! descriptor table (W26-1), a pipe whose lock a sandbox thread holds in
//! `splice` keeps a closing thread waiting (W26-2). docs/security.md.

use super::{Check, Importance};

const NAME: &str = "descriptor refusal (SO_PASSRIGHTS)";
const FIX: &str = "a kernel of Linux 6.16 or later";

/// Pure: `refuses` is whether a Unix socket here took `SO_PASSRIGHTS` off.
pub fn check_descriptor_refusal(refuses: bool) -> Check {
    if refuses {
        return Check::pass(
            NAME,
            Importance::Optional,
            "sockets a sandbox writes to refuse passed descriptors at the sender".into(),
        );
    }
    Check::fail(
        NAME,
        Importance::Optional,
        "this kernel cannot refuse passed descriptors (Linux 6.16): a sandboxed program can \
         pass descriptors whose closes cost the provider what the program chooses, and fill \
         its descriptor table (docs/security.md, W26-1)"
            .into(),
        FIX,
    )
}

/// Tries `SO_PASSRIGHTS` off on a fresh socket pair.
pub fn kernel_refuses_descriptors() -> bool {
    std::os::unix::net::UnixStream::pair().is_ok_and(|(probe, _)| {
        cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(&probe))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn refusal_passes_and_its_absence_warns_with_the_kernel_to_get() {
        assert!(check_descriptor_refusal(true).ok);
        let without = check_descriptor_refusal(false);
        assert!(!without.ok);
        assert_eq!(without.importance, Importance::Optional);
        assert!(without.detail.contains("W26-1"));
        assert!(without.fix.contains("6.16"));
    }
}
