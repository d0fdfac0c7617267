//! Property test: arbitrary bytes through the frame reader and the execute
//! validator. No panic, memory bounded by `--max-frame-bytes`, and every
//! outcome one of the documented ones (a frame or a read error; a request or
//! a field-path error). A seeded generator keeps failures reproducible.

use std::io::{self, Read};

use crate::execute;
use crate::frame_reader::{FrameReader, ReadError};

/// The seeded generator, shared with the binary-level property test.
#[path = "../tests/support/rng.rs"]
mod rng;
use rng::Rng;

const VALID: &[u8] = br#"{"version":"code-bridge-v1","type":"execute","executionId":"e","code":"return 1","tools":[{"name":"a.b"}],"limits":{"maxToolCalls":1,"maxResultBytes":10,"timeoutMs":100}}"#;
/// Bytes that matter to JSON and to the framing.
const SPICE: &[u8] = b"{}[]\",:\\\n\0 0-1e.tfnu\xff\xc3";

/// A valid execute frame with a few mutations, or plain noise.
fn input(rng: &mut Rng) -> Vec<u8> {
    if rng.below(4) == 0 {
        return (0..rng.below(300)).map(|_| rng.next() as u8).collect();
    }
    let mut bytes = VALID.to_vec();
    for _ in 0..rng.below(6) {
        let at = rng.below(bytes.len() + 1);
        let spice = SPICE[rng.below(SPICE.len())];
        match rng.below(4) {
            0 => bytes.insert(at, spice),
            1 if at < bytes.len() => bytes[at] = spice,
            2 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {
                let end = (at + rng.below(40)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
        }
    }
    bytes.push(b'\n');
    bytes
}

/// Hands out its bytes in pieces of varying size.
struct Pieces<'a> {
    bytes: &'a [u8],
    rng: Rng,
}

impl Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let count = (1 + self.rng.below(64))
            .min(out.len())
            .min(self.bytes.len());
        out[..count].copy_from_slice(&self.bytes[..count]);
        self.bytes = &self.bytes[count..];
        Ok(count)
    }
}

#[test]
fn arbitrary_bytes_never_panic_and_end_in_a_documented_outcome() {
    let mut rng = Rng(0x5eed_c0de_0000_0001);
    let (mut frames, mut requests) = (0, 0);
    for round in 0..8_000 {
        let bytes = input(&mut rng);
        let max_frame_bytes = [8, 64, 200, 4096][round % 4];
        let source = Pieces {
            bytes: &bytes,
            rng: Rng(rng.next() | 1),
        };
        let mut reader = FrameReader::new(source, max_frame_bytes);
        loop {
            let outcome = reader.read_frame();
            // Growth by doubling at most: bounded by the ceiling plus one read chunk.
            assert!(reader.buffer_capacity() <= 2 * (max_frame_bytes as usize + 16 * 1024));
            match outcome {
                Ok(frame) => {
                    frames += 1;
                    match execute::validate(&frame) {
                        Ok(_) => requests += 1,
                        Err(error) => assert!(error.path.starts_with("execute."), "{error}"),
                    }
                }
                Err(
                    ReadError::Closed | ReadError::Truncated { .. } | ReadError::Oversize { .. },
                ) => break,
                Err(ReadError::Io(error)) => panic!("no I/O error from memory: {error}"),
                Err(_) => break,
            }
        }
    }
    // The generator must reach both sides of every check to mean anything.
    assert!(
        frames > 400 && requests > 200,
        "frames {frames}, requests {requests}"
    );
}
