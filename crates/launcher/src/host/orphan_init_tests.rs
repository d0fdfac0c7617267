#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::*;
use crate::host::process_identity::{RUN_UIDS, RUN_UID_FIRST};

fn orphan() -> InitFacts {
    InitFacts {
        uid: 1_879_113_000,
        nspid: vec![4242, 1],
        exe_is_bwrap: true,
        parent_is_bwrap: false,
        parent_is_namespace_init: false,
    }
}

fn root_may(uid: u32) -> bool {
    sweepable_uid(uid, 0, None)
}

#[test]
fn only_an_init_of_bwrap_whose_parent_is_no_bwrap_is_an_orphan() {
    assert!(is_orphan_init(&orphan(), 1, root_may));
    let live = InitFacts {
        parent_is_bwrap: true,
        ..orphan()
    };
    assert!(!is_orphan_init(&live, 1, root_may), "its outer bwrap lives");
    let reaped_by_a_sandbox_init = InitFacts {
        parent_is_bwrap: true,
        parent_is_namespace_init: true,
        ..orphan()
    };
    assert!(
        is_orphan_init(&reaped_by_a_sandbox_init, 1, root_may),
        "a provider inside a bwrap sandbox: that sandbox's init reaps the orphan"
    );
    let reaped_by_an_init = InitFacts {
        parent_is_namespace_init: true,
        ..orphan()
    };
    assert!(is_orphan_init(&reaped_by_an_init, 1, root_may));
    let program = InitFacts {
        nspid: vec![4243, 2],
        ..orphan()
    };
    assert!(!is_orphan_init(&program, 1, root_may), "pid 2");
    let deeper = InitFacts {
        nspid: vec![4242, 17, 1],
        ..orphan()
    };
    assert!(!is_orphan_init(&deeper, 1, root_may), "two levels down");
    assert!(
        is_orphan_init(&deeper, 2, root_may),
        "one below a nested provider"
    );
    let host = InitFacts {
        nspid: vec![1],
        ..orphan()
    };
    assert!(!is_orphan_init(&host, 1, root_may), "the host's init");
    let other_binary = InitFacts {
        exe_is_bwrap: false,
        ..orphan()
    };
    assert!(
        !is_orphan_init(&other_binary, 1, root_may),
        "named bwrap only"
    );
    let account = InitFacts {
        uid: 1000,
        ..orphan()
    };
    assert!(!is_orphan_init(&account, 1, root_may), "a host account's");
}

#[test]
fn a_root_provider_sweeps_its_reserved_range_and_a_non_root_one_its_own_ids() {
    assert!(sweepable_uid(RUN_UID_FIRST, 0, None));
    assert!(sweepable_uid(RESERVED_UIDS.start, 0, None));
    assert!(!sweepable_uid(RESERVED_UIDS.end, 0, None));
    for uid in [0, 1000, 65534] {
        assert!(!sweepable_uid(uid, 0, None), "{uid}");
    }
    let sub = Some((1_342_177_280, 131_072));
    assert!(
        !sweepable_uid(65534, 65534, sub),
        "its own uid: the account's own bwraps use it too"
    );
    assert!(sweepable_uid(1_342_177_280, 65534, sub));
    assert!(sweepable_uid(1_342_177_280 + 131_071, 65534, sub));
    assert!(!sweepable_uid(1_342_177_280 + 131_072, 65534, sub));
    assert!(!sweepable_uid(RUN_UID_FIRST, 65534, sub), "root's range");
    assert!(!sweepable_uid(1000, 65534, None));
    assert!(!sweepable_uid(0, 65534, sub));
}

