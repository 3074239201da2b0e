//! UUID version 7 (RFC 9562 §5.7): Unix milliseconds, then a 12-bit fraction of
//! the millisecond (§6.2 method 3, "replace leftmost random bits with increased
//! clock precision"), then 62 random bits.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                     unix_ts_ms (48 bits)                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          unix_ts_ms           |  ver  | ms fraction (12 bits) |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|                       rand (62 bits)                      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            rand                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Monotonic per generator, as PostgreSQL 18's `uuidv7()` is within a backend:
//! when the clock has not moved past the last id's (millisecond, fraction), the
//! new id takes the last one's plus 1/4096 ms, so ids never go backwards even if
//! the wall clock does.
//!
//! References: RFC 9562 §5.7 and §6.2.

use super::rng;
use crate::clock::{Clock, SystemClock, WallExtrapolator};

/// Makes monotonic UUIDv7s. One per thread (or per PostgreSQL backend).
///
/// The wall clock is read from the OS about once a millisecond and extrapolated
/// on the TSC in between ([`WallExtrapolator`]): an OS read costs more than the
/// rest of an id.
#[derive(Debug)]
pub struct UuidV7Generator<C: Clock = SystemClock> {
    clock: C,
    wall: WallExtrapolator,
    /// The last (unix ms << 12 | fraction) issued.
    last: u64,
}

impl Default for UuidV7Generator<SystemClock> {
    fn default() -> Self {
        Self::new()
    }
}

impl UuidV7Generator<SystemClock> {
    /// A generator on the system clock.
    pub fn new() -> Self {
        Self::with_clock(SystemClock::new())
    }
}

impl<C: Clock> UuidV7Generator<C> {
    /// A generator on another clock (a manual one in tests).
    pub fn with_clock(clock: C) -> Self {
        UuidV7Generator {
            clock,
            wall: WallExtrapolator::new(),
            last: 0,
        }
    }

    /// The next UUIDv7.
    ///
    /// ```
    /// let mut g = nonceforge::uuid::UuidV7Generator::new();
    /// let (a, b) = (g.generate(), g.generate());
    /// assert!(a < b);
    /// assert_eq!(a[6] >> 4, 7);
    /// ```
    pub fn generate(&mut self) -> [u8; 16] {
        self.generate_shifted(0)
    }

    /// The next UUIDv7 with its timestamp moved by `shift_ns` nanoseconds (as
    /// `uuidv7(shift interval)` in PostgreSQL 18): the generator's clock stays
    /// monotonic, and the shift is added after, so a shifted id is where it was
    /// asked to be even right after unshifted ones. The result is clamped to the
    /// 48-bit millisecond range.
    pub fn generate_shifted(&mut self, shift_ns: i64) -> [u8; 16] {
        let t = self.next_tick();
        from_tick(shift_tick(t, shift_ns), rng::u64())
    }

    /// As [`generate_shifted`](Self::generate_shifted), the shift in
    /// microseconds: ±2^63 µs covers the whole UUIDv7 range (an `i64` of
    /// nanoseconds ends at about ±292 years).
    ///
    /// ```
    /// use nonceforge::uuid::{extract_unix_ms, UuidV7Generator};
    /// let mut g = UuidV7Generator::new();
    /// let now = extract_unix_ms(&g.generate()).unwrap();
    /// let year_ms = 365_250 * 86_400; // a Julian year in milliseconds
    /// let later = extract_unix_ms(&g.generate_shifted_us(1000 * year_ms * 1000)).unwrap();
    /// assert!(later - now >= 1000 * year_ms && later - now < 1000 * year_ms + 1000);
    /// ```
    pub fn generate_shifted_us(&mut self, shift_us: i64) -> [u8; 16] {
        let t = self.next_tick();
        from_tick(shift_tick_us(t, shift_us), rng::u64())
    }

