//! `cordon-exec-agent session-files`, its request `[<holder-pid>, <holder-start>, <uid>, <dir>,
//! <op>, <path>, arg…]` one JSON line on stdin (before a write's bytes), never
//! argv: /proc/<pid>/cmdline is world-readable, and the workspace (its key)
//! and the path name what a session reads and writes (round 9, R9-5):
//! one host file operation of a NON-ROOT provider's session (docs/sessions.md,
//! "Non-root providers"). The workspace is a tmpfs owned by the session's
//! uid U inside the holder's namespaces (session_holder.rs); the provider
//! cannot look into it from outside (its directory is 0700 of a subordinate
//! uid), so this helper, a fresh single-threaded process, joins the holder's
//! user and mount namespaces, becomes U, checks that `<dir>` is that tmpfs,
//! and does the operation there with the root path's rules (lib/sessions/
//! files.js): every step `openat(dirfd, name, O_NOFOLLOW)` from the
//! workspace root (a link anywhere: ELOOP), the kind judged by `fstat` on
//! the open descriptor, opens `O_NONBLOCK` (a FIFO never blocks).
//!
//! Ops: `read <path> <maxBytes>` (the bytes on stdout), `write <path>` (the
//! bytes on stdin), `list <path>`, `remove <path> <flat|recursive> <maxEntries>`.
//! Exit 0: the result on stdout (JSON but for `read`). Exit 1: a JSON
//! `{"errno": NAME, "syscall": ...}` or `{"refused": ..., ...}` on stdout,
//! which the provider maps to the root path's error codes. Exit 2: usage or
//! the holder could not be entered (message on stderr).

use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{openat, renameat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};

/// Largest read or write (bytes): files.js's MAX_FILE_BYTES.
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Entries `list` returns at most: files.js's MAX_LIST_ENTRIES.
const MAX_LIST_ENTRIES: usize = 10_000;
const TMPFS_MAGIC: i64 = 0x0102_1994;
/// Longest request line (bytes): a workspace path, a relative path (each
/// segment at most NAME_MAX) and a few numbers fit many times over.
const MAX_REQUEST_BYTES: u64 = 64 << 10;

const DIR: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// Why an operation failed, as the provider reads it (exit 1).
#[derive(Debug)]
pub(crate) enum Failure {
    Sys(Errno, &'static str),
    Refused(String),
}

impl From<Errno> for Failure {
    fn from(e: Errno) -> Failure {
        Failure::Sys(e, "")
    }
}

pub(crate) fn sys(syscall: &'static str) -> impl Fn(Errno) -> Failure {
    move |e| Failure::Sys(e, syscall)
}

type Outcome = Result<Vec<u8>, Failure>;

fn usage(message: &str) -> ! {
    eprintln!("cordon-exec-agent session-files: {message}");
    std::process::exit(2)
}

/// Pure: a workspace-relative path → its segments (no `..`, `.`, empty or absolute).
pub fn segments(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') || path.contains('\0') {
        return None;
    }
    let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if parts.iter().any(|s| *s == ".." || *s == ".") {
        return None;
    }
    Some(parts)
}

/// Pure: the kind files.js names for a mode.
pub fn kind(mode: u32) -> &'static str {
    match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => "file",
        SFlag::S_IFDIR => "directory",
        SFlag::S_IFLNK => "symlink",
        SFlag::S_IFIFO => "fifo",
        SFlag::S_IFSOCK => "socket",
        SFlag::S_IFBLK | SFlag::S_IFCHR => "device",
        _ => "other",
    }
}

/// Joins the holder's user and mount namespaces and becomes `uid` (a fresh
/// process: single-threaded, as setns(CLONE_NEWUSER) requires), keeping
/// only the file-permission capabilities the root path has. The holder
/// is `/proc/<holder>` opened once: its `stat` must show `start` (field 22,
/// as the provider recorded it) and its namespaces are opened through that
/// same descriptor, so a holder that died and whose pid was reused since
/// the provider checked it is refused (ESRCH), never entered.
fn enter(holder: i32, start: &str, uid: u32) -> nix::Result<()> {
    let dir = openat(
        nix::fcntl::AT_FDCWD,
        format!("/proc/{holder}").as_str(),
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let open = |name: &str| {
        openat(
            &dir,
            name,
            OFlag::O_RDONLY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
    };
    let mut stat = String::new();
    File::from(open("stat")?)
        .read_to_string(&mut stat)
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(libc_eio())))?;
    if started_at(&stat) != Some(start) {
        return Err(Errno::ESRCH);
    }
    let (user, mnt) = (open("ns/user")?, open("ns/mnt")?);
    nix::sched::setns(user.as_fd(), nix::sched::CloneFlags::CLONE_NEWUSER)?;
    nix::sched::setns(mnt.as_fd(), nix::sched::CloneFlags::CLONE_NEWNS)?;
    nix::unistd::setgroups(&[])?;
    let gid = nix::unistd::Gid::from_raw(uid);
    nix::unistd::setresgid(gid, gid, gid)?;
    let id = nix::unistd::Uid::from_raw(uid);
    nix::unistd::setresuid(id, id, id)?;
    // The switch to U left every capability of the holder's namespace in
    // place (its uid was never 0 there): keep only the root path's file
    // permissions, before the workspace is touched (owner_capabilities.rs).
    crate::owner_capabilities::keep_only(crate::owner_capabilities::mask(
        &crate::owner_capabilities::KEPT,
    ))
}

