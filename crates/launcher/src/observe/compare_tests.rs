use std::path::PathBuf;

use super::*;
use crate::observe::expect::PlannedMount;
use crate::observe::parse::{Limit, Status};
use crate::observe::MountSeen;
use crate::plan::cgroup::Write;
use crate::plan::RlimitSetting;

const UID: u32 = 0x7000_0000;
const PROVIDER_UID: u32 = 1000;
const PAGE: u64 = 4096;

fn expectation() -> Expectation {
    Expectation {
        seccomp_filters: 1,
        no_new_privs: true,
        capabilities_empty: true,
        host_uid: UID,
        host_gid: UID,
        forbidden_uid: Some(PROVIDER_UID),
        no_supplementary_groups: true,
        separate_namespaces: vec![("user", 1), ("net", 2), ("mnt", 3)],
        rlimits: vec![RlimitSetting {
            name: "NOFILE",
            resource: 7,
            soft: 256,
            hard: 256,
        }],
        cgroup_leaf: Some("run-ab".into()),
        cgroup_limits: vec![Write {
            path: PathBuf::from("/sys/fs/cgroup/memory/cordon/run-ab/memory.limit_in_bytes"),
            value: "100000000".into(),
            need: Need::Required,
        }],
        tmpfs_bytes: vec![("/dev/shm".into(), 4096), ("/tmp".into(), 1000)],
        mounts: vec![
            PlannedMount {
                point: "/".into(),
                writable: false,
            },
            PlannedMount {
                point: "/workspace".into(),
                writable: false,
            },
            PlannedMount {
                point: "/dev/shm".into(),
                writable: true,
            },
            PlannedMount {
                point: "/tmp".into(),
                writable: true,
            },
        ],
    }
}

fn mount(id: u64, point: &str, writable: bool, fs_type: &str, size: Option<u64>) -> MountSeen {
    let root = if fs_type == "devtmpfs" {
        point.trim_start_matches("/dev")
    } else {
        "/"
    };
    MountSeen {
        mount: Mount {
            id,
            root: root.into(),
            point: point.into(),
            writable,
            fs_type: fs_type.into(),
        },
        size_bytes: size,
    }
}

/// What a correctly confined program shows.
fn observation() -> Observation {
    Observation {
        pid: 42,
        status: Status {
            seccomp_mode: 2,
            seccomp_filters: 1,
            no_new_privs: true,
            cap_eff: 0,
            cap_bnd: 0,
            uids: [UID; 4],
            gids: [UID; 4],
            groups: Vec::new(),
        },
        uid_map: vec![IdRange {
            inside: UID,
            outside: UID,
            count: 1,
        }],
        gid_map: vec![IdRange {
            inside: UID,
            outside: UID,
            count: 1,
        }],
        namespaces: vec![("user", 11), ("net", 12), ("mnt", 13)],
        proc_cgroup: "8:pids:/cordon/run-ab\n4:memory:/x/cordon/run-ab\n0::/\n".into(),
        cgroup_limits: vec![(
            PathBuf::from("/sys/fs/cgroup/memory/cordon/run-ab/memory.limit_in_bytes"),
            Some("99999744".into()),
        )],
        limits: vec![Limit {
            name: "NOFILE",
            soft: Some(256),
            hard: Some(256),
        }],
        mounts: vec![
            mount(1, "/", false, "tmpfs", None),
            mount(2, "/proc", true, "proc", None),
            mount(3, "/dev", false, "tmpfs", None),
            mount(4, "/dev/null", true, "devtmpfs", None),
            mount(41, "/dev/shm", true, "tmpfs", Some(4096)),
            mount(5, "/dev/pts", true, "devpts", None),
            mount(6, "/workspace", false, "ext4", None),
            mount(7, "/tmp", true, "tmpfs", Some(4096)),
        ],
    }
}

fn checks(seen: &Observation) -> Vec<String> {
    compare(&expectation(), seen, PAGE)
        .into_iter()
        .map(|m| m.check)
        .collect()
}

#[test]
fn a_confined_program_matches_its_plan() {
    assert_eq!(compare(&expectation(), &observation(), PAGE), []);
}

