//! The `cordon-egress-relay` binary: every sandbox's starter (the launcher's
//! plan/starter.rs: the program starts only once the sandbox dies with its
//! provider) and what a mediated network policy needs beyond the sandbox
//! itself (the in-sandbox end of the proxy and the installer of the fd-4
//! channel). The private network namespace, AF_UNIX sockets and the seccomp
//! filter are covered by the other checks. Optional: without it
//! `network: {mode: "mediated"}` fails to launch (with
//! ERR_CORDON_NETWORK_UNAVAILABLE), never silently without its network, and
//! other runs start without the starter's gate.

use std::path::Path;

use super::{is_executable_file, Check, Importance};

pub fn check_network_relay(path: &Path) -> Check {
    const NAME: &str = "mediated network";
    if is_executable_file(path) {
        let detail = format!(
            "egress relay {} (network.mode \"mediated\" can launch; every run starts through it)",
            path.display()
        );
        return Check::pass(NAME, Importance::Optional, detail);
    }
    let detail = format!(
        "{} is missing or not an executable file: policies with network.mode \"mediated\" fail with ERR_CORDON_NETWORK_UNAVAILABLE, and other runs start without the gate that holds a program back when its provider died during the set-up",
        path.display()
    );
    let fix = "npm rebuild cordon   # or: cargo build --release -p cordon-egress-relay";
    Check::fail(NAME, Importance::Optional, detail, fix)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_relay_is_an_optional_failure_with_its_fix() {
        let missing = check_network_relay(Path::new("/nonexistent/cordon-egress-relay"));
        assert!(!missing.ok);
        assert_eq!(missing.importance, Importance::Optional);
        assert!(missing.fix.contains("cordon-egress-relay"));
        assert!(check_network_relay(Path::new("/bin/sh")).ok);
    }
}
