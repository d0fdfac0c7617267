//! The proxy frontend's HTTP side — a pure, bounded parser of one request head.
//!
//! `CONNECT host:port HTTP/1.x` opens a tunnel; an absolute-form request
//! (`GET http://host[:port]/path HTTP/1.1`) is forwarded once: its target is
//! rewritten to origin-form, `Proxy-*` headers are dropped (credentials never
//! go upstream) and `Connection: close` is forced, so every forwarded request
//! is its own admitted stream with its own receipt.

/// A request head larger than this is a protocol error (bounds memory per
/// pending request; ordinary proxy requests are a few hundred bytes).
pub const MAX_HEAD_BYTES: usize = 8 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpRequest {
    Connect {
        host: String,
        port: u16,
    },
    /// `head` is the rewritten request head to send upstream (ends with CRLF CRLF).
    Forward {
        host: String,
        port: u16,
        head: Vec<u8>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeadParse {
    /// No end of head yet and still under the bound.
    Incomplete,
    /// The request and how many bytes of input its head used.
    Done(HttpRequest, usize),
    /// Not a request this proxy can serve; the reason is for the receipt.
    Invalid(HeadError),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadError {
    TooLarge,
    Malformed,
    /// https:// or another scheme in absolute form (clients must use CONNECT).
    UnsupportedScheme,
}

pub fn parse_head(bytes: &[u8]) -> HeadParse {
    let Some(end) = find_head_end(bytes) else {
        return if bytes.len() >= MAX_HEAD_BYTES {
            HeadParse::Invalid(HeadError::TooLarge)
        } else {
            HeadParse::Incomplete
        };
    };
    if end > MAX_HEAD_BYTES {
        return HeadParse::Invalid(HeadError::TooLarge);
    }
    let Ok(text) = std::str::from_utf8(&bytes[..end]) else {
        return HeadParse::Invalid(HeadError::Malformed);
    };
    match parse_text(text) {
        Ok(request) => HeadParse::Done(request, end),
        Err(e) => HeadParse::Invalid(e),
    }
}

fn find_head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
}

fn parse_text(text: &str) -> Result<HttpRequest, HeadError> {
    let mut lines = text.split("\r\n");
    let request_line = lines.next().ok_or(HeadError::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HeadError::Malformed);
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
    {
        return Err(HeadError::Malformed);
    }
    let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
    if headers
        .iter()
        .any(|h| !h.contains(':') || h.starts_with([' ', '\t']))
    {
        return Err(HeadError::Malformed);
    }
    if method == "CONNECT" {
        let (host, port) = split_authority(target, None)?;
        return Ok(HttpRequest::Connect { host, port });
    }
    let rest = if let Some(rest) = target.strip_prefix("http://") {
        rest
    } else if target.contains("://") {
        return Err(HeadError::UnsupportedScheme);
    } else {
        return Err(HeadError::Malformed); // origin-form: not a proxy request
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    let (host, port) = split_authority(authority, Some(80))?;
    let mut head = format!("{method} {path} {version}\r\n");
    for header in headers {
        let name = header
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
            continue;
        }
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("Connection: close\r\n\r\n");
    Ok(HttpRequest::Forward {
        host,
        port,
        head: head.into_bytes(),
    })
}

/// `host:port` (port required unless a default is given); userinfo refused.
fn split_authority(authority: &str, default_port: Option<u16>) -> Result<(String, u16), HeadError> {
    if authority.contains('@') || authority.is_empty() {
        return Err(HeadError::Malformed);
    }
    if authority.starts_with('[') {
        // IPv6 literal: keep it whole so admission names it `unsupported`.
        let close = authority.find(']').ok_or(HeadError::Malformed)?;
        let host = &authority[..=close];
        let port = match &authority[close + 1..] {
            "" => default_port.ok_or(HeadError::Malformed)?,
            p => p
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .ok_or(HeadError::Malformed)?,
        };
        return Ok((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => {
            let port = crate::destination::parse_port(port).map_err(|_| HeadError::Malformed)?;
            Ok((host.to_owned(), port))
        }
        None => Ok((
            authority.to_owned(),
            default_port.ok_or(HeadError::Malformed)?,
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn connect_names_host_and_port() {
        let head = b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\nrest";
        assert_eq!(
            parse_head(head),
            HeadParse::Done(
                HttpRequest::Connect {
                    host: "api.example.com".into(),
                    port: 443
                },
                head.len() - 4
            )
        );
    }

    #[test]
    fn an_absolute_form_request_is_rewritten_without_proxy_headers_and_closed() {
        let head = b"GET http://h.example:8080/a?b=1 HTTP/1.1\r\nHost: h.example:8080\r\nProxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n";
        let HeadParse::Done(HttpRequest::Forward { host, port, head }, _) = parse_head(head) else {
            panic!("not a forward");
        };
        assert_eq!((host.as_str(), port), ("h.example", 8080));
        let text = String::from_utf8(head).unwrap();
        assert_eq!(text, "GET /a?b=1 HTTP/1.1\r\nHost: h.example:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n");
    }

    #[test]
    fn forward_defaults_to_port_80_and_path_slash() {
        let HeadParse::Done(HttpRequest::Forward { port, head, .. }, _) =
            parse_head(b"GET http://h.example HTTP/1.0\r\n\r\n")
        else {
            panic!()
        };
        assert_eq!(port, 80);
        assert!(head.starts_with(b"GET / HTTP/1.0\r\n"));
    }

    #[test]
    fn partial_oversized_and_malformed_heads_are_told_apart() {
        assert_eq!(
            parse_head(b"CONNECT a:1 HTTP/1.1\r\n"),
            HeadParse::Incomplete
        );
        assert_eq!(
            parse_head(&vec![b'a'; MAX_HEAD_BYTES]),
            HeadParse::Invalid(HeadError::TooLarge)
        );
        for bad in [
            &b"CONNECT a HTTP/1.1\r\n\r\n"[..],
            b"CONNECT a:0 HTTP/1.1\r\n\r\n",
            b"CONNECT user:pw@a:1 HTTP/1.1\r\n\r\n",
            b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            b"GET http://a/ HTTP/2\r\n\r\n",
            b"GET  http://a/ HTTP/1.1\r\n\r\n",
            b"GET http://a/ HTTP/1.1\r\nNoColon\r\n\r\n",
            b"\x05\x01\x00\r\n\r\n",
        ] {
            assert_eq!(
                parse_head(bad),
                HeadParse::Invalid(HeadError::Malformed),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            parse_head(b"GET https://a/ HTTP/1.1\r\n\r\n"),
            HeadParse::Invalid(HeadError::UnsupportedScheme)
        );
    }
}