#[test]
fn a_missing_seccomp_filter_is_a_mismatch_an_extra_one_is_not() {
    let mut seen = observation();
    seen.status.seccomp_mode = 0;
    seen.status.seccomp_filters = 0;
    seen.status.no_new_privs = false;
    assert_eq!(
        checks(&seen),
        ["seccomp.mode", "seccomp.filters", "noNewPrivs"]
    );
    // The program's own stacked filter (only ever narrower) is no mismatch.
    let mut seen = observation();
    seen.status.seccomp_filters = 2;
    assert!(checks(&seen).is_empty());
    // With the provider's own filter inherited, one fewer than planned is.
    let mut seen = observation();
    seen.status.seccomp_filters = 0;
    assert_eq!(checks(&seen), ["seccomp.filters"]);
}

#[test]
fn any_capability_left_is_a_mismatch() {
    let mut seen = observation();
    seen.status.cap_bnd = 1 << 21;
    assert_eq!(checks(&seen), ["capabilities"]);
}

#[test]
fn a_foreign_host_uid_or_a_wide_id_map_is_a_mismatch() {
    let mut seen = observation();
    seen.status.uids[1] = 0;
    seen.uid_map = vec![IdRange {
        inside: 0,
        outside: 0,
        count: 4_294_967_295,
    }];
    seen.gid_map.push(IdRange {
        inside: 1,
        outside: 100_000,
        count: 1,
    });
    assert_eq!(checks(&seen), ["hostUid", "uidMap", "gidMap"]);
}

#[test]
fn a_program_running_as_the_provider_uid_or_with_a_supplementary_group_is_a_mismatch() {
    // The plan itself named the provider (a planning bug): the uid matches
    // the plan, and the run still fails.
    let mut expect = expectation();
    expect.host_uid = PROVIDER_UID;
    let mut seen = observation();
    seen.status.uids = [PROVIDER_UID; 4];
    seen.uid_map[0].outside = PROVIDER_UID;
    let found = compare(&expect, &seen, PAGE);
    let names: Vec<&str> = found.iter().map(|m| m.check.as_str()).collect();
    assert_eq!(names, ["hostUid.notProvider"]);
    let mut seen = observation();
    seen.status.groups = vec![PROVIDER_UID];
    assert_eq!(checks(&seen), ["groups"]);
    // Shared by the policy's choice: neither is checked.
    expect.forbidden_uid = None;
    expect.no_supplementary_groups = false;
    let mut seen = observation();
    seen.status.uids = [PROVIDER_UID; 4];
    seen.status.groups = vec![PROVIDER_UID];
    seen.uid_map[0].outside = PROVIDER_UID;
    assert!(compare(&expect, &seen, PAGE).is_empty());
}

#[test]
fn a_namespace_shared_with_the_provider_or_unread_is_a_mismatch() {
    let mut seen = observation();
    seen.namespaces = vec![("user", 11), ("net", 2)];
    assert_eq!(checks(&seen), ["namespaces.net", "namespaces.mnt"]);
}

#[test]
fn only_a_hard_rlimit_above_the_plan_is_a_mismatch() {
    let mut seen = observation();
    seen.limits[0].soft = Some(10);
    assert_eq!(
        checks(&seen),
        Vec::<String>::new(),
        "lowering is the program's right"
    );
    seen.limits[0].hard = Some(257);
    assert_eq!(checks(&seen), ["rlimits.NOFILE"]);
    seen.limits[0].hard = None;
    assert_eq!(
        checks(&seen),
        ["rlimits.NOFILE"],
        "unlimited is above any plan"
    );
}

#[test]
fn leaving_the_cgroup_or_a_limit_not_reading_back_is_a_mismatch() {
    let mut seen = observation();
    seen.proc_cgroup = "8:pids:/\n4:memory:/\n0::/\n".into();
    seen.cgroup_limits[0].1 = Some("9223372036854771712".into());
    let found = checks(&seen);
    assert_eq!(found[0], "cgroup.member");
    assert!(found[1].ends_with("memory.limit_in_bytes"), "{found:?}");
    seen.cgroup_limits[0].1 = None;
    assert_eq!(checks(&seen).len(), 2, "a required limit file that is gone");
}

