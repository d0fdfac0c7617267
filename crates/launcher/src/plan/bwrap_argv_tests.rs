use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::host::process_identity::Identity;
use crate::host::runtime_layout::{RuntimeEntry, RuntimeLayout};
use crate::plan::{PlanInputs, RlimitSetting};
use crate::request::launch_request::{LaunchRequest, StopTimings};
use crate::request::policy::Policy;

fn policy(workspace: &str, extra: serde_json::Value, env_allow: &[&str]) -> Policy {
    Policy::from_json(&json!({
        "formatVersion": 1,
        "filesystem": {"workspace": workspace, "temp": "write", "extra": extra},
        "network": {"mode": "none"},
        "process": {"treeConfinement": "required"},
        "environment": {"allow": env_allow},
    }))
    .unwrap()
}

fn request(policy: Policy) -> LaunchRequest {
    LaunchRequest {
        argv: vec![
            "/opt/cordon/cordon-runner".into(),
            "--timeout-ms".into(),
            "5000".into(),
        ],
        executable: "/opt/cordon/cordon-runner".into(),
        invoked_as: "/opt/cordon/cordon-runner".into(),
        policy,
        invocation_id: None,
        workspace: None,
        env: Vec::new(),
        stop: StopTimings {
            grace_ms: 1000,
            force_ms: 1000,
        },
        deadline_ms: None,
        bwrap_path: None,
        network_relay_path: None,
        namespace_holder: None,
        workspace_tmpfs_bytes: None,
        workspace_grant: false,
    }
}

