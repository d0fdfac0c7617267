//! Server Name Indication from a TLS ClientHello — a pure, bounded parser.
//!
//! The engine reads the client's first bytes (at most [`MAX_CLIENT_HELLO_BYTES`])
//! before anything goes upstream and feeds them here until the verdict is not
//! `Incomplete`. Only a ClientHello carried whole in the first TLS record is
//! accepted (what every mainstream client sends); anything else is `NotTls`
//! or `Malformed`, which admission turns into `sni-absent`.

/// A TLS record is at most 2^14 bytes of payload plus its 5-byte header.
pub const MAX_CLIENT_HELLO_BYTES: usize = 5 + (1 << 14);

const RECORD_HANDSHAKE: u8 = 22;
const HANDSHAKE_CLIENT_HELLO: u8 = 1;
const EXTENSION_SERVER_NAME: u16 = 0;
const NAME_TYPE_HOST: u8 = 0;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SniVerdict {
    /// More bytes are needed (and fewer than the bound have been seen).
    Incomplete,
    /// A ClientHello without a host_name entry.
    NoSni,
    /// The host_name, lowercased, without a trailing dot.
    Sni(String),
    /// The bytes are not a TLS handshake record.
    NotTls,
    /// A handshake record whose ClientHello does not parse.
    Malformed,
}

/// Parses as much of `bytes` as is present.
pub fn parse_client_hello(bytes: &[u8]) -> SniVerdict {
    if bytes.is_empty() {
        return SniVerdict::Incomplete;
    }
    if bytes[0] != RECORD_HANDSHAKE {
        return SniVerdict::NotTls;
    }
    if bytes.len() < 5 {
        return SniVerdict::Incomplete;
    }
    if bytes[1] != 3 {
        return SniVerdict::NotTls;
    }
    let record_len = usize::from(u16::from_be_bytes([bytes[3], bytes[4]]));
    if record_len == 0 || record_len > (1 << 14) {
        return SniVerdict::Malformed;
    }
    let Some(record) = bytes.get(5..5 + record_len) else {
        return SniVerdict::Incomplete;
    };
    client_hello_sni(record).unwrap_or(SniVerdict::Malformed)
}

/// A cursor over a byte slice whose reads fail (None) instead of panicking.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn u24(&mut self) -> Option<usize> {
        self.take(3)
            .map(|b| usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
}

fn client_hello_sni(record: &[u8]) -> Option<SniVerdict> {
    let mut r = Reader { rest: record };
    if r.u8()? != HANDSHAKE_CLIENT_HELLO {
        return None;
    }
    let body_len = r.u24()?;
    // The whole ClientHello must sit in this record (no fragmentation).
    let mut body = Reader {
        rest: r.take(body_len)?,
    };
    body.take(2)?; // legacy_version
    body.take(32)?; // random
    body.vec8()?; // legacy_session_id
    body.vec16()?; // cipher_suites
    body.vec8()?; // legacy_compression_methods
    if body.rest.is_empty() {
        return Some(SniVerdict::NoSni);
    }
    let mut extensions = Reader {
        rest: body.vec16()?,
    };
    while !extensions.rest.is_empty() {
        let kind = extensions.u16()?;
        let data = extensions.vec16()?;
        if kind == EXTENSION_SERVER_NAME {
            return server_name(data);
        }
    }
    Some(SniVerdict::NoSni)
}

fn server_name(data: &[u8]) -> Option<SniVerdict> {
    let mut outer = Reader { rest: data };
    let mut list = Reader {
        rest: outer.vec16()?,
    };
    while !list.rest.is_empty() {
        let name_type = list.u8()?;
        let name = list.vec16()?;
        if name_type == NAME_TYPE_HOST {
            let text = std::str::from_utf8(name).ok()?;
            if text.is_empty() || !text.is_ascii() {
                return None;
            }
            let text = text.strip_suffix('.').unwrap_or(text);
            return Some(SniVerdict::Sni(text.to_ascii_lowercase()));
        }
    }
    Some(SniVerdict::NoSni)
}

