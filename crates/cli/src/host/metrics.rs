//! Host metrics in the Prometheus text format (0.0.4), served by a tiny
//! HTTP/1.1 server: `GET /metrics` only, one response per connection.
//! **Off by default**; `"metrics": {"port": N}` turns it on, bound to
//! 127.0.0.1 unless `"address"` says otherwise. The registry is the host's
//! `HostEvents` observer (events.rs): counters only move from its hooks.
//!
//! Per connection, bounded: a slot (`MAX_CONNECTIONS`, else closed), the
//! request head read within `REQUEST_BOUND` and `MAX_REQUEST_BYTES`, one
//! response, close.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cordon_launcher::request::strict_json::{FieldError, ObjectReader};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::events::{HostEvents, Refusal};

/// Request head bytes read before the request is refused (400).
const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// A scraper that has not sent its request head by then is closed.
const REQUEST_BOUND: Duration = Duration::from_secs(5);
/// Scrapes served at once; more are closed (a scraper retries).
const MAX_CONNECTIONS: usize = 4;
/// Distinct stop reasons counted by name; any further one counts as "other"
/// (the reasons are the launcher's, but a bound costs nothing).
const MAX_STOP_REASONS: usize = 32;
/// Launch latency histogram bounds (seconds), spawn → started.
const LATENCY_BUCKETS_S: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const REFUSALS: [Refusal; 4] = [
    Refusal::Capacity,
    Refusal::TenantQuota,
    Refusal::Invalid,
    Refusal::LaunchFailed,
];

/// Where the metrics are served, when they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsConfig {
    pub address: SocketAddr,
}

impl MetricsConfig {
    /// `None`: no `metrics` section, metrics off.
    pub fn parse(value: Option<&Value>) -> Result<Option<MetricsConfig>, FieldError> {
        let Some(value) = value else {
            return Ok(None);
        };
        let r = ObjectReader::new("config.metrics", value, &["port", "address"])?;
        let port = r
            .required("port")?
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .ok_or_else(|| FieldError::new("config.metrics.port", "must be 0..65535"))?;
        let ip = match r.optional_str("address")? {
            None => IpAddr::V4(Ipv4Addr::LOCALHOST),
            Some(text) => text
                .parse()
                .map_err(|_| FieldError::new("config.metrics.address", "must be an IP address"))?,
        };
        Ok(Some(MetricsConfig {
            address: SocketAddr::new(ip, port),
        }))
    }
}

/// The counters (a `HostEvents` observer).
#[derive(Default)]
pub struct Metrics {
    active: AtomicU64,
    launches: AtomicU64,
    handshake_failures: AtomicU64,
    refusals: [AtomicU64; REFUSALS.len()],
    stop_reasons: Mutex<BTreeMap<String, u64>>,
    /// Cumulative-free bucket counts (rendered cumulatively), then +Inf.
    latency_buckets: [AtomicU64; LATENCY_BUCKETS_S.len() + 1],
    latency_sum_micros: AtomicU64,
}

impl HostEvents for Metrics {
    fn session_started(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
    }

    fn session_ended(&self, stop_reason: Option<&str>) {
        // Never below zero, even if a hook were ever called unpaired.
        let _ = self
            .active
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        let reason = stop_reason.unwrap_or("none");
        if let Ok(mut reasons) = self.stop_reasons.lock() {
            let key = if reasons.contains_key(reason) || reasons.len() < MAX_STOP_REASONS {
                reason
            } else {
                "other"
            };
            *reasons.entry(key.to_string()).or_default() += 1;
        }
    }

    fn launched(&self, latency: Duration) {
        self.launches.fetch_add(1, Ordering::Relaxed);
        let seconds = latency.as_secs_f64();
        let bucket = LATENCY_BUCKETS_S
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BUCKETS_S.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn refused(&self, reason: Refusal) {
        if let Some(i) = REFUSALS.iter().position(|r| *r == reason) {
            self.refusals[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn handshake_failed(&self) {
        self.handshake_failures.fetch_add(1, Ordering::Relaxed);
    }
}

impl Metrics {
    /// The exposition text.
    pub fn render(&self) -> String {
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        let mut out = String::new();
        let mut family = |name: &str, kind: &str, help: &str| {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {kind}\n"));
        };
        family(
            "cordon_host_active_sessions",
            "gauge",
            "Sandboxes running now.",
        );
        family(
            "cordon_host_launches_total",
            "counter",
            "Sandboxes started.",
        );
        family(
            "cordon_host_handshake_failures_total",
            "counter",
            "Connections closed before welcome.",
        );
        family(
            "cordon_host_refusals_total",
            "counter",
            "Spawns refused, by reason.",
        );
        family(
            "cordon_host_stops_total",
            "counter",
            "Sessions ended, by receipt stop reason.",
        );
        family(
            "cordon_host_launch_seconds",
            "histogram",
            "spawn to started.",
        );
        let mut lines = vec![
            format!("cordon_host_active_sessions {}", load(&self.active)),
            format!("cordon_host_launches_total {}", load(&self.launches)),
            format!(
                "cordon_host_handshake_failures_total {}",
                load(&self.handshake_failures)
            ),
        ];
        for (reason, count) in REFUSALS.iter().zip(&self.refusals) {
            lines.push(format!(
                "cordon_host_refusals_total{{reason=\"{}\"}} {}",
                reason.as_str(),
                load(count)
            ));
        }
        if let Ok(reasons) = self.stop_reasons.lock() {
            for (reason, count) in reasons.iter() {
                lines.push(format!(
                    "cordon_host_stops_total{{reason=\"{}\"}} {count}",
                    escape(reason)
                ));
            }
        }
        let mut cumulative = 0;
        for (i, count) in self.latency_buckets.iter().enumerate() {
            cumulative += load(count);
            let le = LATENCY_BUCKETS_S
                .get(i)
                .map_or("+Inf".to_string(), |b| b.to_string());
            lines.push(format!(
                "cordon_host_launch_seconds_bucket{{le=\"{le}\"}} {cumulative}"
            ));
        }
        let sum = load(&self.latency_sum_micros) as f64 / 1e6;
        lines.push(format!("cordon_host_launch_seconds_sum {sum}"));
        lines.push(format!("cordon_host_launch_seconds_count {cumulative}"));
        out.push_str(&lines.join("\n"));
        out.push('\n');
        out
    }
}

/// A label value as the text format requires (`\`, `"`, newline escaped).
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Binds the metrics address (so a bad one fails start-up).
pub async fn bind(config: MetricsConfig) -> Result<TcpListener, String> {
    TcpListener::bind(config.address)
        .await
        .map_err(|e| format!("config.metrics: bind {}: {e}", config.address))
}

/// Serves scrapes until the runtime ends.
pub async fn serve(listener: TcpListener, metrics: Arc<Metrics>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            continue;
        };
        let metrics = Arc::clone(&metrics);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(REQUEST_BOUND, answer(stream, &metrics)).await;
            drop(slot);
        });
    }
}

async fn answer(mut stream: TcpStream, metrics: &Metrics) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_REQUEST_BYTES {
            return respond(&mut stream, "400 Bad Request", "request head too large\n").await;
        }
    }
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|b| *b == b' ');
    match (parts.next(), parts.next()) {
        (Some(b"GET"), Some(b"/metrics")) => {
            respond(&mut stream, "200 OK", &metrics.render()).await
        }
        (Some(b"GET"), Some(_)) => respond(&mut stream, "404 Not Found", "GET /metrics\n").await,
        _ => respond(&mut stream, "405 Method Not Allowed", "GET /metrics\n").await,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
