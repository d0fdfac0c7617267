//! The mediated network's part of the plan (pure): where the relay and the
//! engine socket appear in the sandbox, the proxy environment, the fd-4
//! slot, and the relay's network flags (the relay is the sandbox's starter:
//! starter.rs).

use std::path::PathBuf;

use serde::Serialize;

use crate::request::network_policy::NetworkFrontend;

/// The relay binary inside the sandbox (read-only bind of the staged copy).
pub const SANDBOX_RELAY: &str = "/.cordon/egress-relay";
/// The engine socket's directory inside the sandbox (read-only bind).
pub const SANDBOX_EGRESS_DIR: &str = "/.cordon/egress";
/// The engine socket's file name (host and sandbox side).
pub const ENGINE_SOCKET: &str = "engine.sock";
/// The relay's port on the sandbox's own 127.0.0.1 (its network namespace
/// is private, so a fixed port cannot collide with another run).
pub const SANDBOX_PROXY_PORT: u16 = 3128;
/// The program's fd-4 egress channel.
pub const EGRESS_CHANNEL_FD: i32 = 4;

/// Host facts for a mediated run, resolved by the caller.
#[derive(Debug, Clone)]
pub struct NetworkInputs {
    /// The control root's egress directory holding the engine socket.
    pub engine_dir: PathBuf,
    pub frontend: NetworkFrontend,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPlan {
    pub frontend: &'static str,
    /// 127.0.0.1:PORT inside the sandbox, when the proxy frontend is on.
    pub proxy_port: Option<u16>,
    /// bwrap's descriptor the relay moves to the program's fd 4.
    pub fd4_slot: Option<i32>,
}

/// `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their lowercase forms, with
/// no userinfo (nothing secret is in the environment), and `NO_PROXY`
/// cleared so no client bypasses the proxy for a name it thinks is local.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        env.push((name.to_owned(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    env
}

/// The planned runner environment: the caller's, with the proxy variables
/// set (a caller's value of the same name is replaced: only the relay is a
/// way out, so another value could only break clients).
pub fn runner_env(
    mut env: Vec<(String, String)>,
    network: Option<&NetworkPlan>,
) -> Vec<(String, String)> {
    if let Some(port) = network.and_then(|n| n.proxy_port) {
        let proxy = proxy_env(port);
        env.retain(|(name, _)| {
            !proxy.iter().any(|(p, _)| p == name) && name != "NO_PROXY" && name != "no_proxy"
        });
        env.extend(proxy);
    }
    env
}

/// The relay's network flags: `[--listen PORT --engine SOCKET] [--fd4-from N]`.
pub fn relay_flags(plan: &NetworkPlan) -> Vec<String> {
    let mut argv = Vec::new();
    if let Some(port) = plan.proxy_port {
        argv.extend(["--listen".to_owned(), port.to_string()]);
        argv.extend([
            "--engine".to_owned(),
            format!("{SANDBOX_EGRESS_DIR}/{ENGINE_SOCKET}"),
        ]);
    }
    if let Some(slot) = plan.fd4_slot {
        argv.extend(["--fd4-from".to_owned(), slot.to_string()]);
    }
    argv
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn proxy_variables_carry_no_userinfo_and_replace_the_callers() {
        let plan = NetworkPlan {
            frontend: "auto",
            proxy_port: Some(3128),
            fd4_slot: Some(9),
        };
        let env = runner_env(
            vec![
                ("HTTP_PROXY".into(), "http://u:p@evil:1".into()),
                ("A".into(), "b".into()),
            ],
            Some(&plan),
        );
        let get = |n: &str| env.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("HTTP_PROXY"), Some("http://127.0.0.1:3128"));
        assert_eq!(get("https_proxy"), Some("http://127.0.0.1:3128"));
        assert_eq!(get("ALL_PROXY"), Some("socks5h://127.0.0.1:3128"));
        assert_eq!(get("A"), Some("b"));
        assert!(env.iter().all(|(_, v)| !v.contains('@')));
        assert_eq!(env.iter().filter(|(k, _)| k == "HTTP_PROXY").count(), 1);
    }

    #[test]
    fn the_relay_flags_name_only_the_frontends_in_use() {
        let fd4_only = NetworkPlan {
            frontend: "fd4",
            proxy_port: None,
            fd4_slot: Some(9),
        };
        assert_eq!(relay_flags(&fd4_only), ["--fd4-from", "9"]);
        let proxy = NetworkPlan {
            frontend: "proxy",
            proxy_port: Some(3128),
            fd4_slot: None,
        };
        assert_eq!(
            relay_flags(&proxy),
            [
                "--listen",
                "3128",
                "--engine",
                "/.cordon/egress/engine.sock",
            ]
        );
        assert!(
            runner_env(Vec::new(), Some(&fd4_only)).is_empty(),
            "no proxy, no variables"
        );
    }
}
