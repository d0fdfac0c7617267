//! What closing passed descriptors costs the provider: `messages` batches
//! of `per` descriptors (sockets: half TCP listeners, half Unix) are handed
//! to `neutralise`, `gap_us` apart, and the time until every one is closed
//! and the process's CPU (all threads: the closer's and its exiting
//! threads' included) are divided by the messages.
//! `cargo run --release -p cordon-passed-fds --example closer_cost [messages] [per] [gap_us]`
//! Run it against another build of the crate for a before/after.

use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// User + system CPU of this process so far (every thread's).
fn cpu() -> Duration {
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF);
    usage.map_or(Duration::ZERO, |u| {
        let tv = |t: nix::sys::time::TimeVal| {
            Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000)
        };
        tv(u.user_time()) + tv(u.system_time())
    })
}

fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let messages: usize = args.next().map_or(Ok(2000), |a| a.parse())?;
    let per: usize = args.next().map_or(Ok(1), |a| a.parse())?;
    let gap = Duration::from_micros(args.next().map_or(Ok(0), |a| a.parse())?);
    let (unix, _peer) = std::os::unix::net::UnixStream::pair()?;
    let tcp = std::net::TcpListener::bind("127.0.0.1:0")?;
    let before = open_descriptors();
    let (began, cpu_before) = (Instant::now(), cpu());
    for _ in 0..messages {
        let mut batch = Vec::with_capacity(per);
        for k in 0..per {
            batch.push(if k % 2 == 0 {
                OwnedFd::from(tcp.try_clone()?)
            } else {
                OwnedFd::from(unix.try_clone()?)
            });
        }
        cordon_passed_fds::neutralise(batch);
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
    }
    while open_descriptors() > before {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (wall, spent) = (began.elapsed(), cpu() - cpu_before);
    let each = |d: Duration| d.as_secs_f64() * 1e6 / messages as f64;
    println!(
        "{messages} messages of {per}, {gap:?} apart: all closed after {:.1} µs per message, CPU {:.1} µs per message",
        each(wall),
        each(spent)
    );
    Ok(())
}
