//! A provider out of descriptors: the engine's accept fails (EMFILE) while
//! a connection waits in the listener's queue, so the listener stays
//! readable. Retrying at once would spin a core for as long as the
//! descriptors stay spent. Alone in its test binary: it lowers the
//! process's descriptor limit and reads the process's CPU time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::os::unix::net::UnixStream;
use std::time::Duration;

use cordon_egress::Quotas;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use support::*;

/// CPU ticks so far, read through a file opened before the descriptors ran out.
fn cpu_ticks(stat_file: &mut std::fs::File) -> u64 {
    use std::io::{Read, Seek};
    let mut stat = String::new();
    stat_file.rewind().unwrap();
    stat_file.read_to_string(&mut stat).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn an_engine_whose_process_is_out_of_descriptors_waits_instead_of_spinning_on_accept() {
    let quotas = Quotas {
        max_concurrent_streams: 10_000,
        max_streams: 10_000,
        ..Quotas::default()
    };
    let run = start(vec![private("echo.test", 9)], quotas, false);
    let mut stat = std::fs::File::open("/proc/self/stat").unwrap();
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let open_now = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    setrlimit(Resource::RLIMIT_NOFILE, open_now + 32, hard).unwrap();
    // Each client costs one descriptor here and one for the engine's
    // accepted end (a handshake waiting for its request), until none is left.
    let mut clients = Vec::new();
    while let Ok(client) = UnixStream::connect(run.engine.socket_path()) {
        clients.push(client);
        assert!(clients.len() < 64, "the descriptor limit never bit");
    }
    std::thread::sleep(Duration::from_millis(200));
    let before = cpu_ticks(&mut stat);
    std::thread::sleep(Duration::from_secs(1));
    let spent = cpu_ticks(&mut stat) - before;
    setrlimit(Resource::RLIMIT_NOFILE, soft, hard).unwrap();
    eprintln!("provider CPU while out of descriptors: {spent} ticks in 1 s");
    assert!(
        spent <= 5,
        "the engine spent {spent} ticks of CPU in 1 s retrying accept"
    );
    drop(clients);
    drop(run);
}
