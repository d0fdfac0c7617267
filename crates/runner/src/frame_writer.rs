//! Outgoing frames (spec §1): one writer, canonical JSON plus `\n`, bounded
//! by `--max-frame-bytes`, and a close that lets the host drain to EOF.

use std::fmt;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use nix::sys::socket::{recv, MsgFlags};

use serde_json::Value;

use crate::canonical_json;

/// Unread host bytes discarded at close, at most: closing a socket with
/// unread input makes the host see ECONNRESET instead of a clean EOF.
const CLOSE_DRAIN_MAX_BYTES: usize = 1 << 20;

#[derive(Debug)]
pub enum WriteError {
    /// The frame (newline excluded) is not strictly shorter than the ceiling.
    TooLarge {
        bytes: usize,
        max_frame_bytes: u64,
    },
    PeerGone(io::Error),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::TooLarge { bytes, max_frame_bytes } => write!(
                f,
                "outgoing frame of {bytes} bytes is not shorter than --max-frame-bytes {max_frame_bytes}"
            ),
            WriteError::PeerGone(error) => write!(f, "bridge write failed: {error}"),
        }
    }
}

pub struct FrameWriter {
    stream: UnixStream,
    max_frame_bytes: u64,
}

impl FrameWriter {
    pub fn new(stream: UnixStream, max_frame_bytes: u64) -> Self {
        FrameWriter {
            stream,
            max_frame_bytes,
        }
    }

    pub fn max_frame_bytes(&self) -> u64 {
        self.max_frame_bytes
    }

    /// The frame's bytes with its newline, or `TooLarge`.
    pub fn encode(&self, frame: &Value) -> Result<Vec<u8>, WriteError> {
        let mut bytes = canonical_json::encode(frame);
        if bytes.len() as u64 >= self.max_frame_bytes {
            return Err(WriteError::TooLarge {
                bytes: bytes.len(),
                max_frame_bytes: self.max_frame_bytes,
            });
        }
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Writes already encoded bytes in full.
    pub fn write_encoded(&self, bytes: &[u8]) -> Result<(), WriteError> {
        (&self.stream)
            .write_all(bytes)
            .map_err(WriteError::PeerGone)
    }

    pub fn send(&self, frame: &Value) -> Result<(), WriteError> {
        let bytes = self.encode(frame)?;
        self.write_encoded(&bytes)
    }

    /// After the terminal frame: half-close our side so the host reads the
    /// frame then EOF, and discard host bytes already queued to us.
    pub fn close(&self) {
        // Not a socket (a pipe in a test harness) or already shut: nothing to do.
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
        let mut scratch = [0u8; 4096];
        let mut discarded = 0;
        while discarded < CLOSE_DRAIN_MAX_BYTES {
            match recv(
                self.stream.as_raw_fd(),
                &mut scratch,
                MsgFlags::MSG_DONTWAIT,
            ) {
                Ok(0) | Err(_) => break,
                Ok(count) => discarded += count,
            }
        }
    }
}