#[test]
fn the_proc_files_are_read_as_the_kernel_writes_them() {
    assert_eq!(
        comm_and_ppid("20021 (bwrap) S 1 20015 20015 0 -1 4194560"),
        Some(("bwrap", 1))
    );
    assert_eq!(
        comm_and_ppid("7 (a) b) S 99 7 7"),
        Some(("a) b", 99)),
        "a name with ') '"
    );
    assert_eq!(comm_and_ppid("garbage"), None);
    let status = "Name:\tbwrap\nUid:\t65534\t65534\t65534\t65534\nNSpid:\t20021\t1\n";
    assert_eq!(uid_and_nspid(status), Some((65534, vec![20021, 1])));
    assert_eq!(uid_and_nspid("Name:\tx\n"), None);
    let bwrap = Binary::of(Path::new("/usr/local/bin/bubblewrap-0.8.0-custom")).map(|b| b.comm);
    assert_eq!(bwrap, None, "no such file");
    let named = |name: &str| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, b"").unwrap();
        Binary::of(&path).unwrap().comm
    };
    assert_eq!(named("bwrap"), "bwrap");
    assert_eq!(
        named("bubblewrap-0.8.0-custom"),
        "bubblewrap-0.8.",
        "15 bytes, as the kernel keeps"
    );
}

/// A bwrap whose namespace init waits for its release (`--userns-block-fd`
/// held shut by the test): the outer bwrap, the init's pid, the block pipe.
fn blocked_bwrap(program: &Path, uid: u32) -> (Child, i32, OwnedFd) {
    let (block_read, block_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    let mut command = Command::new(program);
    command
        .args([
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--die-with-parent",
            "--userns-block-fd",
            "0",
            "--info-fd",
            "1",
            "--ro-bind",
            "/",
            "/",
            "/bin/sleep",
            "30",
        ])
        .stdin(Stdio::from(block_read))
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    command.uid(uid).gid(uid);
    let mut outer = command.spawn().expect("bwrap");
    let mut info = String::new();
    let stdout = outer.stdout.as_mut().unwrap();
    let mut byte = [0u8; 1];
    while !info.ends_with("}\n") && stdout.read(&mut byte).unwrap() == 1 {
        info.push(char::from(byte[0]));
    }
    let pid = info
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("child-pid in {info:?}"));
    (outer, pid, block_write)
}

/// Whether any process runs as `uid` now.
fn runs_as(uid: u32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let status = std::fs::read_to_string(e.path().join("status")).unwrap_or_default();
        uid_and_nspid(&status).is_some_and(|(u, _)| u == uid)
    })
}

/// Whether `pid` sleeps in `read(2)` (the init waiting for its release).
fn blocked_in_read(pid: i32) -> bool {
    (0..500).any(|_| {
        let text = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        let blocked = text.split_whitespace().next() == Some(&libc::SYS_read.to_string());
        if !blocked {
            std::thread::sleep(Duration::from_millis(10));
        }
        blocked
    })
}

/// Whether `pid` has a child (the program the init started).
fn has_child(pid: i32) -> bool {
    (0..500).any(|_| {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"));
        let found = children.is_ok_and(|c| !c.trim().is_empty());
        if !found {
            std::thread::sleep(Duration::from_millis(10));
        }
        found
    })
}