fn argv_for(
    request: &LaunchRequest,
    runtime: &RuntimeLayout,
    tweak: impl FnOnce(&mut PlanInputs<'_>),
) -> String {
    let mut inputs = PlanInputs {
        request,
        bwrap: "/usr/bin/bwrap".into(),
        executable_source: "/tmp/cordon-0/exec/0123abcd".into(),
        workspace: (request.policy.workspace != crate::request::policy::Access::None)
            .then(|| PathBuf::from("/tmp/cordon-0/ROOT/workspace")),
        sandbox_temp: "/tmp/cordon-0/ROOT/sandbox-temp".into(),
        runtime,
        identity: Some(Identity {
            uid: crate::host::process_identity::SANDBOX_UID,
            gid: crate::host::process_identity::SANDBOX_GID,
        }),
        seccomp_program: None,
        rlimits: Vec::new(),
        temp_bytes: None,
        network: None,
        starter_source: Some("/tmp/cordon-0/exec/relay0123".into()),
        dev_shm_bytes: 8 << 20,
        workspace_tmpfs_bytes: None,
        uid_allocation: crate::plan::run_identity::UidAllocation::WorkspaceOwner,
    };
    tweak(&mut inputs);
    render(&Plan::build(inputs))
}

/// The exec'd argv, then what bwrap reads from its `--args` descriptor.
fn render(plan: &Plan) -> String {
    let args = bwrap_argv(plan);
    let lines = |list: &[std::ffi::OsString]| -> Vec<String> {
        list.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    };
    let mut text = lines(&args.exec_argv(plan.args_slot));
    text.push(format!("# read from fd {} (--args):", plan.args_slot));
    text.extend(lines(&args.options));
    text.join("\n")
}

#[test]
fn read_only_policy_mounts_the_workspace_read_only_and_tmp_writable() {
    let req = request(policy("read", json!([]), &[]));
    insta::assert_snapshot!(
        "read_only",
        argv_for(&req, &RuntimeLayout::merged_usr(), |_| {})
    );
}

#[test]
fn workspace_write_policy_binds_the_workspace_writable() {
    let req = request(policy("write", json!([]), &[]));
    insta::assert_snapshot!(
        "workspace_write",
        argv_for(&req, &RuntimeLayout::merged_usr(), |_| {})
    );
}

#[test]
fn a_writable_default_workspace_is_a_bounded_tmpfs_and_only_dev_shm_is_writable_in_dev() {
    let req = request(policy("write", json!([]), &[]));
    let text = argv_for(&req, &RuntimeLayout::merged_usr(), |inputs| {
        inputs.workspace = None;
        inputs.workspace_tmpfs_bytes = Some(128 << 20);
        inputs.temp_bytes = Some(256 << 20);
    });
    let dev = "--dev\n/dev\n--size\n8388608\n--tmpfs\n/dev/shm\n--remount-ro\n/dev\n";
    assert!(text.contains(dev), "{text}");
    let tmpfs = "--tmpfs\n/tmp\n--size\n134217728\n--tmpfs\n/workspace\n";
    assert!(text.contains(tmpfs), "{text}");
    assert!(
        !text.contains("-fd\n6\n/workspace"),
        "no workspace bind: {text}"
    );
    let plan = Plan::build(PlanInputs {
        request: &req,
        bwrap: "/usr/bin/bwrap".into(),
        executable_source: "/x".into(),
        workspace: None,
        sandbox_temp: "/st".into(),
        runtime: &RuntimeLayout::merged_usr(),
        identity: None,
        seccomp_program: None,
        rlimits: Vec::new(),
        temp_bytes: Some(3),
        network: None,
        starter_source: None,
        dev_shm_bytes: 1,
        workspace_tmpfs_bytes: Some(2),
        uid_allocation: crate::plan::run_identity::UidAllocation::SharedWithProvider,
    });
    let sizes: Vec<(String, Option<u64>)> = plan
        .writable_filesystems()
        .iter()
        .map(|w| (w.mount.display().to_string(), w.size_bytes))
        .collect();
    let want = [
        ("/dev/shm", Some(1)),
        ("/tmp", Some(3)),
        ("/workspace", Some(2)),
    ];
    let want: Vec<(String, Option<u64>)> = want.iter().map(|(m, b)| (m.to_string(), *b)).collect();
    assert_eq!(sizes, want);
    assert_eq!(plan.chdir, PathBuf::from("/workspace"));
}

#[test]
fn untrusted_policy_has_no_workspace_and_starts_in_root() {
    let req = request(policy("none", json!([]), &[]));
    insta::assert_snapshot!(
        "untrusted",
        argv_for(&req, &RuntimeLayout::merged_usr(), |_| {})
    );
}

#[test]
fn extra_mounts_env_seccomp_and_a_tmpfs_temp_are_planned_in_slot_order() {
    let extra =
        json!([{"path": "/opt/data", "access": "read"}, {"path": "/srv/out", "access": "write"}]);
    let mut req = request(policy("read", extra, &["LANG"]));
    req.env = vec![("LANG".into(), "C.UTF-8".into())];
    let text = argv_for(&req, &RuntimeLayout::merged_usr(), |inputs| {
        inputs.seccomp_program = Some(vec![0u8; 16]);
        inputs.rlimits = vec![RlimitSetting {
            name: "RLIMIT_NOFILE",
            resource: 7,
            soft: 256,
            hard: 256,
        }];
        inputs.temp_bytes = Some(256 << 20);
    });
    insta::assert_snapshot!("extras_env_seccomp", text);
}

#[test]
fn a_split_usr_host_binds_its_lib_directories_read_only() {
    let runtime = RuntimeLayout {
        entries: vec![
            RuntimeEntry::Directory {
                path: "/bin".into(),
            },
            RuntimeEntry::Directory {
                path: "/lib".into(),
            },
            RuntimeEntry::Symlink {
                path: "/lib64".into(),
                target: "lib".into(),
            },
        ],
        ld_so_cache: false,
    };
    let req = request(policy("read", json!([]), &[]));
    insta::assert_snapshot!("split_usr", argv_for(&req, &runtime, |_| {}));
}

#[test]
fn a_symlinked_command_outside_the_runtime_gets_a_link_to_its_canonical_path() {
    let mut req = request(policy("read", json!([]), &[]));
    req.invoked_as = "/opt/bin/runner".into();
    req.argv[0] = "/opt/bin/runner".into();
    let text = argv_for(&req, &RuntimeLayout::merged_usr(), |_| {});
    assert!(
        text.contains("--symlink\n/opt/cordon/cordon-runner\n/opt/bin/runner"),
        "{text}"
    );
    let mut inside = request(policy("read", json!([]), &[]));
    inside.invoked_as = "/bin/sh".into();
    inside.executable = "/usr/bin/dash".into();
    let text = argv_for(&inside, &RuntimeLayout::merged_usr(), |_| {});
    assert!(!text.contains("/bin/sh\n--remount-ro"), "{text}");
    assert!(text.contains("--ro-bind-fd\n5\n/usr/bin/dash"), "{text}");
}

#[test]
fn every_namespace_is_unshared_without_a_try_variant_and_root_is_read_only_last() {
    let req = request(policy("write", json!([]), &[]));
    let text = argv_for(&req, &RuntimeLayout::merged_usr(), |_| {});
    for ns in NAMESPACES {
        let option = format!("--unshare-{ns}");
        assert!(text.lines().any(|l| l == option), "{option} missing");
    }
    assert!(!text.contains("-try"));
    let lines: Vec<&str> = text.lines().collect();
    let remount_root = lines.windows(2).position(|w| w == ["--remount-ro", "/"]);
    let remount = remount_root.unwrap();
    let last_bind = lines.iter().rposition(|l| l.ends_with("bind-fd")).unwrap();
    assert!(remount > last_bind);
    assert_eq!(
        lines[..8],
        [
            "--args",
            "11",
            "--",
            "/.cordon/egress-relay",
            "--alive-fd",
            "9",
            "--",
            "/opt/cordon/cordon-runner",
        ]
    );
}

#[test]
fn the_starter_gets_the_pipes_read_end_and_bwrap_its_write_end_as_its_status_descriptor() {
    let req = request(policy("read", json!([]), &[]));
    let runtime = RuntimeLayout::merged_usr();
    let mut inputs = PlanInputs {
        request: &req,
        bwrap: "/usr/bin/bwrap".into(),
        executable_source: "/x".into(),
        workspace: None,
        sandbox_temp: "/st".into(),
        runtime: &runtime,
        identity: None,
        seccomp_program: Some(vec![0u8; 8]),
        rlimits: Vec::new(),
        temp_bytes: Some(1),
        network: None,
        starter_source: Some("/staged/relay".into()),
        dev_shm_bytes: 1,
        workspace_tmpfs_bytes: None,
        uid_allocation: crate::plan::run_identity::UidAllocation::SharedWithProvider,
    };
    let plan = Plan::build(inputs.clone());
    let starter = plan.starter.unwrap();
    let relay = plan
        .binds
        .iter()
        .find(|b| b.role == BindRole::Starter)
        .unwrap();
    assert_eq!(
        (relay.source.to_str(), relay.dest.to_str(), relay.writable),
        (Some("/staged/relay"), Some("/.cordon/egress-relay"), false)
    );
    // Distinct slots, below the --args one, all counted by max_slot.
    let mut slots: Vec<i32> = plan.binds.iter().map(|b| b.slot).collect();
    slots.extend([
        plan.seccomp.as_ref().unwrap().slot,
        starter.alive_slot,
        starter.status_slot,
    ]);
    slots.sort_unstable();
    slots.dedup();
    assert_eq!(slots.len(), plan.binds.len() + 3);
    assert!(slots.iter().all(|s| *s < plan.args_slot && *s > 4));
    assert_eq!(plan.max_slot(), plan.args_slot);
    let args = bwrap_argv(&plan);
    let options: Vec<String> = args
        .options
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let status = options
        .iter()
        .position(|o| o == "--json-status-fd")
        .unwrap();
    assert_eq!(options[status + 1], starter.status_slot.to_string());
    let command: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        command[..4],
        [
            "/.cordon/egress-relay",
            "--alive-fd",
            &starter.alive_slot.to_string(),
            "--"
        ]
    );
    // Without a starter: no pipe, no status descriptor, the env wrapper.
    inputs.starter_source = None;
    let plan = Plan::build(inputs);
    assert_eq!(plan.starter, None);
    let args = bwrap_argv(&plan);
    assert!(!args.options.iter().any(|o| o == "--json-status-fd"));
    assert_eq!(args.command[0], "/usr/bin/env");
}

