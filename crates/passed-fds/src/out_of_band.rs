//! Out-of-band bytes taken inline (`SO_OOBINLINE`) on a Unix stream socket
//! the sandbox writes to (white-box round of 2026-12-06, W25-1).
//!
//! Why: a Unix stream message sent with `MSG_OOB` carries its
//! `SCM_RIGHTS` descriptors in the out-of-band skb. On a socket without
//! `SO_OOBINLINE`, any ordinary `recvmsg` that reaches that skb frees it
//! inside the call: its descriptors are never handed to the reader, so
//! nothing neutralises them, and their last close runs on the reading
//! thread as the call returns. A passed TCP socket with `SO_LINGER` set,
//! bytes unsent and a peer that never reads then held an egress shard's
//! thread in `tcp_close` for the linger time (15 s measured; `SO_LINGER`
//! allows 2^31 s), freezing every run on that shard. Inline, the byte is
//! ordinary data and its descriptors arrive with it, to be neutralised like
//! any other (`crate::receive`). Set before the first read: the kernel
//! checks the flag when a read reaches the skb.

use std::os::fd::BorrowedFd;

use nix::sys::socket::{setsockopt, sockopt::OobInline};

/// Turns `SO_OOBINLINE` on. False if the socket refused it (not a socket).
pub fn read_out_of_band_inline(socket: BorrowedFd<'_>) -> bool {
    setsockopt(&socket, OobInline, &true).is_ok()
}
