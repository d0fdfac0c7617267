//! Per-run quotas: streams opened, streams open at once, and bytes each way
//! (summed over the run's streams). Counters are atomics shared by the run's
//! stream threads; a stream that crosses a byte quota is closed and its
//! receipt says which quota ended it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::refusal::Refusal;

/// Streams a run may open in total unless its policy says otherwise.
pub const DEFAULT_MAX_STREAMS: u64 = 256;
/// Streams open at once (each costs the engine one thread and two sockets).
pub const DEFAULT_MAX_CONCURRENT_STREAMS: u64 = 32;
/// Bytes from the sandbox to upstreams, summed over the run (64 MiB).
pub const DEFAULT_MAX_BYTES_OUT: u64 = 64 * 1024 * 1024;
/// Bytes from upstreams to the sandbox, summed over the run (1 GiB: installs download).
pub const DEFAULT_MAX_BYTES_IN: u64 = 1024 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub max_streams: u64,
    pub max_concurrent_streams: u64,
    pub max_bytes_out: u64,
    pub max_bytes_in: u64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            max_streams: DEFAULT_MAX_STREAMS,
            max_concurrent_streams: DEFAULT_MAX_CONCURRENT_STREAMS,
            max_bytes_out: DEFAULT_MAX_BYTES_OUT,
            max_bytes_in: DEFAULT_MAX_BYTES_IN,
        }
    }
}

/// Which way bytes flow, named from the sandbox's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Sandbox → upstream.
    Out,
    /// Upstream → sandbox.
    In,
}

#[derive(Debug, Default)]
pub struct QuotaState {
    limits: Quotas,
    opened: AtomicU64,
    open: AtomicU64,
    bytes_out: AtomicU64,
    bytes_in: AtomicU64,
}

/// Holds one concurrent-stream slot; dropping it frees the slot.
#[derive(Debug)]
pub struct StreamSlot {
    state: Arc<QuotaState>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.state.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl QuotaState {
    pub fn new(limits: Quotas) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Counts a stream attempt against both stream quotas.
    pub fn open_stream(self: &Arc<Self>) -> Result<StreamSlot, Refusal> {
        let opened = self.opened.fetch_add(1, Ordering::AcqRel);
        if opened >= self.limits.max_streams {
            return Err(Refusal::QuotaStreams);
        }
        let open = self.open.fetch_add(1, Ordering::AcqRel);
        let slot = StreamSlot {
            state: Arc::clone(self),
        };
        if open >= self.limits.max_concurrent_streams {
            return Err(Refusal::QuotaConcurrentStreams); // slot drops: count undone
        }
        Ok(slot)
    }

    /// How many of `wanted` bytes may still flow this way (0 = quota spent).
    /// The grant is taken from the run's budget at once, so concurrent
    /// streams never overshoot it together.
    pub fn grant_bytes(&self, direction: Direction, wanted: u64) -> u64 {
        let (counter, limit) = match direction {
            Direction::Out => (&self.bytes_out, self.limits.max_bytes_out),
            Direction::In => (&self.bytes_in, self.limits.max_bytes_in),
        };
        let mut used = counter.load(Ordering::Acquire);
        loop {
            let grant = wanted.min(limit.saturating_sub(used));
            if grant == 0 {
                return 0;
            }
            match counter.compare_exchange_weak(
                used,
                used + grant,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return grant,
                Err(now) => used = now,
            }
        }
    }

    pub fn open_streams(&self) -> u64 {
        self.open.load(Ordering::Acquire)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stream_and_concurrency_quotas_refuse_past_their_limit_and_slots_free_on_drop() {
        let q = Arc::new(QuotaState::new(Quotas {
            max_streams: 3,
            max_concurrent_streams: 1,
            ..Quotas::default()
        }));
        let first = q.open_stream().unwrap();
        assert_eq!(
            q.open_stream().unwrap_err(),
            Refusal::QuotaConcurrentStreams
        );
        assert_eq!(q.open_streams(), 1);
        drop(first);
        assert_eq!(q.open_streams(), 0);
        let _third = q.open_stream().unwrap();
        assert_eq!(q.open_stream().unwrap_err(), Refusal::QuotaStreams);
    }

    #[test]
    fn byte_grants_stop_exactly_at_the_run_budget() {
        let q = QuotaState::new(Quotas {
            max_bytes_out: 100,
            max_bytes_in: 10,
            ..Quotas::default()
        });
        assert_eq!(q.grant_bytes(Direction::Out, 60), 60);
        assert_eq!(q.grant_bytes(Direction::Out, 60), 40);
        assert_eq!(q.grant_bytes(Direction::Out, 1), 0);
        assert_eq!(q.grant_bytes(Direction::In, 10), 10);
        assert_eq!(q.grant_bytes(Direction::In, 10), 0);
    }
}
