use super::plan::MAX_ID_BYTES;
use super::*;
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

const HYBRID: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/jobs/abc\n1:cpu,cpuacct:/\n0::/\n";
const LIMITS: CgroupLimits = CgroupLimits {
    memory_bytes: 64 << 20,
    pids: 32,
};

fn fake_root(files: &[&str]) -> PathBuf {
    let unique = format!("cordon-cgroup-fake-{}-{}", std::process::id(), files.len());
    let root = std::env::temp_dir().join(unique);
    let _ = fs::remove_dir_all(&root);
    for file in files {
        let path = root.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, "cpu io\n").unwrap();
    }
    root
}

#[test]
fn own_path_reads_the_line_of_a_controller_or_the_unified_line() {
    assert_eq!(own_path(HYBRID, "memory"), Some("/jobs/abc"));
    assert_eq!(own_path(HYBRID, "cpuacct"), Some("/"));
    assert_eq!(own_path(HYBRID, ""), Some("/"));
    assert_eq!(own_path(HYBRID, "freezer"), None);
}

#[test]
fn a_hybrid_host_without_v2_controllers_uses_v1_under_its_own_cgroups() {
    let root = fake_root(&[
        "unified/cgroup.controllers",
        "memory/jobs/abc/cgroup.procs",
        "pids/cgroup.procs",
    ]);
    let found = detect_in(&root, HYBRID).unwrap();
    let want = Hierarchy::V1 {
        memory_own: root.join("memory/jobs/abc"),
        pids_own: root.join("pids"),
    };
    assert_eq!(found, want);
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_v2_mount_with_memory_and_pids_is_used_at_its_root_wherever_the_provider_sits() {
    let root = fake_root(&["cgroup.controllers", "cgroup.subtree_control"]);
    fs::write(root.join("cgroup.controllers"), "cpu io memory pids\n").unwrap();
    let unified = "0::/user.slice/user-0.slice/session-3.scope\n";
    let found = detect_in(&root, unified).unwrap();
    assert_eq!(found, Hierarchy::V2 { own: root.clone() });
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn no_usable_hierarchy_names_what_each_version_lacked() {
    let root = fake_root(&["unified/cgroup.controllers"]);
    let error = detect_in(&root, HYBRID).unwrap_err().to_string();
    assert!(error.contains("lacks memory and/or pids"), "{error}");
    assert!(
        error.contains("memory") && error.contains("is not a cgroup"),
        "{error}"
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn the_v1_plan_writes_memsw_after_the_memory_limit_and_kills_by_signal() {
    let hierarchy = Hierarchy::V1 {
        memory_own: "/m/own".into(),
        pids_own: "/p".into(),
    };
    let plan = plan(&hierarchy, "run-1", &LIMITS).unwrap();
    let writes: Vec<(String, &str)> = plan
        .limits
        .iter()
        .map(|w| (w.path.display().to_string(), w.value.as_str()))
        .collect();
    assert_eq!(
        writes,
        [
            (
                "/m/own/cordon/run-1/memory.limit_in_bytes".to_string(),
                "67108864"
            ),
            (
                "/m/own/cordon/run-1/memory.memsw.limit_in_bytes".to_string(),
                "67108864"
            ),
            ("/p/cordon/run-1/pids.max".to_string(), "32"),
        ]
    );
    assert_eq!(
        plan.leaves,
        [
            PathBuf::from("/m/own/cordon/run-1"),
            PathBuf::from("/p/cordon/run-1")
        ]
    );
    let signal = KillMethod::FreezeForksThenSignal {
        pids_max: "/p/cordon/run-1/pids.max".into(),
        procs: "/p/cordon/run-1/cgroup.procs".into(),
    };
    assert_eq!(plan.kill, signal);
    // bwrap's child joins each leaf itself, by its `tasks` file.
    assert_eq!(
        plan.spawn_joins,
        [
            PathBuf::from("/m/own/cordon/run-1/tasks"),
            PathBuf::from("/p/cordon/run-1/tasks")
        ]
    );
}

#[test]
fn the_v2_plan_enables_controllers_on_the_parent_and_kills_with_cgroup_kill() {
    let plan = plan(&Hierarchy::V2 { own: "/cg".into() }, "run-2", &LIMITS).unwrap();
    assert_eq!(
        plan.parent_setup[1].path,
        PathBuf::from("/cg/cordon/cgroup.subtree_control")
    );
    assert_eq!(plan.parent_setup[1].value, "+memory +pids");
    assert_eq!(
        plan.limits[0].path,
        PathBuf::from("/cg/cordon/run-2/memory.max")
    );
    assert_eq!(
        plan.kill,
        KillMethod::CgroupKill {
            file: "/cg/cordon/run-2/cgroup.kill".into()
        }
    );
    // v2 moves bwrap by pid after its exec (no thread moves outside a
    // threaded subtree).
    assert!(plan.spawn_joins.is_empty());
}

#[test]
fn ids_that_could_escape_the_parent_are_refused() {
    let hierarchy = Hierarchy::V2 { own: "/cg".into() };
    for id in ["", "..", "a/b", "x y", &"z".repeat(MAX_ID_BYTES + 1)] {
        assert!(
            matches!(
                plan(&hierarchy, id, &LIMITS),
                Err(CgroupError::InvalidInvocationId { .. })
            ),
            "{id:?}"
        );
    }
}

#[test]
fn membership_is_read_from_the_pids_line() {
    assert!(in_leaf("8:pids:/own/cordon/r1\n4:memory:/x\n", "r1"));
    assert!(!in_leaf("8:pids:/own/cordon/r10\n", "r1"));
    assert!(!in_leaf("4:memory:/own/cordon/r1\n", "r1"));
    assert!(in_leaf("0::/cordon/r1\n", "r1"), "the v2 line");
}

/// Kills and removes the cgroup even when an assertion fails first.
struct Cleanup(Option<ExecutionCgroup>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(cgroup) = self.0.take() {
            let _ = cgroup.kill_all(Duration::from_secs(5));
            let _ = cgroup.remove();
        }
    }
}

impl std::ops::Deref for Cleanup {
    type Target = ExecutionCgroup;
    fn deref(&self) -> &ExecutionCgroup {
        self.0.as_ref().unwrap()
    }
}

fn real_cgroup(id: &str, limits: &CgroupLimits) -> Option<Cleanup> {
    match detect() {
        Ok(hierarchy) => Some(Cleanup(Some(
            create(&plan(&hierarchy, id, limits).unwrap()).unwrap(),
        ))),
        Err(e) => {
            crate::test_skip::skip(
                &format!("cgroup::{id}"),
                &format!("no writable cgroup hierarchy on this host: {e}"),
            );
            None
        }
    }
}

const BWRAP: &str = "/usr/bin/bwrap";

/// The way a launch joins its sandbox (spawn.rs, supervisor.rs
/// `release_bwrap`): bwrap starts waiting for its options on an `--args`
/// socket, is added to the cgroup by pid, and only then gets the options,
/// so it is inside before it forks its namespace init and the program.
fn spawn_inside(cgroup: &ExecutionCgroup, script: &str) -> std::process::Child {
    let (mut options, bwrap_end) = UnixStream::pair().unwrap();
    let child = Command::new(BWRAP)
        .args(["--args", "0", "/bin/sh", "-c", script])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(bwrap_end)))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    cgroup.add_pid(child.id()).unwrap();
    let argv = [
        "--unshare-user",
        "--unshare-pid",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ];
    for arg in argv {
        options.write_all(arg.as_bytes()).unwrap();
        options.write_all(b"\0").unwrap();
    }
    drop(options);
    child
}

/// A plain shell joined in the same order (held before it runs `script`,
/// added by pid, released): without bwrap's pid namespace, what it started
/// outlives it when a failed fork makes it exit.
fn spawn_held(cgroup: &ExecutionCgroup, script: &str) -> std::process::Child {
    let mut child = Command::new("/bin/sh")
        .args(["-c", "read _ && exec /bin/sh -c \"$0\"", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    cgroup.add_pid(child.id()).unwrap();
    let mut release = child.stdin.take().unwrap();
    release.write_all(b"go\n").unwrap();
    child
}

/// Members whose command is `name`.
fn members_named(cgroup: &ExecutionCgroup, name: &str) -> usize {
    let members = cgroup.members().unwrap();
    members
        .iter()
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
        })
        .count()
}

fn have_bwrap(test: &str) -> bool {
    let found = Path::new(BWRAP).exists();
    if !found {
        crate::test_skip::skip(&format!("cgroup::{test}"), "no /usr/bin/bwrap");
    }
    found
}

#[test]
fn a_sandbox_joined_like_a_launch_is_killed_whole_and_the_cgroup_removed() {
    let id = format!("test-kill-{}", std::process::id());
    if !have_bwrap(&id) {
        return;
    }
    let Some(cgroup) = real_cgroup(&id, &LIMITS) else {
        return;
    };
    let mut child = spawn_inside(&cgroup, "sleep 60 & sleep 60 & setsid sleep 60 & wait");
    let start = Instant::now();
    while members_named(&cgroup, "sleep") < 3 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        members_named(&cgroup, "sleep"),
        3,
        "three sleeps are inside"
    );
    assert_eq!(members_named(&cgroup, "sh"), 1, "the shell is inside");
    let bwrap = i32::try_from(child.id()).unwrap();
    assert!(
        cgroup.members().unwrap().contains(&bwrap),
        "bwrap is inside"
    );
    cgroup.kill_all(Duration::from_secs(5)).unwrap();
    assert!(cgroup.members().unwrap().is_empty());
    assert!(
        child.wait().unwrap().code().is_none(),
        "sh died of a signal"
    );
    let leaves = cgroup.plan().leaves.clone();
    cgroup.remove().unwrap();
    assert!(leaves.iter().all(|leaf| !leaf.exists()));
}

