//! Shared by the engine's integration tests: real loopback servers and a
//! run engine in a private temp directory.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{IoSliceMut, Read, Write};
use std::os::fd::{BorrowedFd, FromRawFd, RawFd};

use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use cordon_egress::{
    Allowlist, Destination, DestinationOptions, NetworkReceipt, Quotas, RunEngine, RunEngineConfig,
    StaticResolver,
};

/// A TCP echo server on 127.0.0.1 that counts the bytes it received and
/// serves at most `max_conns` connections (bounded: the test never loops forever).
pub struct Echo {
    pub addr: SocketAddr,
    pub received: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Echo {
    pub fn start(max_conns: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&received);
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming().take(max_conns) {
                let Ok(mut conn) = conn else { return };
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 65536];
                    loop {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                counter.fetch_add(n as u64, Ordering::SeqCst);
                                if conn.write_all(&buf[..n]).is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        Self {
            addr,
            received,
            thread: Some(thread),
        }
    }
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
    /// Unblocks the accept loop if fewer than max_conns came.
    pub fn stop(mut self, remaining: usize) {
        for _ in 0..remaining {
            let _ = TcpStream::connect(self.addr);
        }
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// The engine's runtime in tests: the one the launcher gives every engine
/// (a shard of `engine_runtime`: one thread, so a task that blocked it
/// would stall every later client).
pub fn runtime() -> cordon_egress::engine_runtime::Shard {
    cordon_egress::engine_runtime::get().unwrap()
}

pub fn resolver() -> Arc<StaticResolver> {
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    Arc::new(StaticResolver {
        entries: vec![
            ("echo.test".into(), vec![lo]),
            ("rebind.test".into(), vec![lo]),
            ("other.test".into(), vec![lo]),
        ],
    })
}

pub fn private(host: &str, port: u16) -> Destination {
    Destination::new(
        host,
        port,
        DestinationOptions {
            allow_private_addresses: true,
            require_tls_sni: false,
        },
    )
    .unwrap()
}

pub struct Run {
    pub engine: RunEngine,
    pub _dir: tempdir::Dir,
    pub fd4: Option<UnixDatagram>,
}

pub mod tempdir {
    /// A private directory removed on drop (stands in for the run's control root).
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let p =
                std::env::temp_dir().join(format!("cordon-egress-test-{}-{n}", std::process::id()));
            std::fs::create_dir(&p).unwrap();
            Self(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn start(destinations: Vec<Destination>, quotas: Quotas, with_fd4: bool) -> Run {
    start_with(destinations, quotas, with_fd4, resolver())
}

pub fn start_with(
    destinations: Vec<Destination>,
    quotas: Quotas,
    with_fd4: bool,
    resolver: Arc<dyn cordon_egress::Resolve>,
) -> Run {
    start_full(destinations, quotas, with_fd4, resolver, None)
}

/// An engine that expects the relay's listener for `proxy_port` first.
pub fn start_expecting_listener(destinations: Vec<Destination>, proxy_port: u16) -> Run {
    start_expecting_listener_with(destinations, Quotas::default(), proxy_port)
}

pub fn start_expecting_listener_with(
    destinations: Vec<Destination>,
    quotas: Quotas,
    proxy_port: u16,
) -> Run {
    start_full(destinations, quotas, false, resolver(), Some(proxy_port))
}

fn start_full(
    destinations: Vec<Destination>,
    quotas: Quotas,
    with_fd4: bool,
    resolver: Arc<dyn cordon_egress::Resolve>,
    proxy_port: Option<u16>,
) -> Run {
    let dir = tempdir::Dir::new();
    let (fd4_engine, fd4_client) = if with_fd4 {
        // The channel as the launcher makes it (seqpacket); std's
        // UnixDatagram serves as the client's API: send/recv on a connected
        // socket are the same calls for both types.
        let (a, b) = cordon_egress::fd4_channel::pair().unwrap();
        (Some(a), Some(b))
    } else {
        (None, None)
    };
    let engine = RunEngine::start(RunEngineConfig {
        socket_path: dir.0.join("egress.sock"),
        fd4_channel: fd4_engine,
        proxy_port,
        allowlist: Allowlist::new(destinations).unwrap(),
        quotas,
        policy_digest: "sha256:test".into(),
        invocation_id: "inv-test".into(),
        resolver,
        connect_timeout: Duration::from_secs(5),
        handshake_timeout: Duration::from_secs(5),
        teardown_bound: Duration::from_secs(2),
        runtime: runtime(),
    })
    .unwrap();
    let mut engine = engine;
    // As the launcher does: the engine holds a copy of the sandbox's end.
    let fd4_client = fd4_client.map(|client: OwnedFd| {
        engine.hold_fd4_peer(client.try_clone().unwrap());
        UnixDatagram::from(client)
    });
    Run {
        engine,
        _dir: dir,
        fd4: fd4_client,
    }
}

pub fn proxy(run: &Run) -> UnixStream {
    let s = UnixStream::connect(run.engine.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads an HTTP response head (up to CRLF CRLF).
pub fn read_head(s: &mut UnixStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap() == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

/// Reads an HTTP response head from a TCP client; a read error or timeout
/// ends it (lossy: a refusal's head is checked by its status line only).
pub fn read_tcp_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A program's TCP connection to the proxy: a CONNECT to `echo.test` (on
/// `echo_port`), `n` bytes echoed, a half-close answered by EOF; then the
/// run finishes and its one receipt says exactly that.
pub fn tunnel_round_trip_with_exact_receipt(
    run: &mut Run,
    mut program: TcpStream,
    echo_port: u16,
    n: usize,
) {
    program
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(program, "CONNECT echo.test:{echo_port} HTTP/1.1\r\n\r\n").unwrap();
    let head = read_tcp_head(&mut program);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    program.write_all(&vec![9u8; n]).unwrap();
    let mut back = vec![0u8; n];
    program.read_exact(&mut back).unwrap();
    assert_eq!(back, vec![9u8; n]);
    program.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(
        program.read(&mut [0u8; 1]).unwrap(),
        0,
        "EOF propagates back"
    );
    drop(program);
    let receipts = run.engine.finish().receipts;
    let r = only(&receipts);
    assert_eq!(r.protocol, cordon_egress::StreamProtocol::HttpConnect);
    assert_eq!(r.result, "allowed");
    assert_eq!(
        (r.bytes_from_client, r.bytes_to_client),
        (n as u64, n as u64)
    );
    assert_eq!(r.end, Some(cordon_egress::StreamEnd::Closed));
}

pub fn connect_via_http(run: &Run, target: &str) -> (UnixStream, String) {
    let mut s = proxy(run);
    write!(s, "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").unwrap();
    let head = read_head(&mut s);
    (s, head)
}

pub fn echo_round_trip(s: &mut UnixStream, payload: &[u8]) {
    s.write_all(payload).unwrap();
    let mut back = vec![0u8; payload.len()];
    s.read_exact(&mut back).unwrap();
    assert_eq!(back, payload);
}

/// EOF or a reset (a Unix stream closed with unread bytes resets): either way closed.
pub fn assert_closed(s: &mut UnixStream) {
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("stream still open: {other:?}"),
    }
}

/// Everything until EOF or a reset.
pub fn read_until_closed(s: &mut UnixStream) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return all,
            Err(e) => panic!("read failed: {e}"),
        }
    }
}

/// Polls a condition for at most 5 s (bounded; used for cross-thread counters).
pub fn wait_until(cond: impl Fn() -> bool) {
    for _ in 0..500 {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn only(receipts: &[NetworkReceipt]) -> &NetworkReceipt {
    assert_eq!(receipts.len(), 1, "{receipts:#?}");
    &receipts[0]
}

/// The sandbox's side of the fd-4 protocol: a response and the one
/// descriptor it may carry.
pub fn recv_with_fd(socket: BorrowedFd<'_>, max: usize) -> (Vec<u8>, Option<OwnedFd>) {
    let mut buf = vec![0u8; max];
    let mut control = nix::cmsg_space!(RawFd);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<()>(
        std::os::fd::AsRawFd::as_raw_fd(&socket),
        &mut iov,
        Some(&mut control),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .unwrap();
    let bytes = msg.bytes;
    let fd = msg.cmsgs().unwrap().find_map(|cmsg| match cmsg {
        ControlMessageOwned::ScmRights(fds) => fds.first().copied(),
        _ => None,
    });
    buf.truncate(bytes);
    // SAFETY: the kernel just installed this descriptor for us (SCM_RIGHTS);
    // nothing else in the process knows its number.
    (buf, fd.map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// What the relay does with the proxy port's listener: hands it to the
/// engine (one marker byte carrying it) and waits for the answer, which
/// must be "accepted".
pub fn serve_listener(run: &Run, listener: &TcpListener) {
    use cordon_egress::proxy_listener::{LISTENER_ACCEPTED, LISTENER_MARKER};
    use nix::sys::socket::{sendmsg, ControlMessage};
    use std::os::fd::AsRawFd;
    let mut channel = UnixStream::connect(run.engine.socket_path()).unwrap();
    sendmsg::<()>(
        channel.as_raw_fd(),
        &[std::io::IoSlice::new(&[LISTENER_MARKER])],
        &[ControlMessage::ScmRights(&[listener.as_raw_fd()])],
        MsgFlags::empty(),
        None,
    )
    .unwrap();
    let mut answer = [0u8; 1];
    channel.read_exact(&mut answer).unwrap();
    assert_eq!(answer[0], LISTENER_ACCEPTED);
}

/// A program's CONNECT to `target` through the proxy port; returns once
/// the `200` came.
pub fn tcp_tunnel(proxy_port: u16, target: &str) -> TcpStream {
    let mut program = TcpStream::connect(("127.0.0.1", proxy_port)).unwrap();
    program
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(program, "CONNECT {target} HTTP/1.1\r\n\r\n").unwrap();
    let head = read_tcp_head(&mut program);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    program
}