    /// Fills `out` with the next UUIDv7s, shifted by `shift_us` microseconds:
    /// the same ids as that many [`generate_shifted_us`](Self::generate_shifted_us)
    /// calls, for a fraction of the cost (one clock read and one random fill
    /// for the lot; the ticks that follow the first are its successors, the
    /// next call reads the clock again).
    ///
    /// ```
    /// let mut g = nonceforge::uuid::UuidV7Generator::new();
    /// let mut ids = [[0u8; 16]; 100];
    /// g.generate_many(&mut ids, 0);
    /// assert!(ids.windows(2).all(|w| w[0] < w[1]));
    /// assert!(g.generate() > ids[99]);
    /// ```
    pub fn generate_many(&mut self, out: &mut [[u8; 16]], shift_us: i64) {
        if out.is_empty() {
            return;
        }
        let first = self.next_tick();
        // Past the last tick the ids stay at it, as one by one.
        self.last = first.saturating_add(out.len() as u64 - 1).min(LAST_TICK);
        let mut rand = vec![0u8; out.len() * 8];
        rng::fill(&mut rand);
        for (i, (id, r)) in out.iter_mut().zip(rand.chunks_exact(8)).enumerate() {
            let t = first.saturating_add(i as u64).min(LAST_TICK);
            let r = u64::from_be_bytes(r.try_into().expect("8 bytes"));
            *id = from_tick(shift_tick_us(t, shift_us), r);
        }
    }

    /// The next tick of this generator's monotonic sequence.
    fn next_tick(&mut self) -> u64 {
        let mut t = tick_of_ns(self.wall.wall_ns(&self.clock));
        if t <= self.last {
            t = self.last + 1;
        }
        // Past the last millisecond of 2^48 the counter would wrap: stay there.
        t = t.min(LAST_TICK);
        self.last = t;
        t
    }
}

/// The last (millisecond << 12 | fraction) a UUIDv7 can carry.
pub const LAST_TICK: u64 = (1 << 60) - 1;

/// The tick — Unix milliseconds << 12 | the 12-bit fraction of the millisecond
/// — of `ns` nanoseconds since 1970, clamped to what a UUIDv7 can carry. Ticks
/// order UUIDv7s: a generator that hands out strictly increasing ticks (one per
/// thread here; one per server in the PostgreSQL extension) makes strictly
/// increasing ids.
pub const fn tick_of_ns(ns: u64) -> u64 {
    let ns = if ns > MAX_NS as u64 {
        MAX_NS as u64
    } else {
        ns
    };
    let tick = ((ns / 1_000_000) << 12) | (((ns % 1_000_000) * 4096) / 1_000_000);
    if tick > LAST_TICK { LAST_TICK } else { tick }
}

/// `tick` moved by `shift_ns` nanoseconds (in whole 1/4096 ms, rounded down),
/// clamped to the UUIDv7 range — `uuidv7(shift interval)` of PostgreSQL 18.
/// (128-bit division costs tens of ns: only when there is a shift.)
pub fn shift_tick(tick: u64, shift_ns: i64) -> u64 {
    add_ticks(tick, shift_ns, 1_000_000)
}

/// `tick` moved by `shift_us` microseconds (in whole 1/4096 ms, rounded down),
/// clamped to the UUIDv7 range: [`shift_tick`] for shifts past ±292 years.
pub fn shift_tick_us(tick: u64, shift_us: i64) -> u64 {
    add_ticks(tick, shift_us, 1_000)
}

/// `tick` moved by `shift` units of which `per_ms` make a millisecond (in
/// whole ticks, rounded down), clamped to the UUIDv7 range.
fn add_ticks(tick: u64, shift: i64, per_ms: i128) -> u64 {
    if shift == 0 {
        return tick;
    }
    let ticks = (shift as i128 * 4096).div_euclid(per_ms);
    (tick as i128 + ticks).clamp(0, LAST_TICK as i128) as u64
}

/// The UUIDv7 of a tick (see [`tick_of_ns`]) and 62 random bits.
pub const fn from_tick(tick: u64, rand: u64) -> [u8; 16] {
    compose(tick >> 12, (tick & 0xfff) as u16, rand)
}

/// The largest time in nanoseconds a UUIDv7 can carry.
const MAX_NS: i128 = ((1i128 << 48) - 1) * 1_000_000 + 999_999;

/// A UUIDv7 from its fields (`rand`'s top 2 bits are dropped).
pub const fn compose(unix_ms: u64, fraction: u16, rand: u64) -> [u8; 16] {
    let hi = ((unix_ms & ((1 << 48) - 1)) << 16) | 0x7000 | (fraction as u64 & 0xfff);
    let lo = (0b10 << 62) | (rand & ((1 << 62) - 1));
    (((hi as u128) << 64) | lo as u128).to_be_bytes()
}