#[test]
fn the_pids_ceiling_makes_extra_forks_fail() {
    let id = format!("test-pids-{}", std::process::id());
    let limits = CgroupLimits { pids: 3, ..LIMITS };
    let Some(cgroup) = real_cgroup(&id, &limits) else {
        return;
    };
    let mut child = spawn_held(&cgroup, "for i in 1 2 3 4 5 6; do sleep 60 & done; wait");
    std::thread::sleep(Duration::from_millis(300));
    // Unbounded, sh and six sleeps would be 7; dash may exit on the failed fork.
    let members = cgroup.members().unwrap().len();
    assert!(
        (1..=3).contains(&members),
        "{members} processes in a pids.max=3 cgroup"
    );
    cgroup.kill_all(Duration::from_secs(5)).unwrap();
    child.wait().unwrap();
}

#[test]
fn a_memory_bomb_is_oom_killed_inside_its_cgroup() {
    let id = format!("test-oom-{}", std::process::id());
    let limits = CgroupLimits {
        memory_bytes: 16 << 20,
        ..LIMITS
    };
    if !have_bwrap(&id) {
        return;
    }
    let Some(cgroup) = real_cgroup(&id, &limits) else {
        return;
    };
    let mut child = spawn_inside(
        &cgroup,
        "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}",
    );
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(
        cgroup.oom_kills() >= 1,
        "the kernel counted an OOM kill in the leaf"
    );
}

