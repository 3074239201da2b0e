//! stuid (pg_tuid's format): 32 bytes — 8 bytes of big-endian Unix
//! microseconds, then 24 random bytes (192 bits).
//!
//! ```text
//! | unix µs (64 bits, big-endian) | random (192 bits)                                        |
//! ```

use super::rng;
use crate::clock::{Clock, SystemClock};

/// A new stuid on the system clock.
///
/// ```
/// let s = nonceforge::uuid::stuid();
/// assert!(nonceforge::uuid::stuid_unix_us(&s) > 1_600_000_000_000_000);
/// ```
pub fn stuid() -> [u8; 32] {
    stuid_with_clock(&SystemClock::without_tsc())
}

/// A new stuid on a given clock.
pub fn stuid_with_clock<C: Clock>(clock: &C) -> [u8; 32] {
    let mut out = [0u8; 32];
    out[..8].copy_from_slice(&(clock.wall_ns() / 1_000).to_be_bytes());
    rng::fill(&mut out[8..]);
    out
}

/// The Unix microseconds of a stuid.
pub fn stuid_unix_us(id: &[u8; 32]) -> u64 {
    u64::from_be_bytes(id[..8].try_into().expect("8 bytes"))
}

/// The smallest and largest stuid of a microsecond, for range queries.
pub fn stuid_bounds(unix_us: u64) -> ([u8; 32], [u8; 32]) {
    let (mut lo, mut hi) = ([0u8; 32], [0xffu8; 32]);
    lo[..8].copy_from_slice(&unix_us.to_be_bytes());
    hi[..8].copy_from_slice(&unix_us.to_be_bytes());
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    #[test]
    fn microseconds_then_random() {
        let c = ManualClock::at_unix_ms(1_664_391_451_515);
        let (a, b) = (stuid_with_clock(&c), stuid_with_clock(&c));
        assert_eq!(stuid_unix_us(&a), 1_664_391_451_515_000);
        assert_ne!(a[8..], b[8..]);
        let (lo, hi) = stuid_bounds(1_664_391_451_515_000);
        assert!(lo <= a && a <= hi);
    }
}
