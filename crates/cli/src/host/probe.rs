//! `cordon host --probe --config FILE [--ca FILE] [--cert FILE --key FILE]
//! [--token-file FILE] [--server-name NAME]`: health/readiness for
//! Kubernetes. Ready (exit 0) when, within `PROBE_BOUND` each:
//! 1. the configuration loads (the one the host runs with);
//! 2. the host's socket (`listen.unix`) or TLS port (`listen.tcp`, an
//!    unspecified address probed on loopback) accepts, and a `hello`
//!    (with the token of `--token-file`, when given) gets a `welcome`;
//! 3. this machine can launch sandboxes: `cordon doctor`'s required checks
//!    (doctor.rs; bwrap as the host's `bwrapPath`).
//!
//! Otherwise exit 1 with one line, `cordon host --probe: not ready: …`;
//! exit 2 for a malformed command line.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use rustls_pki_types::ServerName;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpStream, UnixStream};

use super::config::{Config, Listen};
use super::frame::{self, Kind};
use super::tls_client::connector;
use crate::exit_status;

/// Each step's bound: connect, handshake and `welcome` (the host's own
/// first-frame bound is 5 s).
const PROBE_BOUND: Duration = Duration::from_secs(5);
/// A token file larger than this is not a token.
const MAX_TOKEN_BYTES: u64 = 4096;

#[derive(Default)]
struct ProbeArgs {
    config: Option<PathBuf>,
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    token_file: Option<PathBuf>,
    server_name: Option<String>,
}

fn parse(args: &[String]) -> Result<ProbeArgs, String> {
    let mut parsed = ProbeArgs::default();
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or(format!("{flag} needs a value"))?;
        let path = || Some(PathBuf::from(value));
        match flag.as_str() {
            "--config" => parsed.config = path(),
            "--ca" => parsed.ca = path(),
            "--cert" => parsed.cert = path(),
            "--key" => parsed.key = path(),
            "--token-file" => parsed.token_file = path(),
            "--server-name" => parsed.server_name = Some(value.clone()),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if parsed.config.is_none() || parsed.cert.is_some() != parsed.key.is_some() {
        return Err("needs --config FILE, and --cert with --key".into());
    }
    Ok(parsed)
}

/// Runs the probe; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let parsed = match parse(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("cordon host --probe: {e}");
            return exit_status::USAGE;
        }
    };
    match probe(&parsed) {
        Ok(welcome) => {
            let host = &welcome["host"];
            println!(
                "ready: {} {} over {} ({})",
                host["id"].as_str().unwrap_or("?"),
                host["version"].as_str().unwrap_or("?"),
                host["transport"].as_str().unwrap_or("?"),
                host["auth"].as_str().unwrap_or("?"),
            );
            0
        }
        Err(reason) => {
            eprintln!("cordon host --probe: not ready: {reason}");
            exit_status::PROBE_NOT_READY
        }
    }
}

fn probe(args: &ProbeArgs) -> Result<Value, String> {
    let path = args.config.as_deref().ok_or("no --config")?;
    let config = Config::load(path).map_err(|e| format!("config: {e}"))?;
    let token = match &args.token_file {
        Some(file) => Some(read_token(file)?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    let welcome = runtime.block_on(welcome(&config, args, token.as_deref()))?;
    let options = crate::doctor::probe_options(
        config.bwrap_path.clone(),
        None,
        config.network_relay_path.clone(),
    );
    match crate::doctor::first_failure(&options) {
        None => Ok(welcome),
        Some(failure) => Err(format!("cannot launch sandboxes: {failure}")),
    }
}

fn read_token(file: &std::path::Path) -> Result<String, String> {
    let too_large = std::fs::metadata(file).map(|m| m.len() > MAX_TOKEN_BYTES);
    if too_large.map_err(|e| format!("--token-file: {e}"))? {
        return Err("--token-file: larger than a token".into());
    }
    let text = std::fs::read_to_string(file).map_err(|e| format!("--token-file: {e}"))?;
    Ok(text.trim_end_matches(['\r', '\n']).to_string())
}

/// Step 2 on the configured listener.
async fn welcome(config: &Config, args: &ProbeArgs, token: Option<&str>) -> Result<Value, String> {
    let bounded = |what: &'static str| move |_| format!("{what}: no answer within {PROBE_BOUND:?}");
    match &config.listen {
        Listen::Unix(path) => {
            let stream = tokio::time::timeout(PROBE_BOUND, UnixStream::connect(path))
                .await
                .map_err(bounded("connect"))?
                .map_err(|e| format!("connect {}: {e}", path.display()))?;
            exchange(stream, token).await
        }
        Listen::Tcp(address) => {
            let mut target: SocketAddr = address
                .parse()
                .map_err(|_| format!("listen.tcp {address:?} is not an ip:port"))?;
            if target.ip().is_unspecified() {
                target.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
            }
            let ca = args
                .ca
                .as_deref()
                .ok_or("a TLS host needs --ca (its certificate's CA)")?;
            let identity = args.cert.as_deref().zip(args.key.as_deref());
            let tls = connector(ca, identity).map_err(|e| e.to_string())?;
            let name = match &args.server_name {
                Some(name) => {
                    ServerName::try_from(name.clone()).map_err(|e| format!("--server-name: {e}"))?
                }
                None => ServerName::IpAddress(target.ip().into()),
            };
            let tcp = tokio::time::timeout(PROBE_BOUND, TcpStream::connect(target))
                .await
                .map_err(bounded("connect"))?
                .map_err(|e| format!("connect {target}: {e}"))?;
            let stream = tokio::time::timeout(PROBE_BOUND, tls.connect(name, tcp))
                .await
                .map_err(bounded("TLS handshake"))?
                .map_err(|e| format!("TLS handshake: {e}"))?;
            exchange(stream, token).await
        }
    }
}

/// `hello` → `welcome` (version 1), bounded.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    token: Option<&str>,
) -> Result<Value, String> {
    let hello = match token {
        Some(token) => json!({"v": 1, "token": token}),
        None => json!({"v": 1}),
    };
    let answer = async {
        frame::write_frame(&mut stream, Kind::Hello, hello.to_string().as_bytes()).await?;
        frame::read_frame(&mut stream)
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    let first = tokio::time::timeout(PROBE_BOUND, answer)
        .await
        .map_err(|_| format!("no welcome within {PROBE_BOUND:?}"))?
        .map_err(|e| format!("no welcome (closed: refused credentials?): {e}"))?;
    if first.kind != Kind::Welcome {
        return Err(format!("answered {:?} instead of welcome", first.kind));
    }
    let welcome: Value =
        serde_json::from_slice(&first.payload).map_err(|e| format!("welcome: {e}"))?;
    if welcome["v"] != 1 {
        return Err(format!("welcome of protocol version {}", welcome["v"]));
    }
    Ok(welcome)
}