/// Builds a minimal, well-formed ClientHello carrying `sni` (tests and the
/// fuzz corpus; never used on the wire by the engine).
pub fn client_hello_for_tests(sni: Option<&str>) -> Vec<u8> {
    let mut extensions = Vec::new();
    if let Some(name) = sni {
        let name = name.as_bytes();
        let mut list = vec![NAME_TYPE_HOST];
        list.extend_from_slice(&(name.len() as u16).to_be_bytes());
        list.extend_from_slice(name);
        let mut data = (list.len() as u16).to_be_bytes().to_vec();
        data.extend_from_slice(&list);
        extensions.extend_from_slice(&EXTENSION_SERVER_NAME.to_be_bytes());
        extensions.extend_from_slice(&(data.len() as u16).to_be_bytes());
        extensions.extend_from_slice(&data);
    }
    // supported_versions (an unrelated extension first would be realistic too)
    extensions.extend_from_slice(&[0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04]);
    let mut body = vec![3, 3];
    body.extend_from_slice(&[7u8; 32]);
    body.push(0); // session id
    body.extend_from_slice(&[0, 2, 0x13, 0x01]); // one cipher suite
    body.extend_from_slice(&[1, 0]); // null compression
    body.extend_from_slice(&(extensions.len() as u16).to_be_bytes());
    body.extend_from_slice(&extensions);
    let mut handshake = vec![HANDSHAKE_CLIENT_HELLO];
    let len = body.len() as u32;
    handshake.extend_from_slice(&len.to_be_bytes()[1..]);
    handshake.extend_from_slice(&body);
    let mut record = vec![RECORD_HANDSHAKE, 3, 1];
    record.extend_from_slice(&(handshake.len() as u16).to_be_bytes());
    record.extend_from_slice(&handshake);
    record
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_host_name_of_a_client_hello_is_extracted() {
        let hello = client_hello_for_tests(Some("Api.Example.com"));
        assert_eq!(
            parse_client_hello(&hello),
            SniVerdict::Sni("api.example.com".into())
        );
    }

    #[test]
    fn a_client_hello_without_sni_says_so() {
        assert_eq!(
            parse_client_hello(&client_hello_for_tests(None)),
            SniVerdict::NoSni
        );
    }

    #[test]
    fn every_proper_prefix_is_incomplete() {
        let hello = client_hello_for_tests(Some("a.example"));
        for n in 0..hello.len() {
            assert_eq!(
                parse_client_hello(&hello[..n]),
                SniVerdict::Incomplete,
                "prefix {n}"
            );
        }
    }

    #[test]
    fn plain_http_and_ssh_banners_are_not_tls() {
        assert_eq!(
            parse_client_hello(b"GET / HTTP/1.1\r\n"),
            SniVerdict::NotTls
        );
        assert_eq!(
            parse_client_hello(b"SSH-2.0-OpenSSH\r\n"),
            SniVerdict::NotTls
        );
    }

    /// xorshift64*: a deterministic generator so a failing case reproduces.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn fuzzed_and_mutated_client_hellos_never_panic_and_stay_bounded() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let seed = client_hello_for_tests(Some("fuzz.example"));
        for round in 0..20_000 {
            let mut bytes = if round % 2 == 0 {
                seed.clone()
            } else {
                let n = (next(&mut state) % 600) as usize;
                let mut v: Vec<u8> = (0..n).map(|_| next(&mut state) as u8).collect();
                if let Some(first) = v.first_mut() {
                    *first = RECORD_HANDSHAKE;
                }
                if v.len() > 1 {
                    v[1] = 3;
                }
                v
            };
            let flips = 1 + next(&mut state) % 4;
            for _ in 0..flips {
                if bytes.is_empty() {
                    break;
                }
                let at = (next(&mut state) as usize) % bytes.len();
                bytes[at] = next(&mut state) as u8;
            }
            let cut = (next(&mut state) as usize) % (bytes.len() + 1);
            if let SniVerdict::Sni(name) = parse_client_hello(&bytes[..cut]) {
                assert!(name.len() < MAX_CLIENT_HELLO_BYTES);
            }
        }
    }
}
