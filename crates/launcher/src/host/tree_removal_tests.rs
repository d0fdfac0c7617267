use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use super::*;

/// On /dev/shm when there is one: on a disk-backed /tmp (mounted with
/// `discard`) each removed directory can cost a synchronous discard, and
/// the deep test would measure the disk.
fn scratch(name: &str) -> PathBuf {
    let shm = Path::new("/dev/shm");
    let parent = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let dir = parent.join(format!(
        "cordon-tree-test-{name}-{}",
        crate::host::process_identity::random_hex(8).unwrap()
    ));
    fs::create_dir(&dir).unwrap();
    dir
}

/// `mkdir d; chdir d` `levels` times, by descriptor (no path grows).
fn nest(root: &Path, levels: usize) {
    let mut dir = OwnedFd::from(fs::File::open(root).unwrap());
    for _ in 0..levels {
        nix::sys::stat::mkdirat(&dir, c"d", Mode::from_bits_truncate(0o755)).unwrap();
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        dir = openat(&dir, c"d", flags, Mode::empty()).unwrap();
    }
    fs::write(
        "/proc/self/fd/".to_string() + &dir.as_raw_fd().to_string() + "/leaf",
        "x",
    )
    .unwrap();
}

/// Descriptors the deep-tree test's child process may hold in all: a walk
/// holding one per level would fail with EMFILE within its first levels.
const LOW_NOFILE: u64 = 32;
const LOW_NOFILE_ENV: &str = "CORDON_TREE_TEST_LOW_NOFILE";
const DEEP_TEST: &str =
    "host::tree_removal::tests::a_tree_nested_far_deeper_than_a_stack_or_fd_table_allows_is_removed";

#[test]
fn a_tree_nested_far_deeper_than_a_stack_or_fd_table_allows_is_removed() {
    if std::env::var_os(LOW_NOFILE_ENV).is_none() {
        // Re-run this test alone in a child whose NOFILE is tiny.
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", DEEP_TEST, "--test-threads", "1"]);
        child.env(LOW_NOFILE_ENV, "1");
        // SAFETY: pre_exec runs in the forked child; the closure only
        // calls setrlimit (a direct syscall, async-signal-safe, no
        // allocation).
        unsafe {
            child.pre_exec(|| {
                let nofile = nix::sys::resource::Resource::RLIMIT_NOFILE;
                if let Err(errno) = nix::sys::resource::setrlimit(nofile, LOW_NOFILE, LOW_NOFILE) {
                    return Err(errno.into());
                }
                Ok(())
            });
        }
        let out = child.output().unwrap();
        crate::live_support::assert_inner_test_passed(&out);
        return;
    }
    let base = scratch("deep");
    let tree = base.join("tree");
    fs::create_dir(&tree).unwrap();
    nest(&tree, 30_000);
    // A 64 KiB stack: recursion per level would overflow it many times over.
    let removal = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn({
            let tree = tree.clone();
            move || remove_tree(&tree)
        })
        .unwrap();
    removal.join().expect("no stack overflow").unwrap();
    assert!(!tree.exists());
    fs::remove_dir(base).unwrap();
}

#[test]
fn links_fifos_sockets_and_locked_directories_are_removed_and_nothing_outside_is_touched() {
    let base = scratch("hostile");
    let outside = base.join("outside");
    fs::create_dir(&outside).unwrap();
    let victim = outside.join("victim");
    fs::write(&victim, "precious").unwrap();
    let tree = base.join("tree");
    fs::create_dir_all(tree.join("a/b")).unwrap();
    std::os::unix::fs::symlink(&outside, tree.join("link-to-dir")).unwrap();
    std::os::unix::fs::symlink(&victim, tree.join("a/link-to-file")).unwrap();
    std::os::unix::fs::symlink("/", tree.join("a/b/link-to-root")).unwrap();
    fs::hard_link(&victim, tree.join("a/hardlink")).unwrap();
    nix::unistd::mkfifo(&tree.join("a/fifo"), Mode::S_IRUSR | Mode::S_IWUSR).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(tree.join("a/b/socket")).unwrap();
    for i in 0..2000 {
        fs::write(tree.join(format!("a/wide-{i}")), "w").unwrap();
    }
    fs::create_dir_all(tree.join("locked/inner/deeper")).unwrap();
    fs::write(tree.join("locked/inner/file"), "f").unwrap();
    fs::set_permissions(tree.join("locked/inner"), fs::Permissions::from_mode(0o000)).unwrap();
    fs::create_dir_all(tree.join("readonly/sub")).unwrap();
    fs::write(tree.join("readonly/sub/file"), "f").unwrap();
    fs::set_permissions(tree.join("readonly/sub"), fs::Permissions::from_mode(0o555)).unwrap();
    fs::set_permissions(tree.join("readonly"), fs::Permissions::from_mode(0o555)).unwrap();

    remove_tree(&tree).unwrap();

    assert!(!tree.exists());
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "the linked-to directory kept its entry"
    );
    assert!(Path::new("/usr").exists());
    fs::remove_dir_all(base).unwrap();
}