#[test]
fn only_old_empty_leaves_are_reaped() {
    let id = format!("test-reap-{}", std::process::id());
    if !have_bwrap(&id) {
        return;
    }
    let Some(cgroup) = real_cgroup(&id, &LIMITS) else {
        return;
    };
    let parent = cgroup.plan().parents[1].clone();
    let leaf = cgroup.plan().leaves[1].clone();
    reap_stale(&parent, Duration::from_secs(3600));
    assert!(leaf.exists(), "a young leaf stays");
    let mut child = spawn_inside(&cgroup, "sleep 60");
    // Ages of a second, not zero: leaves of concurrently running tests are
    // younger than that and must not be touched.
    std::thread::sleep(Duration::from_millis(1200));
    reap_stale(&parent, Duration::from_secs(1));
    assert!(leaf.exists(), "a populated leaf stays");
    cgroup.kill_all(Duration::from_secs(5)).unwrap();
    child.wait().unwrap();
    reap_stale(&parent, Duration::from_secs(1));
    assert!(!leaf.exists(), "an old empty leaf goes");
}

#[test]
fn a_running_process_added_by_pid_is_a_member_and_is_killed() {
    let id = format!("test-add-{}", std::process::id());
    let Some(cgroup) = real_cgroup(&id, &LIMITS) else {
        return;
    };
    let mut child = Command::new("/bin/sleep").arg("60").spawn().unwrap();
    cgroup.add_pid(child.id()).unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    assert_eq!(cgroup.members().unwrap(), vec![pid]);
    cgroup.kill_all(Duration::from_secs(5)).unwrap();
    assert!(child.wait().unwrap().code().is_none(), "killed by a signal");
}

#[test]
fn a_non_root_provider_inside_its_delegated_subtree_puts_run_cgroups_under_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = crate::plan::cgroup::delegated_dir(root.path(), 1000);
    assert!(dir.ends_with("user.slice/user-1000.slice/user@1000.service"));
    let inside = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n";
    let outside = "0::/user.slice/user-1000.slice/session-3.scope\n";
    let missing = crate::plan::cgroup::delegated_v2(root.path(), inside, 1000).unwrap_err();
    assert!(missing.contains("no delegated subtree"), "{missing}");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cgroup.controllers"), "cpu pids\n").unwrap();
    let partial = crate::plan::cgroup::delegated_v2(root.path(), inside, 1000).unwrap_err();
    assert!(partial.contains("lacks memory"), "{partial}");
    std::fs::write(dir.join("cgroup.controllers"), "cpu memory pids\n").unwrap();
    let elsewhere = crate::plan::cgroup::delegated_v2(root.path(), outside, 1000).unwrap_err();
    assert!(elsewhere.contains("outside"), "{elsewhere}");
    assert_eq!(
        crate::plan::cgroup::delegated_v2(root.path(), inside, 1000).unwrap(),
        dir
    );
}

