//! The Unix-socket transport. The socket is never reachable half set up:
//! 1. a fresh directory `.cordon-<random>` (mode 0700) beside the
//!    configured path — no one else can reach what is inside;
//! 2. bind + listen inside it, mode 0666 (the peer's uid, `SO_PEERCRED`,
//!    is the check: `allowUids`);
//! 3. `rename` it onto the configured path — atomic: a client sees no
//!    socket or a listening one; an existing live socket is never replaced
//!    (a second host is refused), a stale one is;
//! 4. the private directory is removed.
//!
//! On accept: the peer's uid is checked before a byte is read; a uid not
//! allowed is closed at once (silently), and so is an allowed uid past its
//! share of the handshake slots (handshake_slots.rs: one uid's idle
//! connections cannot close the others out, R9-4).

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::UnixListener;

use super::auth::{self, AuthMode};
use super::handshake_slots::Source;
use super::peer::{Peer, Transport};
use super::session_log::SessionRecord;
use super::{session, Host};

#[derive(Debug, thiserror::Error)]
pub enum UnixListenError {
    #[error("{step} {path}: {source}")]
    Io {
        step: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} exists and is not a socket: refusing to replace it")]
    NotASocket(PathBuf),
    #[error("{0}: another host is listening there")]
    InUse(PathBuf),
}

/// The placed socket; removed on drop if it is still ours.
pub struct PlacedSocket {
    pub listener: UnixListener,
    path: PathBuf,
    identity: (u64, u64),
}

fn io<'a>(
    step: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> UnixListenError + 'a {
    move |source| UnixListenError::Io {
        step,
        path: path.to_path_buf(),
        source,
    }
}

/// Steps 1–4.
pub fn place(path: &Path) -> Result<PlacedSocket, UnixListenError> {
    check_existing(path)?;
    let parent = path.parent().unwrap_or(Path::new("/"));
    let random = cordon_launcher::host::process_identity::random_hex(4)
        .map_err(io("random name for", parent))?;
    // Short: a socket path is at most 107 bytes, and this one is longer
    // than the configured path by the name below.
    let private = parent.join(format!(".cordon-{random}"));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .map_err(io("create", &private))?;
    let placed = bind_and_move(&private.join("s"), path);
    let _ = std::fs::remove_dir_all(&private);
    placed
}

fn bind_and_move(inner: &Path, path: &Path) -> Result<PlacedSocket, UnixListenError> {
    let std_listener = std::os::unix::net::UnixListener::bind(inner).map_err(io("bind", inner))?;
    // No frame carries a descriptor. Refused at the sender where the kernel
    // can (6.16+; accepted connections inherit it, those queued before the
    // accept included), a client cannot queue a lingering TCP socket that
    // the close of its connection, or a read without room for it, would
    // then drop on a runtime worker, held in `tcp_close` for the linger (a
    // peer of any uid can connect: the socket is 0666 and the uid is
    // checked after the accept). Before the move: nothing can connect yet.
    cordon_passed_fds::refuse_passed_descriptors(std::os::fd::AsFd::as_fd(&std_listener));
    std::fs::set_permissions(inner, std::fs::Permissions::from_mode(0o666))
        .map_err(io("chmod", inner))?;
    let meta = std::fs::symlink_metadata(inner).map_err(io("stat", inner))?;
    std::fs::rename(inner, path).map_err(io("rename onto", path))?;
    std_listener
        .set_nonblocking(true)
        .map_err(io("set non-blocking", path))?;
    let listener = UnixListener::from_std(std_listener).map_err(io("listen", path))?;
    Ok(PlacedSocket {
        listener,
        path: path.to_path_buf(),
        identity: (meta.dev(), meta.ino()),
    })
}

/// A socket already at `path` may be replaced only if no one listens.
fn check_existing(path: &Path) -> Result<(), UnixListenError> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("stat", path)(e)),
        Ok(meta) if !meta.file_type().is_socket() => Err(UnixListenError::NotASocket(path.into())),
        Ok(_) => match std::os::unix::net::UnixStream::connect(path) {
            Ok(_) => Err(UnixListenError::InUse(path.into())),
            Err(_) => Ok(()),
        },
    }
}

impl Drop for PlacedSocket {
    fn drop(&mut self) {
        // Only our socket: another host may have been placed since.
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.identity {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// A peer closed at the accept: counted and logged as a failed handshake.
/// Its connection is drained first: on a kernel that lets descriptors
/// through, what it queued is received and neutralised rather than dropped
/// by the close on this worker (cordon_passed_fds::drain).
fn refuse(host: &Host, stream: tokio::net::UnixStream, address: String) {
    cordon_passed_fds::drain(std::os::fd::AsFd::as_fd(&stream));
    drop(stream);
    host.events.handshake_failed();
    drop(SessionRecord::new(Arc::clone(&host.log), "unix", address));
}

/// Accepts until `stop` resolves; each allowed peer is served on its task.
pub async fn serve(
    placed: &PlacedSocket,
    host: Arc<Host>,
    stop: impl std::future::Future<Output = ()>,
) {
    let host_uid = nix::unistd::getuid().as_raw();
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            () = &mut stop => return,
            accepted = placed.listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            // EMFILE and the like: back off instead of spinning.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let (uid, pid) = match stream.peer_cred() {
            Ok(cred) => (cred.uid(), cred.pid()),
            Err(_) => continue,
        };
        let address = match pid {
            Some(pid) => format!("uid:{uid} pid:{pid}"),
            None => format!("uid:{uid}"),
        };
        if !auth::uid_allowed(&host.config.allow_uids, host_uid, uid) {
            refuse(&host, stream, address);
            continue; // closed without a byte
        }
        let Some(slot) = host.handshakes.try_take(Source::Uid(uid)) else {
            refuse(&host, stream, address);
            continue;
        };
        let peer = Peer {
            transport: Transport::Unix,
            auth: AuthMode::PeerCred,
            tenant: format!("uid:{uid}"),
            address,
            first_frame_by: None,
        };
        let served = session::serve(stream, peer, Arc::clone(&host), slot);
        host.sessions.spawn(served);
    }
}