/// The smallest and largest UUIDv7 of a millisecond, for range queries
/// (`id >= min AND id <= max`).
pub const fn bounds(unix_ms: u64) -> ([u8; 16], [u8; 16]) {
    (compose(unix_ms, 0, 0), compose(unix_ms, 0xfff, u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use std::time::Duration;

    #[test]
    fn layout_is_rfc_9562() {
        let mut g = UuidV7Generator::with_clock(ManualClock::at_unix_ms(1_700_000_000_123));
        let id = g.generate();
        let u = ::uuid::Uuid::from_bytes(id);
        assert_eq!(u.get_version_num(), 7);
        assert_eq!(u.get_variant(), ::uuid::Variant::RFC4122);
        let (secs, nanos) = u.get_timestamp().unwrap().to_unix();
        assert_eq!(secs * 1000 + nanos as u64 / 1_000_000, 1_700_000_000_123);
        assert_eq!(super::super::unix_ms(&id), 1_700_000_000_123);
    }

    #[test]
    fn monotonic_when_the_clock_stalls_or_steps_back() {
        let clock = ManualClock::at_unix_ms(1_700_000_000_000);
        let mut g = UuidV7Generator::with_clock(clock.clone());
        let mut last = g.generate();
        for i in 0..10_000 {
            if i == 5000 {
                clock.set_wall_unix_ms(1_600_000_000_000); // NTP steps back 3 years
            }
            let id = g.generate();
            assert!(id > last, "#{i}");
            last = id;
        }
        // 10,000 ids in a stalled millisecond spill into the next ones (1/4096 ms each).
        assert_eq!(super::super::unix_ms(&last), 1_700_000_000_002);
        clock.set_wall_unix_ms(1_700_000_000_000);
        clock.advance(Duration::from_millis(10));
        assert_eq!(super::super::unix_ms(&g.generate()), 1_700_000_000_010);
    }

    #[test]
    fn on_the_system_clock_ids_follow_the_wall_clock() {
        // Past the 20 ms the TSC's rate is measured over, ids are stamped with
        // extrapolated time: still between the wall clock read before and after.
        let wall_ms = || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis() as u64
        };
        let mut g = UuidV7Generator::new();
        let mut last = g.generate();
        let start = std::time::Instant::now();
        let mut n = 0u64;
        while start.elapsed() < Duration::from_millis(80) {
            // About one id a microsecond: slower than the 4,096 a millisecond
            // that would push the sequence ahead of the clock.
            let spin = std::time::Instant::now();
            while spin.elapsed() < Duration::from_micros(1) {}
            let before = wall_ms();
            let id = g.generate();
            let after = wall_ms();
            assert!(id > last);
            last = id;
            let ms = super::super::unix_ms(&id);
            assert!(
                ms + 1 >= before && ms <= after + 1,
                "{before} <= {ms} <= {after}"
            );
            n += 1;
        }
        assert!(n > 100);
    }

    #[test]
    fn the_fraction_follows_the_clock() {
        let clock = ManualClock::at_unix_ms(1_700_000_000_000);
        let mut g = UuidV7Generator::with_clock(clock.clone());
        clock.advance(Duration::from_micros(500));
        let id = g.generate();
        assert_eq!(((id[6] & 0xf) as u16) << 8 | id[7] as u16, 2048);
    }

    #[test]
    fn shift_and_bounds() {
        let clock = ManualClock::at_unix_ms(1_700_000_000_000);
        let mut g = UuidV7Generator::with_clock(clock);
        let id = g.generate_shifted(-86_400_000_000_000);
        assert_eq!(super::super::unix_ms(&id), 1_700_000_000_000 - 86_400_000);
        let (lo, hi) = bounds(1_700_000_000_000);
        let now = g.generate();
        assert!(lo <= now && now <= hi);
        assert!(id < lo);
        // Shifted right after unshifted ids, still where it was asked to be.
        let back = g.generate_shifted(-1_000_000_000);
        assert_eq!(super::super::unix_ms(&back), 1_700_000_000_000 - 1000);
        // Clamped at both ends of the 48-bit range.
        assert_eq!(super::super::unix_ms(&g.generate_shifted(i64::MIN)), 0);
        let far = g.generate_shifted(i64::MAX);
        assert!(super::super::unix_ms(&far) > 1_700_000_000_000);
    }
}
