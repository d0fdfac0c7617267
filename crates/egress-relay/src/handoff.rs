//! The listener's hand-over: the relay gives the engine its listening
//! socket on 127.0.0.1:PORT (bound in the sandbox's network namespace) —
//! one connection to the engine socket, one marker byte with the socket
//! attached (SCM_RIGHTS), one status byte back — then closes its copy, so
//! no process of the sandbox holds it. The engine accepts the program's
//! connections itself: no relay process is on any stream's connect or data
//! path (issue 19: a relay that accepted and handed over each connection
//! put a process wake-up and a Unix round trip in every connect; a copying
//! relay cost 2.4× direct on a connect + 1-byte echo).

use std::io::{self, IoSlice, Read};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

/// The byte sent with the listener (the engine's `LISTENER_MARKER`).
const LISTENER_MARKER: u8 = 1;
/// The engine's answer when it serves the listener (`LISTENER_ACCEPTED`).
const LISTENER_ACCEPTED: u8 = 0;
/// The engine answers at once; this only bounds a wedged provider (the
/// engine's own deadline for the message is its handshake deadline, 10 s).
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// Hands `listener` to the engine at `engine`; Ok once the engine serves it.
/// The caller closes its copy (dropping it) before the program runs.
pub fn hand_over_listener(listener: &TcpListener, engine: &Path) -> io::Result<()> {
    let mut channel = UnixStream::connect(engine)?;
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[IoSlice::new(&[LISTENER_MARKER])],
        &[ControlMessage::ScmRights(&[listener.as_raw_fd()])],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    channel.set_read_timeout(Some(ANSWER_DEADLINE))?;
    let mut answer = [0u8; 1];
    channel.read_exact(&mut answer)?;
    if answer[0] != LISTENER_ACCEPTED {
        return Err(io::Error::other("the engine refused the listener"));
    }
    Ok(())
}
