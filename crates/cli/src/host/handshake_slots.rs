//! The handshake slots (`handshake.maxConcurrent`): connections between
//! accept and `spawn`, and each source's share of them (black-box round 9,
//! R9-4: one pool for every peer let 32 idle TCP connections of one
//! unauthenticated peer close every client out).
//!
//! - A source is an IPv4 address, an IPv6 /64 (one host usually holds a
//!   whole /64: counting addresses would give it 2^64 shares), or a Unix
//!   uid.
//! - A source holding fewer than `handshake.perSource` slots takes one
//!   while any is free.
//! - A source at or past its share takes one more only while at least half
//!   the pool is free: one busy client may still open a burst of runs on an
//!   idle host, but one source never holds more than its share or half
//!   the pool plus one (the larger), and the rest stays for sources under
//!   their share.
//!
//! A [`HandshakeSlot`] is a guard: dropping it frees the pool's slot and
//! the source's count.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Who a handshake slot is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// An IPv4 address, or the /64 of an IPv6 one (mapped IPv4 as IPv4).
    Ip(IpAddr),
    /// A Unix peer's uid (`SO_PEERCRED`).
    Uid(u32),
}

impl Source {
    pub fn of_ip(ip: IpAddr) -> Source {
        match ip {
            IpAddr::V4(v4) => Source::Ip(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Source::Ip(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    Source::Ip(IpAddr::V6(prefix.into()))
                }
            },
        }
    }
}

type Counts = Arc<Mutex<HashMap<Source, usize>>>;

/// The pool and every source's count in it.
#[derive(Debug)]
pub struct HandshakeSlots {
    pool: Arc<Semaphore>,
    size: usize,
    per_source: usize,
    counts: Counts,
}

/// One slot of the pool, counted against its source; freed on drop.
#[derive(Debug)]
pub struct HandshakeSlot {
    _permit: OwnedSemaphorePermit,
    source: Source,
    counts: Counts,
}

impl HandshakeSlots {
    pub fn new(size: usize, per_source: usize) -> HandshakeSlots {
        HandshakeSlots {
            pool: Arc::new(Semaphore::new(size)),
            size,
            per_source,
            counts: Arc::default(),
        }
    }

    /// Free slots of the pool.
    #[cfg(test)]
    pub fn available(&self) -> usize {
        self.pool.available_permits()
    }

    /// A slot for `source`, or `None`: the pool is full, or the source is
    /// past its share while less than half the pool is free (module doc).
    pub fn try_take(&self, source: Source) -> Option<HandshakeSlot> {
        // The count and the permit change together under the lock: two
        // connections of one source cannot both pass the share check.
        let mut counts = self.counts.lock().ok()?;
        let held = counts.get(&source).copied().unwrap_or(0);
        let past_share = held >= self.per_source;
        if past_share && self.pool.available_permits() * 2 < self.size {
            return None;
        }
        let permit = Arc::clone(&self.pool).try_acquire_owned().ok()?;
        counts.insert(source, held + 1);
        Some(HandshakeSlot {
            _permit: permit,
            source,
            counts: Arc::clone(&self.counts),
        })
    }
}

impl Drop for HandshakeSlot {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.counts.lock() {
            if let Some(n) = counts.get_mut(&self.source) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(&self.source);
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Source {
        Source::of_ip(text.parse().unwrap())
    }

    #[test]
    fn a_source_past_its_share_leaves_half_the_pool_to_the_others() {
        let slots = HandshakeSlots::new(8, 2);
        let mut held: Vec<_> = std::iter::from_fn(|| slots.try_take(ip("10.0.0.1")))
            .take(100)
            .collect();
        // 2 (its share), then more only while at least 4 of 8 are free.
        assert_eq!(held.len(), 5, "the flood holds half the pool plus one");
        let a = slots.try_take(ip("10.0.0.2")).unwrap();
        let b = slots.try_take(ip("10.0.0.2")).unwrap();
        assert!(
            slots.try_take(ip("10.0.0.2")).is_none(),
            "past its share on a busy pool"
        );
        let c = slots.try_take(Source::Uid(7)).unwrap();
        assert!(slots.try_take(Source::Uid(8)).is_none(), "the pool is full");
        drop((a, b, c));
        held.truncate(1);
        assert_eq!(slots.available(), 7, "dropped slots are free again");
        assert_eq!(
            *slots.counts.lock().unwrap().get(&ip("10.0.0.1")).unwrap(),
            1
        );
        assert!(!slots.counts.lock().unwrap().contains_key(&ip("10.0.0.2")));
    }

    #[test]
    fn an_ipv6_source_is_its_64_and_a_mapped_ipv4_is_the_ipv4() {
        assert_eq!(ip("2001:db8:1:2:aaaa::1"), ip("2001:db8:1:2:ffff::9"));
        assert_ne!(ip("2001:db8:1:2::1"), ip("2001:db8:1:3::1"));
        assert_eq!(ip("::ffff:192.0.2.7"), ip("192.0.2.7"));
    }
}
