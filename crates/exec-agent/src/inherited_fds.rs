//! The session helpers (`session-holder`, `session-files`) keep nothing of
//! their parent but stdin, stdout and stderr. A provider process may hold
//! descriptors it inherited without close-on-exec (a supervisor's pipe, a
//! socket-activated listener, a lock), and Node's `spawn` passes every such
//! one on: the holder would keep it open for the session's whole life,
//! past the provider's exit and restart (round 7, R7-2).

use std::os::fd::{AsRawFd, RawFd};

/// Pure: which of the listed descriptors to close (all but 0..=2 and `own`).
pub fn to_close(listed: impl IntoIterator<Item = RawFd>, own: RawFd) -> Vec<RawFd> {
    listed
        .into_iter()
        .filter(|fd| *fd > 2 && *fd != own)
        .collect()
}

/// Closes every descriptor above 2. Call first, while single-threaded.
pub fn close() -> nix::Result<()> {
    use nix::fcntl::OFlag;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let mut dir = nix::dir::Dir::open("/proc/self/fd", flags, nix::sys::stat::Mode::empty())?;
    let own = dir.as_raw_fd();
    let listed: Vec<RawFd> = dir
        .iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str().ok()?.parse().ok())
        .collect();
    for fd in to_close(listed, own) {
        nix::unistd::close(fd)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_descriptor_above_stderr_but_the_listing_s_own_is_closed() {
        assert_eq!(to_close([0, 1, 2, 3, 7, 251], 7), vec![3, 251]);
    }
}