#[test]
fn a_sweep_kills_inits_whose_outer_bwrap_died_before_or_after_their_release_and_leaves_a_live_one()
{
    let test = "orphan_init::a_sweep_kills_inits_whose_outer_bwrap_died_before_or_after_their_release_and_leaves_a_live_one";
    let bwrap = Path::new("/usr/bin/bwrap");
    if !bwrap.exists() {
        crate::test_skip::skip(test, "no /usr/bin/bwrap");
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        // A non-root provider sweeps its subordinate uids only, which only
        // newuidmap enters (the uid-65534 pass of orphan-init.test.js).
        crate::test_skip::skip(test, "only root starts bwrap as a per-run uid here");
        return;
    }
    // A per-run uid near the top of the range (random leases rarely land
    // there) that nothing runs as.
    let uid = (RUN_UID_FIRST + RUN_UIDS - 64..RUN_UID_FIRST + RUN_UIDS)
        .find(|&u| !runs_as(u))
        .expect("an unused per-run uid");
    // Before its release: the outer bwrap gone while the init waits. Started
    // through a link of another name: found by its binary, not its name.
    let links = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        links.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let link = links.path().join("bubblewrap-link");
    std::os::unix::fs::symlink(bwrap, &link).unwrap();
    let (mut outer, waiting, _block) = blocked_bwrap(&link, uid);
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{waiting}/comm"))
            .unwrap()
            .trim(),
        "bubblewrap-link"
    );
    assert!(blocked_in_read(waiting), "the init waits for its release");
    outer.kill().unwrap();
    outer.wait().unwrap();
    let waiting_fd = pidfd::open(waiting).unwrap();
    // After its release (the test writes the init's maps, as newuidmap
    // would): the init stopped, released, its outer bwrap killed, then let
    // go. It finishes its set-up and starts the program.
    let (running, running_fd) = {
        let (mut outer, init, block) = blocked_bwrap(bwrap, uid);
        assert!(blocked_in_read(init));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(init), nix::sys::signal::SIGSTOP)
            .unwrap();
        std::fs::write(format!("/proc/{init}/uid_map"), format!("{uid} {uid} 1\n")).unwrap();
        std::fs::write(format!("/proc/{init}/setgroups"), "deny").unwrap();
        std::fs::write(format!("/proc/{init}/gid_map"), format!("{uid} {uid} 1\n")).unwrap();
        nix::unistd::write(&block, b"1").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        outer.kill().unwrap();
        outer.wait().unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(init), nix::sys::signal::SIGCONT)
            .unwrap();
        assert!(has_child(init), "the released orphan started its program");
        (init, pidfd::open(init).unwrap())
    };
    // A run still starting: its outer bwrap lives (waiting on the block fd).
    let (mut live_outer, live, live_block) = blocked_bwrap(bwrap, uid);
    assert!(blocked_in_read(live));
    let live_fd = pidfd::open(live).unwrap();

    // What it signalled is not counted: a launch of another test in this
    // process starts its own sweep in the background (launch.rs), which may
    // kill an orphan first (CI run 59: "1 signalled", both gone). That both
    // are gone and the live one stays is the sweep's contract.
    sweep(bwrap);
    let waiting_gone = pidfd::wait_exit(&waiting_fd, Duration::from_secs(10));
    let running_gone = pidfd::wait_exit(&running_fd, Duration::from_secs(10));
    let live_left = !pidfd::wait_exit(&live_fd, Duration::from_millis(200));
    // Clean up before asserting: whatever is left, then the live outer bwrap.
    let _ = pidfd::send_signal(&waiting_fd, libc::SIGKILL);
    let _ = pidfd::send_signal(&running_fd, libc::SIGKILL);
    let _ = pidfd::send_signal(&live_fd, libc::SIGKILL);
    drop(live_block);
    let _ = live_outer.kill();
    let _ = live_outer.wait();
    assert!(
        waiting_gone,
        "the init {waiting} orphaned before its release was killed"
    );
    assert!(
        running_gone,
        "the init {running} orphaned after its release was killed"
    );
    assert!(
        live_left,
        "the init {live} of a run still starting was left alone"
    );
}

#[test]
fn a_zombie_is_told_by_the_state_after_its_command_name() {
    assert!(stat_says_zombie("42 (bwrap) Z 1 42 42 0 -1 4194628"));
    // A command name may hold ") Z" itself.
    assert!(!stat_says_zombie("42 (a) Z b) S 1 42 42 0 -1 4194560"));
    assert!(!stat_says_zombie("garbage"));
    let me = std::fs::read_to_string("/proc/self/stat").unwrap();
    assert!(!stat_says_zombie(&me));
}

#[test]
fn only_pid_1_or_a_subreaper_inherits_orphans_and_scans_for_them() {
    // cargo's test process is neither: nothing is scanned for it.
    assert!(!inherits_orphans());
    assert_eq!(reap_exited_inits(), 0);
    // In a process of its own (the flag is per process), a subreaper does.
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "host::orphan_init::tests::subreaper_child",
            "--ignored",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the subreaper child: {status}");
}

#[test]
#[ignore = "run by only_pid_1_or_a_subreaper_inherits_orphans_and_scans_for_them"]
fn subreaper_child() {
    nix::sys::prctl::set_child_subreaper(true).unwrap();
    assert!(inherits_orphans());
}
