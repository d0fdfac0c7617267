//! Property test against the real binary: arbitrary first frames (mutated
//! execute frames and noise) always end in a documented exit code with the
//! documented frames — 0 after `ready` + one terminal frame, 1 and 2 with
//! no frame at all. A seeded generator keeps failures reproducible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use support::rng::Rng;
use support::Host;

const SPICE: &[u8] = b"{}[]\",:\\\n\0 0-1e.\xff";

fn first_frame(rng: &mut Rng) -> Vec<u8> {
    let valid = json!({"version": "code-bridge-v1", "type": "execute", "executionId": "f",
        "code": "return [1, 'two', {three: 3}];", "tools": [{"name": "t"}],
        "limits": {"maxToolCalls": 2, "maxResultBytes": 100, "timeoutMs": 200}});
    let mut bytes = serde_json::to_vec(&valid).expect("json");
    if rng.below(5) == 0 {
        bytes = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
    }
    for _ in 0..rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        let spice = SPICE[rng.below(SPICE.len())];
        if rng.below(2) == 0 || at == bytes.len() {
            bytes.insert(at, spice);
        } else {
            bytes[at] = spice;
        }
    }
    bytes.push(b'\n');
    bytes
}

#[test]
fn arbitrary_first_frames_end_in_a_documented_exit_code_and_frames() {
    let mut rng = Rng(0xfeed_face_cafe_0001);
    let mut seen = [0usize; 3];
    for _ in 0..120 {
        let bytes = first_frame(&mut rng);
        let mut host = Host::spawn(&["--timeout-ms", "200", "--max-frame-bytes", "4096"]);
        host.send_raw_lossy(&bytes);
        let mut frames: Vec<Value> = Vec::new();
        while let Some(line) = host.recv_line() {
            let frame: Value = serde_json::from_str(&line).expect("runner frames are JSON");
            if frame["type"] == "tool.call" {
                host.reply_ok(frame["id"].as_u64().expect("id"), json!(null));
            }
            frames.push(frame);
            if frames
                .last()
                .is_some_and(|f| f["type"] == "execution.result")
            {
                break;
            }
        }
        let ended = host.end();
        let input = String::from_utf8_lossy(&bytes);
        match ended.code {
            Some(0) => {
                assert_eq!(
                    frames.first().map(|f| f["type"].clone()),
                    Some(json!("ready")),
                    "{input}"
                );
                assert_eq!(
                    frames.last().map(|f| f["type"].clone()),
                    Some(json!("execution.result")),
                    "{input}"
                );
            }
            Some(1 | 2) => assert!(frames.is_empty(), "{input}: {frames:?}"),
            other => panic!("undocumented exit {other:?} for {input}: {}", ended.stderr),
        }
        seen[ended.code.unwrap_or(0) as usize] += 1;
    }
    assert!(
        seen.iter().all(|&count| count > 0),
        "every exit code reached: {seen:?}"
    );
}