/// Pure: field 22 of a `/proc/<pid>/stat` line (its start time, in clock
/// ticks since boot). The command name (field 2) may hold spaces and
/// parentheses, so fields count from the last `)`.
fn started_at(stat: &str) -> Option<&str> {
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)
}

fn libc_eio() -> i32 {
    Errno::EIO as i32
}

/// The workspace root: reached no-follow from `/`, and it must be the
/// holder's tmpfs, U's (else this is not the session's workspace). Any
/// mode: U owns the root and its commands may `chmod` it, which opens it to
/// no one, as only the holder's mount namespace has it (round 7b, R7b-2).
fn open_root(dir: &str, uid: u32) -> Result<OwnedFd, String> {
    // Ancestors O_PATH (U may only search them: the sessions root is 0711),
    // the workspace itself for reading.
    let path_only = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut fd = openat(nix::fcntl::AT_FDCWD, "/", path_only, Mode::empty())
        .map_err(|e| format!("open /: {e}"))?;
    let names: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    let Some((last, ancestors)) = names.split_last() else {
        return Err("the workspace cannot be /".into());
    };
    for name in ancestors {
        fd =
            openat(&fd, *name, path_only, Mode::empty()).map_err(|e| format!("open {dir}: {e}"))?;
    }
    let fd = open_dir_at(Some(&fd), last).map_err(|e| format!("open {dir}: {e}"))?;
    let st = fstat(&fd).map_err(|e| format!("fstat {dir}: {e}"))?;
    let fs = nix::sys::statfs::fstatfs(&fd).map_err(|e| format!("statfs {dir}: {e}"))?;
    #[allow(clippy::useless_conversion)]
    let is_tmpfs = i64::from(fs.filesystem_type().0) == TMPFS_MAGIC;
    if !is_tmpfs || st.st_uid != uid {
        return Err(format!(
            "{dir} is not the session's workspace (a tmpfs of uid {uid})"
        ));
    }
    Ok(fd)
}

fn open_dir_at(dir: Option<&OwnedFd>, name: &str) -> nix::Result<OwnedFd> {
    match dir {
        Some(dir) => openat(dir, name, DIR, Mode::empty()),
        None => openat(nix::fcntl::AT_FDCWD, name, DIR, Mode::empty()),
    }
}

/// The directory `parts` names below the root, each step no-follow.
fn walk(root: &OwnedFd, parts: &[&str]) -> Result<OwnedFd, Failure> {
    let mut fd = root
        .try_clone()
        .map_err(|_| Failure::Sys(Errno::EMFILE, "dup"))?;
    for name in parts {
        fd = open_dir_at(Some(&fd), name).map_err(sys("openat"))?;
    }
    Ok(fd)
}

