//! A `cordon host` child on 127.0.0.1 over TLS and a minimal blocking
//! cordon-remote-v1 client (rustls), for host_tls.rs and host_metrics.rs.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde_json::{json, Value};

use super::pki;

#[path = "node_audit.rs"]
mod node_audit;
use super::support::CORDON;

pub const HELLO: u8 = 0x01;
pub const WELCOME: u8 = 0x02;
pub const SPAWN: u8 = 0x04;
pub const DATA: u8 = 0x10;
pub const EXIT: u8 = 0x21;

/// A host child; killed (and reaped) on drop.
pub struct HostChild {
    pub child: Child,
    pub port: u16,
    /// The host's stderr lines before it listened (e.g. the metrics address).
    pub before: Vec<String>,
    /// The configuration file it runs with.
    pub config: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for HostChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn config(pki: &pki::Pki, state: &Path, extra: Value) -> Value {
    let mut config = json!({
        "listen": {"tcp": "127.0.0.1:0"},
        "tls": {"cert": pki.server.cert, "key": pki.server.key, "clientCa": pki.ca},
        "stateDir": state,
        "programs": {"sh": "/bin/sh"},
    });
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    config
}

/// Starts `cordon host --config` and reads its port from stderr.
pub fn start_host(pki: &pki::Pki, extra: Value) -> HostChild {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.json");
    let state = dir.path().join("state");
    std::fs::write(&path, config(pki, &state, extra).to_string()).unwrap();
    let mut child = Command::new(CORDON)
        .args(["host", "--config"])
        .arg(&path)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut before = Vec::new();
    let line = loop {
        let line = lines.next().unwrap().unwrap();
        if line.contains("listening on") {
            break line;
        }
        before.push(line);
    };
    let port = line
        .rsplit_once("tls://127.0.0.1:")
        .and_then(|(_, port)| port.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    // Keep draining (a full pipe would block the host).
    std::thread::spawn(move || lines.for_each(drop));
    HostChild {
        child,
        port,
        before,
        config: path,
        _dir: dir,
    }
}

pub type Tls = StreamOwned<ClientConnection, TcpStream>;

pub fn connect(port: u16, pki: &pki::Pki, identity: Option<&pki::Pair>) -> Tls {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&pki.ca).unwrap())
        .unwrap();
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots);
    let config = match identity {
        None => builder.with_no_client_auth(),
        Some(pair) => builder
            .with_client_auth_cert(
                vec![CertificateDer::from_pem_file(&pair.cert).unwrap()],
                PrivateKeyDer::from_pem_file(&pair.key).unwrap(),
            )
            .unwrap(),
    };
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    StreamOwned::new(conn, tcp)
}

pub fn send(tls: &mut Tls, kind: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut frame = ((payload.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(kind);
    frame.extend_from_slice(payload);
    tls.write_all(&frame)?;
    tls.flush()
}

/// The next frame, or `None` once the host closed (or refused the TLS session).
pub fn next(tls: &mut Tls) -> Option<(u8, Vec<u8>)> {
    let mut header = [0u8; 5];
    tls.read_exact(&mut header).ok()?;
    let len = u32::from_be_bytes(header[..4].try_into().unwrap()) as usize;
    let mut payload = vec![0u8; len - 1];
    tls.read_exact(&mut payload).ok()?;
    Some((header[4], payload))
}

pub fn hello(tls: &mut Tls, token: Option<&str>) -> Option<Value> {
    let body = match token {
        Some(token) => json!({"v": 1, "token": token}),
        None => json!({"v": 1}),
    };
    // A refused certificate may already have closed the connection.
    send(tls, HELLO, body.to_string().as_bytes()).ok()?;
    let (kind, payload) = next(tls)?;
    assert_eq!(kind, WELCOME);
    Some(serde_json::from_slice(&payload).unwrap())
}

pub fn token_digest(token: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// `readOnly()`, as a policy object.
pub fn read_only() -> Value {
    json!({"formatVersion": 1, "filesystem": {"workspace": "read", "temp": "write"},
           "network": {"mode": "none"}, "process": {"treeConfinement": "required"}})
}

/// `sh -c script` to its `exit`: (fd 3 bytes, the exit frame's JSON text).
pub fn run_to_exit(tls: &mut Tls, script: &str) -> (Vec<u8>, String) {
    let spawn =
        json!({"program": "sh", "args": ["-c", script], "options": {"policy": read_only()}});
    send(tls, SPAWN, spawn.to_string().as_bytes()).unwrap();
    let mut data = Vec::new();
    loop {
        let (kind, payload) = next(tls).expect("the host sent exit before closing");
        match kind {
            DATA => data.extend_from_slice(&payload),
            EXIT => return (data, String::from_utf8(payload).unwrap()),
            other => eprintln!("frame {other:#x}: {}", String::from_utf8_lossy(&payload)),
        }
    }
}

/// Node checks the signature as docs/remote.md tells a provider to:
/// `crypto.verify(null, canonicalJson(receipt), publicKey, signature)`.
pub fn node_verifies(exit_text: &str, public_key: &str, tamper: bool) -> bool {
    let script = r#"
        const [exitText, publicKey, tamper] = input;
        const exit = JSON.parse(exitText);
        if (tamper) exit.receipt.outcome.exitCode = 1 + exit.receipt.outcome.exitCode;
        const ok = crypto.verify(null, Buffer.from(canonicalJson(exit.receipt)), publicKey, Buffer.from(exit.signature, 'base64'));
        process.stdout.write(String(ok));
    "#;
    let input = json!([exit_text, public_key, tamper]);
    node_audit::run_with_audit(script, &input) == "true"
}
