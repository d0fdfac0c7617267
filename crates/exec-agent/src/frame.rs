//! session-exec-v1 framing (docs/sessions.md): `[u32 BE length][u8 kind][u32 BE id][payload]`,
//! where length counts kind, id and payload. The host is the trusted side,
//! but its frames are still bounded here so a broken host cannot make the
//! agent allocate without limit.

use std::io::{self, Read, Write};

/// Bytes of kind + id, counted by the length prefix.
pub const KIND_AND_ID_BYTES: usize = 5;
/// Largest host→agent frame body (an exec request's JSON or a stdin chunk):
/// 1 MiB of payload is far above any argv + env the host sends.
pub const MAX_HOST_FRAME_BYTES: usize = (1 << 20) + KIND_AND_ID_BYTES;
/// Largest output chunk per frame: the host refuses larger ones, so the
/// agent never sends them.
pub const MAX_CHUNK_BYTES: usize = 32 * 1024;

/// Host → agent.
pub const EXEC: u8 = 1;
pub const STDIN: u8 = 2;
pub const SIGNAL: u8 = 3;
/// Agent → host.
pub const READY: u8 = 16;
pub const STARTED: u8 = 17;
pub const STDOUT: u8 = 18;
pub const STDERR: u8 = 19;
pub const EXIT: u8 = 20;
/// One `STDIN` chunk was handed to the command (or dropped: its stdin is closed).
pub const STDIN_ACK: u8 = 21;

/// `EXIT` payload's first byte.
pub const EXITED: u8 = 0;
pub const SIGNALED: u8 = 1;
pub const SPAWN_FAILED: u8 = 2;

#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: u8,
    pub id: u32,
    pub payload: Vec<u8>,
}

/// Reads one frame; `Ok(None)` at a clean EOF between frames.
pub fn read_frame(input: &mut impl Read) -> io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(len) as usize;
    if !(KIND_AND_ID_BYTES..=MAX_HOST_FRAME_BYTES).contains(&len) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frame length {len} outside {KIND_AND_ID_BYTES}..={MAX_HOST_FRAME_BYTES}"),
        ));
    }
    let mut body = vec![0u8; len];
    input.read_exact(&mut body)?;
    let payload = body.split_off(KIND_AND_ID_BYTES);
    let id = u32::from_be_bytes([body[1], body[2], body[3], body[4]]);
    Ok(Some(Frame {
        kind: body[0],
        id,
        payload,
    }))
}

/// One frame as bytes (written with a single `write_all` under the writer's lock).
pub fn encode(kind: u8, id: u32, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() + KIND_AND_ID_BYTES) as u32;
    let mut out = Vec::with_capacity(payload.len() + 4 + KIND_AND_ID_BYTES);
    out.extend_from_slice(&len.to_be_bytes());
    out.push(kind);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The `EXIT` payload: kind, value (exit code or signal number), message.
pub fn exit_payload(kind: u8, value: i32, message: &str) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(&value.to_be_bytes());
    out.extend_from_slice(message.as_bytes());
    out
}

/// Sends frames; shared by the command threads (one lock per frame, so
/// frames never interleave).
pub struct Writer<W: Write> {
    out: std::sync::Mutex<W>,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer {
            out: std::sync::Mutex::new(out),
        }
    }

    pub fn send(&self, kind: u8, id: u32, payload: &[u8]) -> io::Result<()> {
        let bytes = encode(kind, id, payload);
        let mut out = self
            .out
            .lock()
            .map_err(|_| io::Error::other("frame writer poisoned"))?;
        out.write_all(&bytes)?;
        out.flush()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_back_as_written() {
        let bytes = encode(STDIN, 7, b"hello");
        let frame = read_frame(&mut &bytes[..]).unwrap().unwrap();
        assert_eq!(
            frame,
            Frame {
                kind: STDIN,
                id: 7,
                payload: b"hello".to_vec()
            }
        );
        assert!(read_frame(&mut &b""[..]).unwrap().is_none());
    }

    #[test]
    fn a_length_below_the_header_or_past_the_bound_is_refused_before_allocating() {
        for len in [0u32, 4, (MAX_HOST_FRAME_BYTES + 1) as u32, u32::MAX] {
            let bytes = len.to_be_bytes();
            let err = read_frame(&mut &bytes[..]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "length {len}");
        }
    }
}
