//! The proxy frontend's SOCKS5 side (RFC 1928, no-auth, CONNECT only) — pure
//! and bounded. Domain-name requests (ATYP 3) are what `socks5h://` clients
//! send: the name is resolved by the engine on the host, never in the sandbox.

pub const VERSION: u8 = 5;
const METHOD_NO_AUTH: u8 = 0;
const METHOD_NONE_ACCEPTABLE: u8 = 0xff;
const CMD_CONNECT: u8 = 1;
const ATYP_IPV4: u8 = 1;
const ATYP_DOMAIN: u8 = 3;
const ATYP_IPV6: u8 = 4;

/// Reply codes (RFC 1928 §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reply {
    Succeeded = 0,
    GeneralFailure = 1,
    NotAllowedByRuleset = 2,
    HostUnreachable = 4,
    ConnectionRefused = 5,
    TtlExpired = 6,
    CommandNotSupported = 7,
    AddressTypeNotSupported = 8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parse<T> {
    Incomplete,
    /// The value and the bytes it used.
    Done(T, usize),
    Invalid,
}

/// The greeting: `VER NMETHODS METHODS…`; Done(true) when no-auth is offered.
pub fn parse_greeting(bytes: &[u8]) -> Parse<bool> {
    match bytes {
        [] | [_] => Parse::Incomplete,
        [v, ..] if *v != VERSION => Parse::Invalid,
        [_, n, methods @ ..] => {
            let n = usize::from(*n);
            if n == 0 {
                return Parse::Invalid;
            }
            match methods.get(..n) {
                None => Parse::Incomplete,
                Some(m) => Parse::Done(m.contains(&METHOD_NO_AUTH), 2 + n),
            }
        }
    }
}

pub fn greeting_reply(no_auth_offered: bool) -> [u8; 2] {
    [
        VERSION,
        if no_auth_offered {
            METHOD_NO_AUTH
        } else {
            METHOD_NONE_ACCEPTABLE
        },
    ]
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Host as text: a domain name, a dotted IPv4, or a bracketed IPv6.
    Connect { host: String, port: u16 },
    /// A well-formed request this engine does not serve (BIND, UDP ASSOCIATE, unknown ATYP).
    Unsupported(Reply),
}

/// The request: `VER CMD RSV ATYP DST.ADDR DST.PORT`.
pub fn parse_request(bytes: &[u8]) -> Parse<Request> {
    if bytes.len() < 5 {
        return Parse::Incomplete;
    }
    if bytes[0] != VERSION || bytes[2] != 0 {
        return Parse::Invalid;
    }
    let (addr_len, addr_start) = match bytes[3] {
        ATYP_IPV4 => (4, 4),
        ATYP_IPV6 => (16, 4),
        ATYP_DOMAIN => (usize::from(bytes[4]), 5),
        _ => {
            return Parse::Done(
                Request::Unsupported(Reply::AddressTypeNotSupported),
                bytes.len(),
            )
        }
    };
    let total = addr_start + addr_len + 2;
    let Some(frame) = bytes.get(..total) else {
        return Parse::Incomplete;
    };
    if bytes[1] != CMD_CONNECT {
        return Parse::Done(Request::Unsupported(Reply::CommandNotSupported), total);
    }
    let addr = &frame[addr_start..addr_start + addr_len];
    let port = u16::from_be_bytes([frame[total - 2], frame[total - 1]]);
    let host = match bytes[3] {
        ATYP_IPV4 => std::net::Ipv4Addr::new(addr[0], addr[1], addr[2], addr[3]).to_string(),
        ATYP_IPV6 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(addr);
            format!("[{}]", std::net::Ipv6Addr::from(octets))
        }
        _ => match std::str::from_utf8(addr) {
            Ok(name) if !name.is_empty() => name.to_owned(),
            _ => return Parse::Invalid,
        },
    };
    Parse::Done(Request::Connect { host, port }, total)
}

/// `VER REP RSV ATYP=IPv4 0.0.0.0:0` — the bound address is not disclosed.
pub fn reply(code: Reply) -> [u8; 10] {
    [VERSION, code as u8, 0, ATYP_IPV4, 0, 0, 0, 0, 0, 0]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn greetings_offer_or_lack_no_auth() {
        assert_eq!(parse_greeting(&[5, 2, 2, 0]), Parse::Done(true, 4));
        assert_eq!(parse_greeting(&[5, 1, 2]), Parse::Done(false, 3));
        assert_eq!(parse_greeting(&[5, 2, 0]), Parse::Incomplete);
        assert_eq!(parse_greeting(&[4, 1, 0]), Parse::Invalid);
        assert_eq!(parse_greeting(&[5, 0]), Parse::Invalid);
        assert_eq!(greeting_reply(false), [5, 0xff]);
    }

    #[test]
    fn domain_ipv4_and_ipv6_connects_parse() {
        let mut domain = vec![5, 1, 0, 3, 11];
        domain.extend_from_slice(b"a.example.c");
        domain.extend_from_slice(&443u16.to_be_bytes());
        assert_eq!(
            parse_request(&domain),
            Parse::Done(
                Request::Connect {
                    host: "a.example.c".into(),
                    port: 443
                },
                domain.len()
            )
        );
        assert_eq!(
            parse_request(&domain[..domain.len() - 1]),
            Parse::Incomplete
        );
        let v4 = [5, 1, 0, 1, 127, 0, 0, 1, 0, 80];
        assert_eq!(
            parse_request(&v4),
            Parse::Done(
                Request::Connect {
                    host: "127.0.0.1".into(),
                    port: 80
                },
                10
            )
        );
        let mut v6 = vec![5, 1, 0, 4];
        v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0, 22]);
        assert_eq!(
            parse_request(&v6),
            Parse::Done(
                Request::Connect {
                    host: "[::1]".into(),
                    port: 22
                },
                22
            )
        );
    }

    #[test]
    fn bind_udp_and_unknown_address_types_are_unsupported() {
        assert_eq!(
            parse_request(&[5, 3, 0, 1, 1, 2, 3, 4, 0, 1]),
            Parse::Done(Request::Unsupported(Reply::CommandNotSupported), 10)
        );
        assert_eq!(
            parse_request(&[5, 1, 0, 9, 0]),
            Parse::Done(Request::Unsupported(Reply::AddressTypeNotSupported), 5)
        );
        assert_eq!(parse_request(&[5, 1, 1, 1, 0]), Parse::Invalid);
        assert_eq!(parse_request(&[5, 1, 0, 3, 0, 0, 80]), Parse::Invalid);
    }
}
