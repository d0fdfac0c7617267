//! What a sandbox's socket pair costs made by the pair maker (in an empty
//! network namespace) against a plain `socketpair` here, interleaved.
//! `cargo run --release -p cordon-passed-fds --example pair_cost [rounds] [gap_us]`
//! prints the median and p90 of each in µs. `gap_us` sleeps between pairs
//! (a spawn's pair is made between other work, so the maker is asleep).

use std::time::{Duration, Instant};

use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(Ok(2000), |a| a.parse())?;
    let gap = Duration::from_micros(args.next().map_or(Ok(0), |a| a.parse())?);
    // The first pair starts the maker: not counted.
    drop(cordon_passed_fds::sandbox_pair(SockType::Stream)?);
    let (mut maker, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let pair = cordon_passed_fds::sandbox_pair(SockType::Stream)?;
        maker.push(t.elapsed());
        drop(pair);
        std::thread::sleep(gap);
        let t = Instant::now();
        let pair = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let named = cordon_passed_fds::take_automatic_name(std::os::fd::AsFd::as_fd(&pair.1));
        plain.push(t.elapsed());
        assert!(named);
        drop(pair);
        std::thread::sleep(gap);
    }
    for (name, mut v) in [("maker", maker), ("socketpair + name", plain)] {
        v.sort();
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{name:>18}: median {:.1} µs, p90 {:.1} µs ({} pairs)",
            us(v[v.len() / 2]),
            us(v[v.len() * 9 / 10]),
            v.len()
        );
    }
    Ok(())
}
