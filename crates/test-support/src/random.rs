//! A small deterministic generator, seeded per run so that a failing run can be replayed.

use std::time::{SystemTime, UNIX_EPOCH};

/// xorshift64*: fast, tiny, and the same sequence for the same seed on every machine.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator starting from `seed` (any value; the state is never zero).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed | 1)
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..bound` (`0` when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }
}

/// The seed of this run: `CRASH_RESUME_TEST_SEED` to replay one, else the clock.
pub fn seed() -> u64 {
    std::env::var("CRASH_RESUME_TEST_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or_else(clock_seed)
}

/// A seed from the clock (nanoseconds since the epoch).
pub fn clock_seed() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|now| now.as_nanos() as u64)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::XorShift;

    #[test]
    fn the_same_seed_gives_the_same_sequence_and_below_stays_below() {
        let mut a = XorShift::new(42);
        let mut b = XorShift::new(42);
        for _ in 0..100 {
            let (x, y) = (a.below(7), b.below(7));
            assert_eq!(x, y);
            assert!(x < 7);
        }
        assert_eq!(XorShift::new(0).below(0), 0);
        assert_ne!(XorShift::new(1).next_u64(), XorShift::new(2).next_u64());
    }
}
