//! Incoming JSON Lines frames (spec §1).
//!
//! One [`FrameReader`] owns the read side for the whole process: it reads the
//! `execute` frame, then moves into the reader thread with whatever bytes it
//! has buffered beyond that frame, so no byte is lost between the two.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::ops::Deref;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::duplicate_keys::find_duplicate_key;

/// Bytes asked of the descriptor per read: large enough for typical frames
/// in one call, small enough to keep an idle reader's buffer tiny.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// EOF before any byte of a frame.
    Closed,
    /// EOF inside a frame, before its newline.
    Truncated {
        bytes: usize,
    },
    Io(io::Error),
    /// A NUL byte in the line.
    Nul,
    /// The line (newline excluded) is not strictly shorter than the ceiling.
    Oversize {
        max_frame_bytes: u64,
    },
    Json(serde_json::Error),
    DuplicateKey(String),
    NotAnObject,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Closed => write!(f, "bridge closed before a frame (EOF)"),
            ReadError::Truncated { bytes } => {
                write!(f, "EOF after {bytes} bytes, before the frame's newline")
            }
            ReadError::Io(error) => write!(f, "read failed: {error}"),
            ReadError::Nul => write!(f, "frame contains a NUL byte"),
            ReadError::Oversize { max_frame_bytes } => {
                write!(
                    f,
                    "frame is not shorter than --max-frame-bytes {max_frame_bytes}"
                )
            }
            ReadError::Json(error) => write!(f, "frame is not valid JSON: {error}"),
            ReadError::DuplicateKey(key) => write!(f, "frame has a duplicate key {key:?}"),
            ReadError::NotAnObject => write!(f, "frame is not a JSON object"),
        }
    }
}

/// One decoded frame: its members, except that a `result` member is kept
/// as the JSON text the host wrote. QuickJS parses that text for the
/// program, so a tool result's keys arrive in the host's order (as
/// `JSON.parse` in Node gives them); `serde_json`'s map would sort them.
#[derive(Debug, Default)]
pub struct Frame {
    fields: Map<String, Value>,
    result: Option<Box<RawValue>>,
}

impl Frame {
    /// The `result` member's text, if the frame has one.
    pub fn result_text(&self) -> Option<&str> {
        self.result.as_deref().map(RawValue::get)
    }
}

impl From<Map<String, Value>> for Frame {
    fn from(fields: Map<String, Value>) -> Self {
        Frame {
            fields,
            result: None,
        }
    }
}

impl Deref for Frame {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.fields
    }
}

pub struct FrameReader<R> {
    source: R,
    buffer: Vec<u8>,
    /// Start of the unread bytes in `buffer`.
    start: usize,
    /// Unread bytes before this index are known to hold no newline.
    scanned: usize,
    max_frame_bytes: u64,
}

impl<R: Read> FrameReader<R> {
    pub fn new(source: R, max_frame_bytes: u64) -> Self {
        FrameReader {
            source,
            buffer: Vec::new(),
            start: 0,
            scanned: 0,
            max_frame_bytes,
        }
    }

    /// Bytes held for buffering (tests check that it stays bounded).
    #[cfg(test)]
    pub fn buffer_capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// Reads and decodes the next frame.
    pub fn read_frame(&mut self) -> Result<Frame, ReadError> {
        let line = self.next_line()?;
        decode_frame(&line)
    }

    /// The next line without its newline, refusing lines that reach the
    /// ceiling before their newline arrives (memory stays bounded by it).
    fn next_line(&mut self) -> Result<Vec<u8>, ReadError> {
        loop {
            if let Some(offset) = self.buffer[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + offset;
                let line = self.buffer[self.start..end].to_vec();
                self.start = end + 1;
                self.scanned = self.start;
                self.check_length(line.len())?;
                return Ok(line);
            }
            self.scanned = self.buffer.len();
            self.check_length(self.buffer.len() - self.start)?;
            self.fill()?;
        }
    }

    fn check_length(&self, length: usize) -> Result<(), ReadError> {
        if length as u64 >= self.max_frame_bytes {
            return Err(ReadError::Oversize {
                max_frame_bytes: self.max_frame_bytes,
            });
        }
        Ok(())
    }

