use super::sandbox_uid::{id_file_users, status_uid_in};
use super::*;
use serde_json::json;

fn sysctls(clone: Option<&str>, max: Option<&str>, apparmor: Option<&str>) -> UsernsSysctls {
    UsernsSysctls {
        unprivileged_userns_clone: clone.map(String::from),
        max_user_namespaces: max.map(String::from),
        apparmor_restrict_unprivileged_userns: apparmor.map(String::from),
    }
}

#[test]
fn bwrap_versions_parse_and_compare_numerically() {
    assert_eq!(parse_bwrap_version("bubblewrap 0.8.0"), Some((0, 8, 0)));
    assert_eq!(parse_bwrap_version("bubblewrap 0.11"), Some((0, 11, 0)));
    assert!(parse_bwrap_version("bubblewrap 0.10.1").unwrap() > MIN_BWRAP_VERSION);
    assert!(parse_bwrap_version("bubblewrap 0.6.2").unwrap() < MIN_BWRAP_VERSION);
    assert_eq!(parse_bwrap_version("garbage"), None);
    assert!(version_supported("0.8.0") && version_supported("0.11.1"));
    assert!(!version_supported("0.7.0") && !version_supported(""));
}

#[test]
fn each_userns_sysctl_that_forbids_names_its_own_fix() {
    let cases = [
        (
            sysctls(Some("0"), Some("100"), None),
            "kernel.unprivileged_userns_clone=1",
        ),
        (
            sysctls(None, Some("0"), None),
            "user.max_user_namespaces=15000",
        ),
        (
            sysctls(None, Some("100"), Some("1")),
            "apparmor_restrict_unprivileged_userns=0",
        ),
    ];
    for (values, fix) in cases {
        let check = check_userns_sysctls(&values);
        assert!(!check.ok);
        assert!(check.fix.contains(fix), "{} lacks {fix}", check.fix);
    }
    let fine = check_userns_sysctls(&sysctls(Some("1"), Some("100"), Some("0")));
    assert!(fine.ok && fine.fix.is_empty());
}

#[test]
fn seccomp_needs_the_status_line_and_the_errno_action() {
    let line = Some("Seccomp:\t0".to_string());
    let ok = SeccompStatus {
        status_line: line.clone(),
        actions_avail: Some("kill_process errno allow\n".into()),
    };
    assert!(check_seccomp(&ok).ok);
    let no_errno = SeccompStatus {
        status_line: line,
        actions_avail: Some("allow".into()),
    };
    assert!(!check_seccomp(&no_errno).ok);
    assert!(!check_seccomp(&SeccompStatus::default()).ok);
}

#[test]
fn a_missing_bwrap_or_runner_fails_with_an_install_fix() {
    let missing = Err(BackendError::NotFound {
        searched: "/usr/bin/bwrap".into(),
    });
    let check = check_bwrap(&missing);
    assert!(!check.ok && check.fix.contains("apt-get install bubblewrap"));
    assert!(!check_userns_trial(&missing).ok);
    let runner = check_executable("runner", Path::new("/nonexistent/cordon-runner"));
    assert!(!runner.ok && runner.importance == Importance::Required);
    assert!(check_executable("runner", Path::new("/bin/sh")).ok);
}

#[test]
fn an_old_bwrap_fails_and_refused_namespaces_fail_the_trial_not_the_install() {
    let old = Ok(backend::Backend {
        path: "/usr/bin/bwrap".into(),
        version: "0.6.2".into(),
    });
    assert!(!check_bwrap(&old).ok);
    let refused = Err(BackendError::Namespaces {
        path: "/usr/bin/bwrap".into(),
        stderr: "setting up uid map: Permission denied".into(),
    });
    let trial = check_userns_trial(&refused);
    assert!(!trial.ok && trial.detail.contains("uid map"), "{trial:?}");
}

#[test]
fn cgroups_are_optional_and_their_absence_explains_itself() {
    let check = check_cgroup(Err("v2: no cgroup2 mount; v1: no memory line".into()));
    assert!(!check.ok && check.importance == Importance::Optional);
    assert!(check.detail.contains("no memory line"));
}

