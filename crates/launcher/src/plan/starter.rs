//! The sandbox's starter (pure planning): `cordon-egress-relay`, bound
//! read-only at [`SANDBOX_RELAY`], is the first program bwrap starts in
//! every sandbox whose caller named it (`options.networkRelayPath`: index.js
//! and the CLI always do). It holds the program back until the sandbox's
//! death is tied to its provider (the provider-liveness gate:
//! crates/egress-relay/src/provider_gate.rs), sets up the mediated network
//! when there is one, removes bwrap's `PWD`, and execs the program.
//!
//! The gate's descriptors: a Unix socket pair, one end held by the outer
//! bwrap as `--json-status-fd` (bwrap closes it in the sandbox before the
//! init exists, and the launcher closes its own after the fork), the other
//! given to the starter; the launcher keeps a copy of the starter's end
//! until bwrap is reaped, so bwrap's status writes always have a reader
//! (no SIGPIPE). The starter sees a hang-up once the outer bwrap is gone.

use serde::Serialize;

use crate::plan::network_plan::{self, NetworkPlan, SANDBOX_RELAY};

/// The starter's two descriptor slots in bwrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StarterPlan {
    /// The starter's end of the liveness pair (`--alive-fd`).
    pub alive_slot: i32,
    /// The outer bwrap's end (`--json-status-fd`).
    pub status_slot: i32,
}

/// `cordon-egress-relay --alive-fd N [network flags] [--pwd DIR] --`
pub fn command_prefix(
    starter: &StarterPlan,
    network: Option<&NetworkPlan>,
    pwd: Option<&str>,
) -> Vec<String> {
    let mut argv = vec![
        SANDBOX_RELAY.to_owned(),
        "--alive-fd".to_owned(),
        starter.alive_slot.to_string(),
    ];
    argv.extend(network.into_iter().flat_map(network_plan::relay_flags));
    if let Some(pwd) = pwd {
        argv.extend(["--pwd".to_owned(), pwd.to_owned()]);
    }
    argv.push("--".to_owned());
    argv
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_gates_then_sets_up_the_network_then_names_the_planned_pwd() {
        let starter = StarterPlan {
            alive_slot: 11,
            status_slot: 12,
        };
        assert_eq!(
            command_prefix(&starter, None, None),
            [SANDBOX_RELAY, "--alive-fd", "11", "--"]
        );
        let network = NetworkPlan {
            frontend: "fd4",
            proxy_port: None,
            fd4_slot: Some(9),
        };
        assert_eq!(
            command_prefix(&starter, Some(&network), Some("/workspace/a")),
            [
                SANDBOX_RELAY,
                "--alive-fd",
                "11",
                "--fd4-from",
                "9",
                "--pwd",
                "/workspace/a",
                "--"
            ]
        );
    }
}