/// What a launch does on v1 (spawn.rs): the child cloned for bwrap writes
/// "0" to each leaf's `tasks` before its exec, so what it execs starts
/// inside both leaves.
#[test]
fn a_child_that_joins_by_its_tasks_files_execs_inside_every_leaf() {
    let id = format!("test-spawn-join-{}", std::process::id());
    let Some(cgroup) = real_cgroup(&id, &LIMITS) else {
        return;
    };
    if !cgroup.joins_at_spawn() {
        return crate::test_skip::skip(
            "cgroup::spawn_join",
            "a v2 hierarchy joins by pid after the exec",
        );
    }
    let joins = cgroup.open_spawn_joins().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cgroup");
    let script = format!("cat /proc/self/cgroup > {}", out.display());
    let image = crate::host::clone_exec::ExecImage::new(
        Path::new("/bin/sh"),
        ["/bin/sh", "-c", script.as_str()],
        std::iter::empty::<&str>(),
    )
    .unwrap();
    // SAFETY: the set-up iterates a Vec made before the clone and makes one
    // direct write(2) per item: no allocation, lock or panic.
    let mut child = unsafe {
        crate::host::clone_exec::spawn(&image, || {
            joins
                .iter()
                .try_for_each(|(_, fd)| crate::run::spawn::join_cgroup(fd.as_raw_fd()))
        })
    }
    .unwrap();
    assert!(child.wait().unwrap().success());
    let text = fs::read_to_string(&out).unwrap();
    let suffix = format!("/cordon/{id}");
    for controller in ["memory", "pids"] {
        let line = text
            .lines()
            .find(|l| l.split(':').nth(1) == Some(controller))
            .unwrap_or_else(|| panic!("no {controller} line in {text}"));
        assert!(line.ends_with(&suffix), "{line} (want {suffix})");
    }
    // The caller's own thread stayed where it was.
    let own = fs::read_to_string("/proc/thread-self/cgroup").unwrap();
    assert!(!own.contains(&suffix), "{own}");
}

#[test]
fn a_join_on_a_descriptor_it_cannot_write_is_its_errno() {
    let read_only = fs::File::open("/dev/null").unwrap();
    let error = crate::run::spawn::join_cgroup(read_only.as_raw_fd()).unwrap_err();
    assert_eq!(error.raw_os_error(), Some(libc::EBADF));
}

/// A process whose main thread exited while another thread lives reads `/`
/// in `/proc/<pid>/cgroup`, though its thread is in the leaf: the v1 kill
/// must still signal it (white-box round on the v1 join, F2: without a pid
/// namespace around it, kill_all waited until its timeout).
#[test]
fn the_kill_reaches_a_process_whose_main_thread_has_exited() {
    const ZOMBIE_LEADER_C: &str = r#"
#include <pthread.h>
#include <unistd.h>
static void *wait_forever(void *arg) { for (;;) pause(); return arg; }
int main(void) {
    pthread_t thread;
    if (fork() == 0) { pthread_create(&thread, 0, wait_forever, 0); pthread_exit(0); }
    pthread_create(&thread, 0, wait_forever, 0);
    pthread_exit(0);
}
"#;
    let id = format!("test-zombie-leader-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("zombie-leader.c");
    fs::write(&source, ZOMBIE_LEADER_C).unwrap();
    let binary = dir.path().join("zombie-leader");
    match Command::new("cc")
        .args(["-O0", "-pthread", "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
    {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return crate::test_skip::skip(&format!("cgroup::{id}"), "no C compiler");
        }
        built => assert!(built.unwrap().success(), "the probe must compile"),
    }
    let Some(cgroup) = real_cgroup(&id, &LIMITS) else {
        return;
    };
    let mut child = spawn_held(&cgroup, binary.to_str().unwrap());
    // Both probe processes are in, each down to its one thread, their
    // leaders zombies.
    let start = Instant::now();
    let leaders_gone = || {
        let members = cgroup.members().unwrap();
        members
            .iter()
            .filter(|pid| {
                fs::read_to_string(format!("/proc/{pid}/status"))
                    .is_ok_and(|s| s.starts_with("Name:\tzombie-leader") && s.contains("State:\tZ"))
            })
            .count()
            == 2
    };
    while !leaders_gone() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(leaders_gone(), "{:?}", cgroup.members());
    cgroup.kill_all(Duration::from_secs(5)).unwrap();
    assert!(cgroup.members().unwrap().is_empty());
    let _ = child.wait();
}