#[test]
fn a_symlink_given_as_the_tree_is_unlinked_not_followed_and_a_missing_tree_is_already_removed() {
    let base = scratch("root-link");
    let target = base.join("target");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("keep"), "k").unwrap();
    let link = base.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    remove_tree(&link).unwrap();
    assert!(fs::symlink_metadata(&link).is_err());
    assert!(target.join("keep").exists());
    remove_tree(&base.join("never-existed")).unwrap();
    fs::remove_dir_all(base).unwrap();
}

#[test]
fn unlocking_a_name_that_is_a_symlink_changes_nothing_and_a_real_directory_is_unlocked() {
    let base = scratch("unlock-link");
    let outside = base.join("outside-file");
    fs::write(&outside, "host").unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
    let tree = base.join("tree");
    fs::create_dir(&tree).unwrap();
    std::os::unix::fs::symlink(&outside, tree.join("swapped")).unwrap();
    fs::create_dir(tree.join("locked")).unwrap();
    fs::set_permissions(tree.join("locked"), fs::Permissions::from_mode(0o000)).unwrap();
    let at = OwnedFd::from(fs::File::open(&tree).unwrap());
    // A name read as a directory, swapped for a link before the chmod: the
    // chmod must not reach the link's target.
    assert!(make_owner_accessible(at.as_fd(), c"swapped").is_err());
    let mode = fs::metadata(&outside).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o644, "the link's target kept its mode");
    make_owner_accessible(at.as_fd(), c"locked").unwrap();
    let mode = fs::metadata(tree.join("locked"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
    fs::remove_dir_all(base).unwrap();
}

#[test]
fn a_descriptor_that_cannot_become_a_directory_stream_is_closed_not_leaked() {
    let base = scratch("stream-leak");
    let file = base.join("not-a-directory");
    fs::write(&file, "x").unwrap();
    let fd = OwnedFd::from(fs::File::open(&file).unwrap());
    let (raw, inode) = (fd.as_raw_fd(), fs::metadata(&file).unwrap().ino());
    assert_eq!(dir_stream(fd).err(), Some(Errno::ENOTDIR));
    // Another test's thread may reuse the number at once: it would name
    // another file, never this one.
    let still_open = fs::metadata(format!("/proc/self/fd/{raw}")).is_ok_and(|m| m.ino() == inode);
    assert!(
        !still_open,
        "the descriptor of the failed stream was leaked"
    );
    fs::remove_dir_all(base).unwrap();
}

/// The kernel refuses rmdir of a mount point (EBUSY) before the walk could
/// descend, and the walk also refuses to enter a directory on another
/// device: either way the walk stops with an error and the mounted
/// filesystem is untouched.
#[test]
fn a_mount_point_below_the_tree_is_never_entered() {
    if !nix::unistd::geteuid().is_root() {
        crate::test_skip::skip(
            "tree_removal::a_mount_point_below_the_tree_is_never_entered",
            "needs root to mount a tmpfs inside the tree",
        );
        return;
    }
    let base = scratch("mount-below");
    let mount_point = base.join("a").join("mnt");
    fs::create_dir_all(&mount_point).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "cordon-test"])
        .arg(&mount_point)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs for the test");
    fs::write(mount_point.join("other-filesystem"), "keep").unwrap();
    let removal = remove_tree(&base);
    let kept = mount_point.join("other-filesystem").exists();
    let unmounted = std::process::Command::new("umount")
        .arg(&mount_point)
        .status()
        .unwrap();
    assert!(unmounted.success());
    assert!(removal.is_err(), "the walk reports the mount point");
    assert!(kept, "nothing on the mounted filesystem was removed");
    remove_tree(&base).unwrap();
}

#[test]
fn a_removal_with_an_entry_budget_stops_past_it_and_finishes_within_it() {
    let root = scratch("budget");
    for i in 0..10 {
        fs::write(root.join(format!("f{i}")), "x").unwrap();
    }
    nest(&root, 5);
    // 10 files + 5 levels + 1 leaf = 16 entries at least.
    assert!(matches!(
        remove_tree_within(&root, 4),
        Err(TreeRemovalError::OverBudget { max_entries: 4, .. })
    ));
    assert!(root.exists(), "stopped, not finished");
    empty_tree(&root, 64).unwrap();
    assert_eq!(fs::read_dir(&root).unwrap().count(), 0, "emptied, kept");
    remove_tree_within(&root, 64).unwrap();
    assert!(!root.exists());
}
