//! The fd-4 egress channel v1 wire format (pure codec).
//!
//! Request datagram `MECQ` (all integers big-endian):
//! `magic u32 = 0x4d454351 | version u8 = 1 | protocol u8 (1 = TCP) | port u16 | host_len u16 | host`
//! — exactly 10 + host_len bytes, no ancillary data.
//! Response datagram `MECP`: `magic u32 = 0x4d454350 | version u8 = 1 | status u8 | reserved u16 = 0`,
//! carrying exactly one descriptor via SCM_RIGHTS when the status is OK.

pub const REQUEST_MAGIC: u32 = 0x4d45_4351;
pub const RESPONSE_MAGIC: u32 = 0x4d45_4350;
pub const VERSION: u8 = 1;
pub const PROTOCOL_TCP: u8 = 1;
pub const REQUEST_HEADER_BYTES: usize = 10;
pub const RESPONSE_BYTES: usize = 8;
/// A host is at most 253 bytes; a longer datagram is malformed, and the
/// receive buffer is one byte larger so truncation is detectable.
pub const MAX_REQUEST_BYTES: usize = REQUEST_HEADER_BYTES + 253;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Fd4Status {
    Ok = 0,
    Denied = 1,
    Timeout = 2,
    Cancelled = 3,
    Malformed = 4,
    Unsupported = 5,
    Resource = 6,
    Internal = 7,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fd4Request {
    pub host: String,
    pub port: u16,
}

/// Decodes one request datagram; the error is the status to answer with.
pub fn decode_request(datagram: &[u8]) -> Result<Fd4Request, Fd4Status> {
    if datagram.len() < REQUEST_HEADER_BYTES || datagram.len() > MAX_REQUEST_BYTES {
        return Err(Fd4Status::Malformed);
    }
    let magic = u32::from_be_bytes([datagram[0], datagram[1], datagram[2], datagram[3]]);
    if magic != REQUEST_MAGIC {
        return Err(Fd4Status::Malformed);
    }
    if datagram[4] != VERSION {
        return Err(Fd4Status::Unsupported);
    }
    let port = u16::from_be_bytes([datagram[6], datagram[7]]);
    let host_len = usize::from(u16::from_be_bytes([datagram[8], datagram[9]]));
    if datagram.len() != REQUEST_HEADER_BYTES + host_len || host_len == 0 || port == 0 {
        return Err(Fd4Status::Malformed);
    }
    if datagram[5] != PROTOCOL_TCP {
        return Err(Fd4Status::Unsupported);
    }
    let host =
        std::str::from_utf8(&datagram[REQUEST_HEADER_BYTES..]).map_err(|_| Fd4Status::Malformed)?;
    Ok(Fd4Request {
        host: host.to_owned(),
        port,
    })
}

pub fn encode_request(request: &Fd4Request) -> Vec<u8> {
    let mut out = REQUEST_MAGIC.to_be_bytes().to_vec();
    out.push(VERSION);
    out.push(PROTOCOL_TCP);
    out.extend_from_slice(&request.port.to_be_bytes());
    out.extend_from_slice(&(request.host.len() as u16).to_be_bytes());
    out.extend_from_slice(request.host.as_bytes());
    out
}

pub fn encode_response(status: Fd4Status) -> [u8; RESPONSE_BYTES] {
    let m = RESPONSE_MAGIC.to_be_bytes();
    [m[0], m[1], m[2], m[3], VERSION, status as u8, 0, 0]
}

pub fn decode_response(bytes: &[u8]) -> Option<u8> {
    if bytes.len() != RESPONSE_BYTES
        || bytes[..4] != RESPONSE_MAGIC.to_be_bytes()
        || bytes[4] != VERSION
    {
        return None;
    }
    Some(bytes[5])
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_and_is_ten_bytes_plus_the_host() {
        let req = Fd4Request {
            host: "api.example.com".into(),
            port: 443,
        };
        let wire = encode_request(&req);
        assert_eq!(wire.len(), 10 + 15);
        assert_eq!(&wire[..4], b"MECQ");
        assert_eq!(decode_request(&wire), Ok(req));
    }

    #[test]
    fn responses_start_with_mecp_and_carry_the_status() {
        let wire = encode_response(Fd4Status::Denied);
        assert_eq!(&wire[..4], b"MECP");
        assert_eq!(wire, [0x4d, 0x45, 0x43, 0x50, 1, 1, 0, 0]);
        assert_eq!(decode_response(&wire), Some(1));
    }

    #[test]
    fn wrong_magic_length_version_or_protocol_is_refused_with_its_status() {
        let good = encode_request(&Fd4Request {
            host: "a.example".into(),
            port: 80,
        });
        let mut bad_magic = good.clone();
        bad_magic[0] = b'X';
        assert_eq!(decode_request(&bad_magic), Err(Fd4Status::Malformed));
        let mut longer = good.clone();
        longer.push(b'x');
        assert_eq!(decode_request(&longer), Err(Fd4Status::Malformed));
        assert_eq!(
            decode_request(&good[..good.len() - 1]),
            Err(Fd4Status::Malformed)
        );
        assert_eq!(decode_request(&good[..9]), Err(Fd4Status::Malformed));
        let mut v2 = good.clone();
        v2[4] = 2;
        assert_eq!(decode_request(&v2), Err(Fd4Status::Unsupported));
        let mut udp = good.clone();
        udp[5] = 2;
        assert_eq!(decode_request(&udp), Err(Fd4Status::Unsupported));
        let mut port0 = good;
        port0[6] = 0;
        port0[7] = 0;
        assert_eq!(decode_request(&port0), Err(Fd4Status::Malformed));
    }

    #[test]
    fn arbitrary_datagrams_never_panic() {
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let n = (s % 300) as usize;
            let mut d: Vec<u8> = (0..n).map(|i| (s >> (i % 56)) as u8).collect();
            if d.len() >= 4 && s.is_multiple_of(3) {
                d[..4].copy_from_slice(b"MECQ");
            }
            let _ = decode_request(&d);
        }
    }
}
