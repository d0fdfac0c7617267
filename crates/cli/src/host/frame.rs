//! `cordon-remote-v1` framing (docs/remote.md § Framing): a `u32`
//! big-endian length `L`, one type byte, `L - 1` bytes of payload. Every
//! frame is bounded before its payload is read, so a peer can never make
//! the host allocate more than one frame's limit.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest control (JSON) payload: room for a policy and a receipt.
pub const MAX_CONTROL_BYTES: usize = 1 << 20;
/// Largest data payload (fd 3 / stderr bytes): one launcher read chunk.
pub const MAX_DATA_BYTES: usize = 64 * 1024;

/// The frame types of the protocol, by their byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Hello = 0x01,
    Welcome = 0x02,
    Upload = 0x03,
    Spawn = 0x04,
    Started = 0x05,
    Refused = 0x06,
    Data = 0x10,
    End = 0x11,
    Stderr = 0x12,
    StderrEnd = 0x13,
    Credit = 0x14,
    Stop = 0x20,
    Exit = 0x21,
    Ping = 0x30,
    Pong = 0x31,
    /// client → host after `welcome`, instead of a run: the receipts kept
    /// for an invocation id (recovery.rs).
    ReceiptQuery = 0x40,
    Receipts = 0x41,
}

impl Kind {
    fn from_byte(byte: u8) -> Option<Kind> {
        const ALL: [Kind; 17] = [
            Kind::Hello,
            Kind::Welcome,
            Kind::Upload,
            Kind::Spawn,
            Kind::Started,
            Kind::Refused,
            Kind::Data,
            Kind::End,
            Kind::Stderr,
            Kind::StderrEnd,
            Kind::Credit,
            Kind::Stop,
            Kind::Exit,
            Kind::Ping,
            Kind::Pong,
            Kind::ReceiptQuery,
            Kind::Receipts,
        ];
        ALL.into_iter().find(|k| *k as u8 == byte)
    }

    /// The payload bound of this type: data frames are raw chunks.
    fn limit(self) -> usize {
        match self {
            Kind::Data | Kind::Stderr => MAX_DATA_BYTES,
            _ => MAX_CONTROL_BYTES,
        }
    }
}

#[derive(Debug)]
pub struct Frame {
    pub kind: Kind,
    pub payload: Vec<u8>,
}

/// Why no frame was read: each is a protocol violation or the end.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("read: {0}")]
    Io(#[from] std::io::Error),
    #[error("frame length 0")]
    Empty,
    #[error("unknown frame type 0x{0:02x}")]
    UnknownType(u8),
    #[error("{kind:?} frame of {len} bytes is over its limit of {limit}")]
    Oversize {
        kind: Kind,
        len: usize,
        limit: usize,
    },
}

/// Reads one frame; its length is checked against its type's limit before
/// any payload byte is read or allocated.
pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> Result<Frame, FrameError> {
    let mut head = [0u8; 5];
    match reader.read_exact(&mut head[..4]).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
    if len == 0 {
        return Err(FrameError::Empty);
    }
    reader.read_exact(&mut head[4..5]).await?;
    let kind = Kind::from_byte(head[4]).ok_or(FrameError::UnknownType(head[4]))?;
    let limit = kind.limit();
    if len - 1 > limit {
        return Err(FrameError::Oversize {
            kind,
            len: len - 1,
            limit,
        });
    }
    let mut payload = vec![0u8; len - 1];
    reader.read_exact(&mut payload).await?;
    Ok(Frame { kind, payload })
}

/// The bytes of one frame (header and payload in one buffer, one write).
pub fn encode(kind: Kind, payload: &[u8]) -> Vec<u8> {
    // Payloads we build are bounded by the limits above (< 4 GiB).
    let len = u32::try_from(payload.len() + 1).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(payload.len() + 5);
    out.extend_from_slice(&len.to_be_bytes());
    out.push(kind as u8);
    out.extend_from_slice(payload);
    out
}

pub async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    kind: Kind,
    payload: &[u8],
) -> std::io::Result<()> {
    writer.write_all(&encode(kind, payload)).await?;
    writer.flush().await
}

/// A `credit` payload: stream id and byte count.
pub fn credit_payload(stream: u8, bytes: u32) -> [u8; 5] {
    let b = bytes.to_be_bytes();
    [stream, b[0], b[1], b[2], b[3]]
}

/// Parses a `credit` payload: exactly 5 bytes, stream 0 or 1.
pub fn parse_credit(payload: &[u8]) -> Option<(u8, u32)> {
    match payload {
        [stream @ (0 | 1), a, b, c, d] => Some((*stream, u32::from_be_bytes([*a, *b, *c, *d]))),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn read(bytes: Vec<u8>) -> Result<Frame, FrameError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async move { read_frame(&mut bytes.as_slice()).await })
    }

    #[test]
    fn a_frame_round_trips_and_bounds_are_checked_before_the_payload() {
        let frame = read(encode(Kind::Hello, b"{}")).unwrap();
        assert_eq!(
            (frame.kind, frame.payload.as_slice()),
            (Kind::Hello, &b"{}"[..])
        );
        // Only the header of an oversize data frame exists: refused anyway.
        let mut head = ((MAX_DATA_BYTES + 2) as u32).to_be_bytes().to_vec();
        head.push(Kind::Data as u8);
        assert!(matches!(read(head), Err(FrameError::Oversize { .. })));
        assert!(matches!(read(vec![0, 0, 0, 0]), Err(FrameError::Empty)));
        assert!(matches!(
            read(vec![0, 0, 0, 1, 0x7f]),
            Err(FrameError::UnknownType(0x7f))
        ));
        assert!(matches!(read(vec![]), Err(FrameError::Closed)));
    }

    #[test]
    fn credit_payloads_name_a_known_stream() {
        assert_eq!(parse_credit(&credit_payload(1, 70_000)), Some((1, 70_000)));
        assert_eq!(parse_credit(&[2, 0, 0, 0, 1]), None);
        assert_eq!(parse_credit(&[0, 0, 0]), None);
    }
}
