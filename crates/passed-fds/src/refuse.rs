//! A socket that refuses passed descriptors at the sender (`SO_PASSRIGHTS`
//! off, Linux 6.16+): a sandbox's `sendmsg` with `SCM_RIGHTS` to it fails
//! with `EPERM`, so no descriptor is ever queued to the host, and nothing
//! the reading thread does can close one (no neutralising, no closer
//! thread, no descriptor-table pressure; rounds 4, 5 and 14w).

use std::os::fd::{AsRawFd, BorrowedFd};

/// `SO_PASSRIGHTS` (include/uapi/asm-generic/socket.h); not in the libc
/// crate yet.
const SO_PASSRIGHTS: libc::c_int = 83;

/// Turns `SO_PASSRIGHTS` off on `socket`. False where the kernel does not
/// know the option (before 6.16): the socket then still accepts passed
/// descriptors, and its reader must neutralise them ([`crate::recv_neutralising`]).
pub fn refuse_passed_descriptors(socket: BorrowedFd<'_>) -> bool {
    let off: libc::c_int = 0;
    // SAFETY: a valid socket descriptor, and a pointer to a live c_int of
    // the length given, read by the kernel only during the call.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PASSRIGHTS,
            std::ptr::addr_of!(off).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::io::IoSlice;
    use std::os::fd::{AsFd, AsRawFd};
    use std::os::unix::net::UnixStream;

    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

    use super::*;

    #[test]
    fn a_refusing_socket_makes_the_sender_fail_and_still_carries_bytes() {
        let (host, sandbox) = UnixStream::pair().unwrap();
        if !refuse_passed_descriptors(host.as_fd()) {
            eprintln!("SO_PASSRIGHTS unknown to this kernel: nothing to check");
            return;
        }
        let devnull = std::fs::File::open("/dev/null").unwrap();
        let fds = [devnull.as_raw_fd()];
        let sent = sendmsg::<()>(
            sandbox.as_raw_fd(),
            &[IoSlice::new(b"x")],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            None,
        );
        assert_eq!(sent, Err(nix::errno::Errno::EPERM));
        use std::io::{Read, Write};
        (&sandbox).write_all(b"y").unwrap();
        let mut got = [0u8; 1];
        (&host).read_exact(&mut got).unwrap();
        assert_eq!(&got, b"y");
    }
}
