#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn no_section_is_off_and_a_port_alone_binds_loopback() {
    assert_eq!(MetricsConfig::parse(None).unwrap(), None);
    let on = MetricsConfig::parse(Some(&json!({"port": 9464})))
        .unwrap()
        .unwrap();
    assert_eq!(on.address, "127.0.0.1:9464".parse().unwrap());
    let any = MetricsConfig::parse(Some(&json!({"port": 9464, "address": "0.0.0.0"}))).unwrap();
    assert_eq!(any.unwrap().address, "0.0.0.0:9464".parse().unwrap());
    for bad in [
        json!({}),
        json!({"port": 70000}),
        json!({"port": 1, "address": "x"}),
        json!({"port": 1, "extra": 1}),
    ] {
        assert!(MetricsConfig::parse(Some(&bad)).is_err(), "{bad}");
    }
}

#[test]
fn the_hooks_move_the_counters_in_the_text_format() {
    let m = Metrics::default();
    m.session_started();
    m.launched(Duration::from_millis(30));
    m.refused(Refusal::Capacity);
    m.handshake_failed();
    let text = m.render();
    for line in [
        "cordon_host_active_sessions 1",
        "cordon_host_launches_total 1",
        "cordon_host_handshake_failures_total 1",
        "cordon_host_refusals_total{reason=\"capacity\"} 1",
        "cordon_host_refusals_total{reason=\"invalid\"} 0",
        "cordon_host_launch_seconds_bucket{le=\"0.025\"} 0",
        "cordon_host_launch_seconds_bucket{le=\"0.05\"} 1",
        "cordon_host_launch_seconds_bucket{le=\"+Inf\"} 1",
        "cordon_host_launch_seconds_count 1",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    m.session_ended(Some("deadline"));
    let text = m.render();
    assert!(text.contains("cordon_host_active_sessions 0\n"), "{text}");
    assert!(
        text.contains("cordon_host_stops_total{reason=\"deadline\"} 1\n"),
        "{text}"
    );
}

#[test]
fn stop_reasons_past_the_bound_count_as_other() {
    let m = Metrics::default();
    for i in 0..MAX_STOP_REASONS + 5 {
        m.session_ended(Some(&format!("r{i}")));
    }
    let text = m.render();
    assert_eq!(
        text.matches("cordon_host_stops_total{").count(),
        MAX_STOP_REASONS + 1
    );
    assert!(
        text.contains("cordon_host_stops_total{reason=\"other\"} 5\n"),
        "{text}"
    );
}

async fn request(port: u16, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn only_get_metrics_is_answered_and_an_oversize_request_is_refused() {
    let config = MetricsConfig::parse(Some(&json!({"port": 0})))
        .unwrap()
        .unwrap();
    let listener = bind(config).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let metrics = Arc::new(Metrics::default());
    metrics.launched(Duration::from_millis(1));
    tokio::spawn(serve(listener, Arc::clone(&metrics)));
    let ok = request(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
    assert!(
        ok.contains("\r\n\r\n# HELP ") && ok.contains("cordon_host_launches_total 1\n"),
        "{ok}"
    );
    let not_found = request(port, b"GET / HTTP/1.1\r\n\r\n").await;
    assert!(not_found.starts_with("HTTP/1.1 404 "), "{not_found}");
    let post = request(port, b"POST /metrics HTTP/1.1\r\n\r\n").await;
    assert!(post.starts_with("HTTP/1.1 405 "), "{post}");
    let huge = vec![b'a'; MAX_REQUEST_BYTES + 2048];
    let too_large = request(port, &huge).await;
    assert!(too_large.starts_with("HTTP/1.1 400 "), "{too_large}");
}