fn plan_with_env(env: &[(&str, &str)]) -> Plan {
    let names: Vec<&str> = env.iter().map(|(n, _)| *n).collect();
    let mut req = request(policy("read", json!([]), &names));
    req.env = env
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let runtime = RuntimeLayout::merged_usr();
    Plan::build(PlanInputs {
        request: &req,
        bwrap: "/usr/bin/bwrap".into(),
        executable_source: "/opt/cordon/cordon-runner".into(),
        workspace: Some("/tmp/ws".into()),
        sandbox_temp: "/tmp/st".into(),
        runtime: &runtime,
        identity: None,
        seccomp_program: Some(vec![0u8; 8]),
        rlimits: Vec::new(),
        temp_bytes: Some(1 << 20),
        network: None,
        starter_source: None,
        dev_shm_bytes: 1 << 20,
        workspace_tmpfs_bytes: None,
        uid_allocation: crate::plan::run_identity::UidAllocation::SharedWithProvider,
    })
}

#[test]
fn environment_values_travel_in_the_args_descriptor_never_on_argv() {
    let plan = plan_with_env(&[("API_KEY", "sk-secret-123"), ("LANG", "C")]);
    let args = bwrap_argv(&plan);
    let exec = args.exec_argv(plan.args_slot);
    assert!(
        !exec
            .iter()
            .any(|a| a.to_string_lossy().contains("sk-secret")),
        "{exec:?}"
    );
    let bytes = args.options_bytes().unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.contains("--clearenv\0--setenv\0API_KEY\0sk-secret-123\0--setenv\0LANG\0C\0"),
        "{text:?}"
    );
    assert!(text.ends_with('\0'), "every option is NUL-terminated");
    assert!(plan.args_slot > plan.binds.iter().map(|b| b.slot).max().unwrap());
    assert_eq!(plan.max_slot(), plan.args_slot);
    let json = serde_json::to_string(&plan).unwrap();
    assert!(
        !json.contains("sk-secret"),
        "plan.json keeps names only: {json}"
    );
    assert!(
        json.contains("\"runnerEnv\":[\"API_KEY\",\"LANG\"]"),
        "{json}"
    );
}

