//! The relay process: accept on the sandbox's 127.0.0.1:PORT, connect to
//! the engine socket, copy both ways (two threads per connection; EOF is
//! passed on as a half-close so request/response protocols finish).

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

use crate::fds::close_all_but;

/// Connections served at once; more wait in the listen backlog (the engine
/// enforces the run's real stream quotas).
const MAX_CONNECTIONS: usize = 64;
/// Copy buffer per direction (std's io::copy uses 8 KiB between sockets,
/// which halves loopback throughput).
const COPY_BUFFER_BYTES: usize = 128 * 1024;

pub fn serve(listener: &TcpListener, engine: &Path) {
    close_all_but(listener.as_raw_fd());
    let live = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(client) = conn else { continue };
        // Small proxy replies and request heads must not wait for Nagle.
        let _ = client.set_nodelay(true);
        if live.load(std::sync::atomic::Ordering::Acquire) >= MAX_CONNECTIONS {
            continue; // dropped: the client sees a reset
        }
        let Ok(upstream) = UnixStream::connect(engine) else {
            continue;
        };
        live.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let live = std::sync::Arc::clone(&live);
        let _ = std::thread::Builder::new().spawn(move || {
            relay(client, upstream);
            live.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        });
    }
}

fn relay(client: TcpStream, engine: UnixStream) {
    let (Ok(client2), Ok(engine2)) = (client.try_clone(), engine.try_clone()) else {
        return;
    };
    let up = std::thread::Builder::new().spawn(move || {
        let _ = pump(&client2, &engine2);
        let _ = engine2.shutdown(Shutdown::Write);
    });
    let _ = pump(&engine, &client);
    let _ = client.shutdown(Shutdown::Write);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

fn pump(mut from: impl Read, mut to: impl Write) -> io::Result<u64> {
    let mut buf = vec![0u8; COPY_BUFFER_BYTES];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        total += n as u64;
    }
}