#[test]
fn a_status_uid_line_matches_on_any_of_its_four_ids_unless_a_zombie() {
    let status = "Name:\tsleep\nState:\tS (sleeping)\nUid:\t0\t1879048192\t0\t0\n";
    assert!(status_has_uid(status, 1_879_048_192));
    assert!(status_has_uid(status, 0));
    assert!(!status_has_uid(status, 65_534));
    assert!(!status_has_uid("Name:\tx\n", 0));
    let zombie = "Name:\tsleep\nState:\tZ (zombie)\nUid:\t0\t1879048192\t0\t0\n";
    assert!(!status_has_uid(zombie, 1_879_048_192));
}

#[test]
fn a_host_process_of_the_sandbox_uid_fails_doctor_but_sandboxes_and_bwrap_do_not() {
    let process = |pid, comm: &str, host_userns| UidProcess {
        pid,
        uid: crate::host::process_identity::SANDBOX_UID,
        comm: comm.into(),
        host_userns,
    };
    let bwrap = process(10, "bwrap", true);
    let in_sandbox = process(11, "sh", false);
    assert!(!bwrap.is_foreign() && !in_sandbox.is_foreign());
    let daemon = process(12, "dnsmasq", true);
    assert!(daemon.is_foreign());
    let range = || Some(crate::host::process_identity::RESERVED_UIDS);
    assert!(check_sandbox_uid_unused(range(), &[], &[]).ok);
    let check = check_sandbox_uid_unused(range(), &[daemon], &[]);
    assert!(!check.ok && check.importance == Importance::Required);
    assert!(
        check.detail.contains("uid 1879048192 by 12 (dnsmasq)"),
        "{check:?}"
    );
    assert!(check.fix.contains("reserved"), "{check:?}");
    let account = ["/etc/subuid: builder".to_string()];
    let check = check_sandbox_uid_unused(range(), &[], &account);
    assert!(
        !check.ok && check.detail.contains("/etc/subuid: builder"),
        "{check:?}"
    );
    assert!(
        check_sandbox_uid_unused(None, &[], &[]).ok,
        "not root: nothing to check"
    );
}

#[test]
fn accounts_and_subordinate_ranges_inside_the_reserved_range_are_found() {
    let range = crate::host::process_identity::RESERVED_UIDS;
    let passwd = "root:x:0:0::/root:/bin/sh\nsvc:x:1879048200:1::/:/bin/false\n# c:x:1879048200\n";
    assert_eq!(id_file_users(passwd, false, &range), ["svc"]);
    let subuid = "alice:100000:65536\nwide:1879000000:100000\nhigh:1879179264:10\n";
    assert_eq!(
        id_file_users(subuid, true, &range),
        ["wide"],
        "overlap, not the range after it"
    );
    let status = "State:\tS\nUid:\t0\t1879113729\t0\t0\n";
    assert_eq!(
        status_uid_in(status, &range),
        Some(1_879_113_729),
        "a per-run uid"
    );
}

#[test]
fn on_this_host_every_required_check_passes() {
    if !Path::new("/usr/bin/bwrap").exists() {
        crate::test_skip::skip(
            "host_probe::on_this_host_every_required_check_passes",
            "no /usr/bin/bwrap; the host checks cannot pass here",
        );
        return;
    }
    let options = json!({"runnerPath": "/bin/true", "ignored": 1});
    let report = report_json(&options);
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 13, "{checks:?}");
    for check in checks.iter().filter(|c| c["importance"] == "required") {
        assert_eq!(check["ok"], true, "{check}");
    }
    assert_eq!(report["ok"], true);
}

#[test]
fn only_a_failed_required_check_fails_the_verdict() {
    let check = |ok, importance| Check {
        name: "x",
        ok,
        importance,
        detail: String::new(),
        fix: String::new(),
    };
    let optional_failed = vec![
        check(true, Importance::Required),
        check(false, Importance::Optional),
    ];
    assert!(Report::from_checks(optional_failed).ok);
    let required_failed = vec![
        check(false, Importance::Required),
        check(true, Importance::Optional),
    ];
    let report = Report::from_checks(required_failed);
    assert!(!report.ok);
    assert_eq!(report.to_json()["ok"], false);
    assert_eq!(report.to_json()["checks"][0]["importance"], "required");
}
