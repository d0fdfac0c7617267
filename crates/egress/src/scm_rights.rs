//! The fd-4 channel's datagram I/O: receive a request that must carry no
//! ancillary data, and send a response carrying exactly one descriptor via
//! SCM_RIGHTS. The only hand-written socket syscalls of the crate.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Room for a few descriptors, so a request that smuggles some is seen
/// (and its descriptors closed) rather than silently truncated.
const MAX_SMUGGLED_FDS: usize = 8;

/// One received datagram.
#[derive(Debug)]
pub struct Received {
    pub bytes: Vec<u8>,
    /// The datagram was longer than the buffer.
    pub truncated: bool,
    /// Ancillary data was present (any descriptors in it are already closed).
    pub had_ancillary: bool,
}

fn cmsg_space(bytes: usize) -> usize {
    let len = u32::try_from(bytes).unwrap_or(u32::MAX);
    // SAFETY: CMSG_SPACE is a pure size computation.
    usize::try_from(unsafe { libc::CMSG_SPACE(len) }).unwrap_or(0)
}

/// Receives one datagram of at most `max` bytes (non-blocking callers poll first).
pub fn recv_datagram(socket: BorrowedFd<'_>, max: usize) -> io::Result<Received> {
    let mut buf = vec![0u8; max];
    let mut control = vec![0u8; cmsg_space(MAX_SMUGGLED_FDS * std::mem::size_of::<RawFd>())];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain old data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len();
    // SAFETY: msg points at live buffers (buf, control) sized as declared.
    let n = unsafe {
        libc::recvmsg(
            socket.as_raw_fd(),
            &mut msg,
            libc::MSG_CMSG_CLOEXEC | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let had_ancillary = msg.msg_controllen > 0 || (msg.msg_flags & libc::MSG_CTRUNC) != 0;
    close_received_fds(&msg);
    buf.truncate(usize::try_from(n).unwrap_or(0));
    Ok(Received {
        bytes: buf,
        truncated: (msg.msg_flags & libc::MSG_TRUNC) != 0,
        had_ancillary,
    })
}

/// Takes ownership of (and so closes) every descriptor an SCM_RIGHTS message carried.
fn close_received_fds(msg: &libc::msghdr) {
    // SAFETY: msg was filled by recvmsg; the CMSG_* macros walk its control buffer within msg_controllen.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let header = libc::CMSG_LEN(0) as usize;
                let count = ((*cmsg).cmsg_len as usize).saturating_sub(header)
                    / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    drop(OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                }
            }
            cmsg = libc::CMSG_NXTHDR(msg, cmsg);
        }
    }
}

/// Sends `bytes` with `fd` attached (SCM_RIGHTS), or without when `fd` is None.
pub fn send_datagram(
    socket: BorrowedFd<'_>,
    bytes: &[u8],
    fd: Option<BorrowedFd<'_>>,
) -> io::Result<()> {
    let mut control = vec![0u8; cmsg_space(std::mem::size_of::<RawFd>())];
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr().cast_mut().cast(),
        iov_len: bytes.len(),
    };
    // SAFETY: msghdr is plain old data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len();
        // SAFETY: the control buffer is CMSG_SPACE(sizeof(int)) bytes, exactly one header plus one fd.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
            libc::CMSG_DATA(cmsg)
                .cast::<RawFd>()
                .write_unaligned(fd.as_raw_fd());
        }
    }
    // SAFETY: msg points at live buffers (bytes, control) sized as declared; sendmsg does not write them.
    let n = unsafe { libc::sendmsg(socket.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Receives a datagram and the one descriptor it carries (the client side of
/// the fd-4 protocol; used by tests and by in-process clients).
pub fn recv_with_fd(socket: BorrowedFd<'_>, max: usize) -> io::Result<(Vec<u8>, Option<OwnedFd>)> {
    let mut buf = vec![0u8; max];
    let mut control = vec![0u8; cmsg_space(std::mem::size_of::<RawFd>())];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain old data; zeroed is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = control.len();
    // SAFETY: msg points at live buffers sized as declared.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut fd = None;
    // SAFETY: walks the control buffer recvmsg filled; a received SCM_RIGHTS fd is ours to own.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null()
            && (*cmsg).cmsg_level == libc::SOL_SOCKET
            && (*cmsg).cmsg_type == libc::SCM_RIGHTS
        {
            fd = Some(OwnedFd::from_raw_fd(
                libc::CMSG_DATA(cmsg).cast::<RawFd>().read_unaligned(),
            ));
        }
    }
    buf.truncate(usize::try_from(n).unwrap_or(0));
    Ok((buf, fd))
}
