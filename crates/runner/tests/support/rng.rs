//! xorshift64*: small, deterministic, good enough to spread inputs. Shared
//! by the seeded property tests: `tests/fuzz.rs` (through `support`) and
//! `src/fuzz_tests.rs` (through `#[path]`), so a failure reproduces from
//! its seed in both.

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}