#[test]
fn an_option_holding_a_nul_byte_is_refused_rather_than_split() {
    let plan = plan_with_env(&[("A", "x\0--bind\0/\0/host")]);
    let err = bwrap_argv(&plan).options_bytes().unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
}

/// The command bwrap starts, as text.
fn command_of(plan: &Plan) -> Vec<String> {
    bwrap_argv(plan)
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_planned_pwd_is_set_after_bwrap_exports_its_own() {
    let plan = plan_with_env(&[("PWD", "/workspace/sub")]);
    let command = command_of(&plan);
    assert_eq!(
        command[..6],
        [
            "/usr/bin/env",
            "-u",
            "PWD",
            "--",
            "PWD=/workspace/sub",
            "/opt/cordon/cordon-runner"
        ]
    );
}

#[test]
fn the_starter_sets_a_planned_pwd_after_bwrap_exports_its_own() {
    let mut plan = plan_with_env(&[("PWD", "/workspace/sub")]);
    plan.starter = Some(crate::plan::starter::StarterPlan {
        alive_slot: 20,
        status_slot: 21,
    });
    let command = command_of(&plan);
    assert_eq!(
        command[..6],
        [
            "/.cordon/egress-relay",
            "--alive-fd",
            "20",
            "--pwd",
            "/workspace/sub",
            "--"
        ]
    );
}

#[test]
fn a_mediated_network_binds_the_relay_and_engine_socket_and_starts_the_relay_first() {
    let mut p = policy("read", json!([]), &[]);
    p.network =
        crate::request::policy::NetworkMode::Mediated(crate::request::policy::MediatedNetwork {
            allow: vec![cordon_egress::Destination::parse_pair("api.example.com:443").unwrap()],
            frontend: crate::request::policy::NetworkFrontend::Auto,
        });
    let req = request(p);
    let text = argv_for(&req, &RuntimeLayout::merged_usr(), |inputs| {
        inputs.network = Some(crate::plan::network_plan::NetworkInputs {
            engine_dir: "/tmp/cordon-0/ROOT/egress".into(),
            frontend: crate::request::policy::NetworkFrontend::Auto,
        });
    });
    // Still its own network namespace: the relay is the only way out.
    assert!(text.contains("--unshare-net"));
    insta::assert_snapshot!("mediated_network", text);
}