    /// Reads one chunk, first dropping consumed bytes.
    fn fill(&mut self) -> Result<(), ReadError> {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
        let pending = self.buffer.len();
        self.buffer.resize(pending + READ_CHUNK_BYTES, 0);
        let result = loop {
            match self.source.read(&mut self.buffer[pending..]) {
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match result {
            Ok(count) => {
                self.buffer.truncate(pending + count);
                match count {
                    0 if pending == 0 => Err(ReadError::Closed),
                    0 => Err(ReadError::Truncated { bytes: pending }),
                    _ => Ok(()),
                }
            }
            Err(error) => {
                self.buffer.truncate(pending);
                Err(ReadError::Io(error))
            }
        }
    }
}

/// Decodes one line: NUL-free, valid JSON, no duplicate key, an object.
pub fn decode_frame(line: &[u8]) -> Result<Frame, ReadError> {
    if line.contains(&0) {
        return Err(ReadError::Nul);
    }
    let value: Value = serde_json::from_slice(line).map_err(ReadError::Json)?;
    match find_duplicate_key(line) {
        Ok(None) => {}
        Ok(Some(key)) => return Err(ReadError::DuplicateKey(key)),
        // Unreachable after serde accepted the text; refuse rather than trust.
        Err(_) => return Err(ReadError::NotAnObject),
    }
    let Value::Object(mut fields) = value else {
        return Err(ReadError::NotAnObject);
    };
    // The parsed `result` is dropped for its text (the line was checked
    // whole above: depth, syntax, duplicates), so a result is held once.
    let result = match fields.remove("result") {
        Some(_) => Some(result_text(line)?),
        None => None,
    };
    Ok(Frame { fields, result })
}

/// The text of the top-level `result` member of an object line.
fn result_text(line: &[u8]) -> Result<Box<RawValue>, ReadError> {
    let mut members: BTreeMap<String, &RawValue> =
        serde_json::from_slice(line).map_err(ReadError::Json)?;
    let text = members.remove("result").ok_or(ReadError::NotAnObject)?;
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that hands out its bytes in pieces of `step`.
    struct Trickle {
        bytes: Vec<u8>,
        step: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let count = self.step.min(out.len()).min(self.bytes.len());
            out[..count].copy_from_slice(&self.bytes[..count]);
            self.bytes.drain(..count);
            Ok(count)
        }
    }

    fn reader(bytes: &[u8], step: usize, max: u64) -> FrameReader<Trickle> {
        FrameReader::new(
            Trickle {
                bytes: bytes.to_vec(),
                step,
            },
            max,
        )
    }

    #[test]
    fn frames_split_across_reads_and_packed_in_one_read_all_arrive() {
        for step in [1, 3, 4096] {
            let mut frames = reader(b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", step, 100);
            for key in ["a", "b", "c"] {
                assert!(frames.read_frame().expect("frame").contains_key(key));
            }
            assert!(matches!(frames.read_frame(), Err(ReadError::Closed)));
        }
    }

    #[test]
    fn a_line_must_be_strictly_shorter_than_the_ceiling() {
        let line = b"{\"a\":12}\n"; // 8 bytes of content
        assert!(reader(line, 64, 9).read_frame().is_ok());
        assert!(matches!(
            reader(line, 64, 8).read_frame(),
            Err(ReadError::Oversize { .. })
        ));
        let endless = vec![b' '; 100_000];
        assert!(matches!(
            reader(&endless, 7, 1000).read_frame(),
            Err(ReadError::Oversize { .. })
        ));
    }

    #[test]
    fn nul_garbage_arrays_duplicates_and_truncation_are_refused() {
        type Expectation = fn(&ReadError) -> bool;
        let cases: [(&[u8], Expectation); 5] = [
            (b"{\"a\":\"\0\"}\n", |e| matches!(e, ReadError::Nul)),
            (b"{nope}\n", |e| matches!(e, ReadError::Json(_))),
            (b"[1]\n", |e| matches!(e, ReadError::NotAnObject)),
            (b"{\"k\":1,\"k\":1}\n", |e| {
                matches!(e, ReadError::DuplicateKey(_))
            }),
            (b"{\"a\":1}", |e| {
                matches!(e, ReadError::Truncated { bytes: 7 })
            }),
        ];
        for (bytes, expected) in cases {
            let error = reader(bytes, 64, 100).read_frame().expect_err("refused");
            assert!(expected(&error), "{error}");
        }
    }
}