fn leaf<'a>(parts: &'a [&'a str]) -> Result<(&'a [&'a str], &'a str), Failure> {
    match parts.split_last() {
        Some((leaf, dirs)) => Ok((dirs, leaf)),
        None => Err(Failure::Refused(r#"{"refused":"root"}"#.into())),
    }
}

fn read(root: &OwnedFd, parts: &[&str], max: u64) -> Outcome {
    let (dirs, name) = leaf(parts)?;
    let dir = walk(root, dirs)?;
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let file = File::from(
        openat(&dir, name, flags | OFlag::O_CLOEXEC, Mode::empty()).map_err(sys("open"))?,
    );
    let st = fstat(&file).map_err(sys("fstat"))?;
    if kind(st.st_mode) != "file" {
        return Err(Failure::Refused(format!(
            r#"{{"refused":"type","kind":"{}"}}"#,
            kind(st.st_mode)
        )));
    }
    let size = u64::try_from(st.st_size).unwrap_or(u64::MAX);
    if size > max {
        return Err(Failure::Refused(format!(
            r#"{{"refused":"too-large","size":{size}}}"#
        )));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_failure(&e, "read"))?;
    if bytes.len() as u64 > max {
        return Err(Failure::Refused(r#"{"refused":"grew"}"#.into()));
    }
    Ok(bytes)
}

fn io_failure(e: &std::io::Error, syscall: &'static str) -> Failure {
    Failure::Sys(
        Errno::from_raw(e.raw_os_error().unwrap_or(libc_eio())),
        syscall,
    )
}

fn write(root: &OwnedFd, parts: &[&str]) -> Outcome {
    let (dirs, name) = leaf(parts)?;
    let dir = walk(root, dirs)?;
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| io_failure(&e, "read"))?;
    if data.len() as u64 > MAX_FILE_BYTES {
        return Err(Failure::Refused(r#"{"refused":"too-large"}"#.into()));
    }
    let temp = format!(".cordon-write-{}", std::process::id());
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mut file = File::from(
        openat(&dir, temp.as_str(), flags, Mode::from_bits_truncate(0o644)).map_err(sys("open"))?,
    );
    let written = file
        .write_all(&data)
        .map_err(|e| io_failure(&e, "write"))
        .and_then(|()| renameat(&dir, temp.as_str(), &dir, name).map_err(sys("rename")));
    if written.is_err() {
        let _ = unlinkat(&dir, temp.as_str(), UnlinkatFlags::NoRemoveDir);
    }
    written.map(|()| format!(r#"{{"bytes":{}}}"#, data.len()).into_bytes())
}

fn stat_at<P: ?Sized + nix::NixPath>(dir: &OwnedFd, name: &P) -> nix::Result<FileStat> {
    fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW)
}

fn list(root: &OwnedFd, parts: &[&str]) -> Outcome {
    let dir = walk(root, parts)?;
    let mut entries = nix::dir::Dir::from_fd(dir.try_clone().map_err(|e| io_failure(&e, "dup"))?)
        .map_err(sys("opendir"))?;
    let mut out = Vec::new();
    let mut truncated = false;
    for entry in entries.iter() {
        let entry = entry.map_err(sys("readdir"))?;
        let raw = entry.file_name();
        if raw == c"." || raw == c".." {
            continue;
        }
        if out.len() >= MAX_LIST_ENTRIES {
            truncated = true;
            break;
        }
        // Stat'ed by its bytes: a name not valid UTF-8 is listed, not hidden
        // (round 7, R7-3), as `name: null` and its bytes in hex: decoded
        // lossily, two names could be listed as one that the file tools then
        // resolve to only one of them (round 9, R9-7; files.js listedName).
        if let Ok(st) = stat_at(&dir, raw) {
            let (size, what) = (st.st_size, kind(st.st_mode));
            out.push(match raw.to_str() {
                Ok(name) => serde_json::json!({"name": name, "type": what, "size": size}),
                Err(_) => {
                    let hex: String = raw.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
                    serde_json::json!({"name": null, "nameHex": hex, "type": what, "size": size})
                }
            });
        }
    }
    let body = serde_json::json!({"entries": out, "truncated": truncated});
    Ok(body.to_string().into_bytes())
}

fn remove(root: &OwnedFd, parts: &[&str], recursive: bool, budget: u64) -> Outcome {
    let (dirs, name) = leaf(parts)?;
    let dir = walk(root, dirs)?;
    let st = stat_at(&dir, name).map_err(sys("lstat"))?;
    let what = kind(st.st_mode);
    if what == "directory" && recursive {
        crate::tree_removal::remove_tree(&dir, name, budget)?;
    } else {
        let flag = if what == "directory" {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        unlinkat(&dir, name, flag).map_err(sys("unlink"))?;
    }
    Ok(format!(r#"{{"removed":"{what}"}}"#).into_bytes())
}

/// The request line: a JSON array of strings ended by a newline, at most
/// MAX_REQUEST_BYTES; what follows it on `input` is left there (a write's bytes).
pub fn read_request(input: &mut impl BufRead) -> Result<Vec<String>, String> {
    let mut line = Vec::new();
    input
        .take(MAX_REQUEST_BYTES + 1)
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("read the request: {e}"))?;
    if line.pop() != Some(b'\n') {
        return Err("the request line is missing, unterminated or too long".into());
    }
    serde_json::from_slice(&line)
        .map_err(|e| format!("the request is not a JSON array of strings: {e}"))
}

/// Reads the request, enters the holder, runs one operation, reports; never returns.
pub fn main(args: &[String]) -> ! {
    if !args.is_empty() {
        usage("takes no arguments: the request comes on stdin");
    }
    // The lock is dropped at once: write() reads the rest of stdin through its own.
    let args = read_request(&mut std::io::stdin().lock()).unwrap_or_else(|e| usage(&e));
    let [holder, start, uid, dir, op, path, rest @ ..] = args.as_slice() else {
        usage(
            "usage: session-files, request on stdin: [holder-pid, holder-start, uid, dir, read|write|list|remove, path, arg…]",
        )
    };
    let holder: i32 = holder
        .parse()
        .unwrap_or_else(|_| usage("holder-pid must be a number"));
    let uid: u32 = uid
        .parse()
        .unwrap_or_else(|_| usage("uid must be a number"));
    let parts =
        segments(path).unwrap_or_else(|| usage("path must be relative, without `.` or `..`"));
    let number = |i: usize| -> u64 {
        rest.get(i)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| usage("a numeric argument is missing"))
    };
    if let Err(e) = enter(holder, start, uid) {
        usage(&format!("enter the session holder {holder}: {e}"));
    }
    let root = open_root(dir, uid).unwrap_or_else(|e| usage(&e));
    let outcome = match op.as_str() {
        "read" => read(&root, &parts, number(0).min(MAX_FILE_BYTES)),
        "write" => write(&root, &parts),
        "list" => list(&root, &parts),
        "remove" => remove(
            &root,
            &parts,
            rest.first().is_some_and(|r| r == "recursive"),
            number(1),
        ),
        other => usage(&format!("unknown op {other:?}")),
    };
    let mut out = std::io::stdout().lock();
    let status = match outcome {
        Ok(bytes) => {
            let _ = out.write_all(&bytes);
            0
        }
        Err(Failure::Sys(errno, syscall)) => {
            let _ = write!(
                out,
                r#"{{"errno":"{}","syscall":"{syscall}"}}"#,
                errno_name(errno)
            );
            1
        }
        Err(Failure::Refused(json)) => {
            let _ = out.write_all(json.as_bytes());
            1
        }
    };
    let _ = out.flush();
    std::process::exit(status)
}

/// Pure: the errno's symbolic name (`ELOOP`), as Node names system errors.
pub fn errno_name(errno: Errno) -> String {
    format!("{errno:?}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_gives_its_start_time_even_with_parentheses_in_the_name() {
        let fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        let line = format!("42 (a) b (c)) {}", fields.join(" "));
        assert_eq!(started_at(&line), Some("22"));
        assert_eq!(started_at("garbage"), None);
    }

    #[test]
    fn a_holder_whose_start_time_is_not_the_recorded_one_is_never_entered() {
        // This process stands for a pid reused since the provider checked
        // its holder: the start time differs, so no namespace is joined.
        let me = i32::try_from(std::process::id()).unwrap();
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        let real = started_at(&stat).unwrap().to_owned();
        assert_eq!(enter(me, "1", 65534), Err(Errno::ESRCH));
        assert_ne!(real, "1");
        // A pid with no process at all.
        assert!(enter(i32::MAX, &real, 65534).is_err());
    }

    #[test]
    fn a_request_is_one_json_line_and_what_follows_stays_for_the_write() {
        let mut input: &[u8] = b"[\"1\",\"2\",\"3\",\"/d\",\"write\",\"a\\nb\"]\nBYTES";
        let request = read_request(&mut input).unwrap();
        assert_eq!(request, ["1", "2", "3", "/d", "write", "a\nb"]);
        assert_eq!(input, b"BYTES");
        let mut unterminated: &[u8] = b"[\"1\"]";
        assert!(read_request(&mut unterminated).is_err());
        let mut not_strings: &[u8] = b"[1, 2]\n";
        assert!(read_request(&mut not_strings).is_err());
        let long = format!("[\"{}\"]\n", "a".repeat(70_000));
        assert!(read_request(&mut long.as_bytes()).is_err());
    }

    #[test]
    fn a_path_is_relative_segments_without_dots() {
        assert_eq!(segments("a/b//c").unwrap(), ["a", "b", "c"]);
        assert!(segments("/etc").is_none());
        assert!(segments("a/../b").is_none());
        assert!(segments("./a").is_none());
        assert_eq!(errno_name(Errno::ELOOP), "ELOOP");
        assert_eq!(kind(0o010644), "fifo");
        assert_eq!(kind(0o100644), "file");
    }
}
