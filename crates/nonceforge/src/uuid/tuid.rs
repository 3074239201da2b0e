//! tuid6 (pg_tuid's format): 48 bits of big-endian Unix milliseconds, then 80
//! random bits. No version bits, as in pg_tuid: every one of the 80 bits is
//! random, so a tuid6 is not an RFC 9562 UUID even though it fits the `uuid` type.
//!
//! ```text
//! | unix ms (48 bits, big-endian)                | random (80 bits)                          |
//! ```
//!
//! Optionally strictly increasing per generator: an id that would not sort after
//! the last one is the last one plus 1 (in the 80-bit random part).

use super::rng;
use crate::clock::{Clock, SystemClock};

/// Makes tuid6s. One per thread (or per PostgreSQL backend).
#[derive(Debug)]
pub struct Tuid6Generator<C: Clock = SystemClock> {
    clock: C,
    increasing: bool,
    last: u128,
}

impl Tuid6Generator<SystemClock> {
    /// A generator on the system clock; `increasing` makes every id sort after
    /// the last one from this generator.
    pub fn new(increasing: bool) -> Self {
        Self::with_clock(SystemClock::without_tsc(), increasing)
    }
}

impl<C: Clock> Tuid6Generator<C> {
    /// A generator on another clock (a manual one in tests).
    pub fn with_clock(clock: C, increasing: bool) -> Self {
        Tuid6Generator {
            clock,
            increasing,
            last: 0,
        }
    }

    /// The next tuid6.
    ///
    /// ```
    /// let mut g = nonceforge::uuid::Tuid6Generator::new(true);
    /// let (a, b) = (g.generate(), g.generate());
    /// assert!(a < b);
    /// ```
    pub fn generate(&mut self) -> [u8; 16] {
        let ms = (self.clock.wall_ns() / 1_000_000).min((1 << 48) - 1);
        let mut r = [0u8; 16];
        rng::fill(&mut r[6..]);
        let mut v = ((ms as u128) << 80) | u128::from_be_bytes(r);
        if self.increasing {
            if v <= self.last {
                v = self.last.saturating_add(1);
            }
            self.last = v;
        }
        v.to_be_bytes()
    }
}

/// A tuid6 from a timestamp and random bits (their top 48 are dropped).
pub const fn compose(unix_ms: u64, random: u128) -> [u8; 16] {
    ((((unix_ms & ((1 << 48) - 1)) as u128) << 80) | (random & ((1 << 80) - 1))).to_be_bytes()
}

/// The smallest and largest tuid6 of a millisecond, for range queries.
pub const fn bounds(unix_ms: u64) -> ([u8; 16], [u8; 16]) {
    (compose(unix_ms, 0), compose(unix_ms, u128::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn timestamp_first_then_random() {
        let mut g = Tuid6Generator::with_clock(ManualClock::at_unix_ms(1_664_391_451_515), false);
        let a = g.generate();
        let b = g.generate();
        assert_eq!(&a[..6], &[0x01, 0x83, 0x85, 0x76, 0x13, 0x7b]);
        assert_eq!(super::super::unix_ms(&a), 1_664_391_451_515);
        assert_ne!(a[6..], b[6..]);
    }

    #[test]
    fn increasing_mode_sorts_within_a_millisecond() {
        let clock = ManualClock::at_unix_ms(1_664_391_451_515);
        let mut g = Tuid6Generator::with_clock(clock.clone(), true);
        let mut last = g.generate();
        for _ in 0..10_000 {
            let id = g.generate();
            assert!(id > last);
            last = id;
        }
        clock.set_wall_unix_ms(1_000); // the wall clock steps back
        assert!(g.generate() > last);
        let (lo, hi) = bounds(1_664_391_451_515);
        assert!(lo <= last && last <= hi);
    }
}