#[test]
fn a_writable_workspace_planned_read_only_or_a_wrong_tmpfs_size_is_a_mismatch() {
    let mut seen = observation();
    let at = |seen: &Observation, point: &str| {
        seen.mounts
            .iter()
            .position(|m| m.mount.point == point)
            .unwrap()
    };
    let (ws, tmp, shm) = (
        at(&seen, "/workspace"),
        at(&seen, "/tmp"),
        at(&seen, "/dev/shm"),
    );
    seen.mounts[ws].mount.writable = true;
    seen.mounts[tmp].size_bytes = Some(1 << 30);
    seen.mounts[shm].size_bytes = None;
    assert_eq!(
        checks(&seen),
        [
            "mounts./workspace",
            "mounts./dev/shm.sizeBytes",
            "mounts./tmp.sizeBytes"
        ]
    );
}

#[test]
fn an_unplanned_writable_mount_is_a_mismatch_but_bwraps_own_are_not() {
    let mut seen = observation();
    seen.mounts[2].mount.writable = true;
    seen.mounts
        .push(mount(8, "/home", true, "ext4", Some(1 << 40)));
    seen.mounts
        .push(mount(9, "/dev/sda", true, "devtmpfs", None));
    seen.mounts
        .push(mount(10, "/etc/x", true, "devtmpfs", None));
    assert_eq!(
        checks(&seen),
        ["mounts./dev", "mounts./home", "mounts./etc/x"],
        "a writable /dev (bwrap's unbounded tmpfs) is not planned"
    );
}

#[test]
fn a_planned_mount_hidden_by_a_later_mount_of_an_ancestor_is_a_mismatch() {
    // R4-2: a read-only extra bound, then a writable bind of its parent.
    let mut expect = expectation();
    for (point, writable) in [("/srv/data/secret", false), ("/srv/data", true)] {
        expect.mounts.push(PlannedMount {
            point: point.into(),
            writable,
        });
    }
    let mut seen = observation();
    seen.mounts
        .push(mount(9, "/srv/data/secret", false, "ext4", None));
    seen.mounts.push(mount(10, "/srv/data", true, "ext4", None));
    let found: Vec<_> = compare(&expect, &seen, PAGE)
        .into_iter()
        .map(|m| m.check)
        .collect();
    assert_eq!(found, ["mounts./srv/data/secret.covered"]);
    // Parent first, child on top: each is what the program sees.
    seen.mounts.swap(8, 9);
    assert_eq!(compare(&expect, &seen, PAGE), []);
    // A shared string prefix is not an ancestor.
    seen.mounts.push(mount(11, "/srv/dat", true, "ext4", None));
    expect.mounts.push(PlannedMount {
        point: "/srv/dat".into(),
        writable: true,
    });
    assert_eq!(compare(&expect, &seen, PAGE), []);
}

#[test]
fn a_mount_covered_by_a_later_one_is_judged_by_the_top_one() {
    let mut seen = observation();
    seen.mounts
        .push(mount(8, "/workspace", true, "ext4", Some(1)));
    assert_eq!(checks(&seen), ["mounts./workspace"]);
    let mut seen = observation();
    seen.mounts
        .insert(6, mount(8, "/workspace", true, "ext4", Some(1)));
    assert_eq!(checks(&seen), Vec::<String>::new());
}

#[test]
fn a_program_never_seen_while_alive_fails_but_one_that_ended_first_does_not() {
    use crate::observe::moment::NotObserved;
    use crate::observe::Report;
    assert_eq!(Report::NotObserved(NotObserved::Ended).mismatches(), []);
    // Killed by its own stop before it showed itself: not a mismatch (B2).
    assert_eq!(Report::NotObserved(NotObserved::Stopped).mismatches(), []);
    let unseen = Report::NotObserved(NotObserved::NotStarted).mismatches();
    assert_eq!(unseen.len(), 1);
    assert_eq!(unseen[0].check, "observation");
    assert_eq!(
        Report::Unreadable("gone".into()).mismatches()[0].check,
        "observation"
    );
}
