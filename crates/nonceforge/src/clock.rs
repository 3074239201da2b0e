//! Time sources: the [`Clock`] trait, the [`SystemClock`] and a [`ManualClock`] for tests.
//!
//! A generator reads the wall clock **once**, when it is built, and from then on
//! measures time on the clock's monotonic source. A wall clock that is stepped
//! backwards (by NTP, by an operator) after that point cannot make a generator
//! issue a timestamp twice.
//!
//! Reading the OS monotonic clock costs more than a whole sortable nonce should
//! (bench/RESULTS.md, "The measurements behind the code"). [`SystemClock`]
//! therefore offers a cheap tick
//! counter (the invariant TSC on x86-64) that generators use to tell whether the
//! current millisecond can have ended; the OS clock is read about once a millisecond.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time for generators.
///
/// Implementations must be cheap to call from many threads at once.
pub trait Clock: Send + Sync + 'static {
    /// Nanoseconds since the Unix epoch by the wall clock. Read once per generator.
    fn wall_ns(&self) -> u64;
    /// Nanoseconds from an arbitrary origin; never goes backwards.
    fn monotonic_ns(&self) -> u64;
    /// A cheap, monotonic tick counter, if the clock has one. Generators use it
    /// only to decide that the current millisecond cannot have ended yet.
    #[inline]
    fn fast_ticks(&self) -> Option<u64> {
        None
    }
    /// A lower bound on the number of [`fast_ticks`](Clock::fast_ticks) that pass in
    /// `ns` nanoseconds (0 when unknown: the generator then reads the clock each time).
    fn ticks_within(&self, ns: u64) -> u64 {
        let _ = ns;
        0
    }
    /// Blocks the calling thread for about `duration` (throttling waits here).
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// The operating system's clocks: `SystemTime` for the wall clock once, `Instant`
/// (CLOCK_MONOTONIC) after that, gated by the invariant TSC where there is one.
#[derive(Debug, Clone)]
pub struct SystemClock {
    origin: Instant,
    tsc: Option<Arc<TscCalibration>>,
}

#[derive(Debug)]
struct TscCalibration {
    tsc0: u64,
    ns0: u64,
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl SystemClock {
    /// A system clock; uses the TSC fast path when the CPU has an invariant TSC.
    pub fn new() -> Self {
        let origin = Instant::now();
        let tsc = tsc::read_invariant().map(|tsc0| Arc::new(TscCalibration { tsc0, ns0: 0 }));
        SystemClock { origin, tsc }
    }

    /// A system clock that never uses the TSC (every reading goes to the OS).
    pub fn without_tsc() -> Self {
        SystemClock {
            origin: Instant::now(),
            tsc: None,
        }
    }
}

impl Clock for SystemClock {
    fn wall_ns(&self) -> u64 {
        // A wall clock before 1970 is a broken machine; treat it as 0 and let the
        // epoch check report it.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    }

    #[inline]
    fn monotonic_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    #[inline]
    fn fast_ticks(&self) -> Option<u64> {
        self.tsc.as_ref().map(|_| tsc::read())
    }

    fn ticks_within(&self, ns: u64) -> u64 {
        let Some(cal) = &self.tsc else { return 0 };
        let (t, n) = (tsc::read(), self.monotonic_ns());
        let (dt, dn) = (t.saturating_sub(cal.tsc0), n.saturating_sub(cal.ns0));
        // Until 20 ms have passed the rate estimate is too rough to trust.
        if dn < 20_000_000 {
            return 0;
        }
        // 97% of the measured rate: an early look at the OS clock costs one
        // clock read, a late one would let a millisecond boundary pass unseen.
        let ticks = (dt as u128 * ns as u128 * 97) / (dn as u128 * 100);
        ticks.min(u64::MAX as u128) as u64
    }
}

mod tsc {
    /// The TSC, if the CPU says it is invariant (constant rate, runs in all
    /// power states); otherwise `None` and the OS clock is used throughout.
    pub(super) fn read_invariant() -> Option<u64> {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::__cpuid;
            // CPUID leaf 0x8000_0007, EDX bit 8: invariant TSC.
            let max_ext = __cpuid(0x8000_0000).eax;
            if max_ext >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0 {
                return Some(read());
            }
        }
        None
    }

    #[inline]
    pub(super) fn read() -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: RDTSC exists on every x86-64 CPU and has no preconditions;
            // it only reads the time-stamp counter.
            unsafe { core::arch::x86_64::_rdtsc() }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            0
        }
    }
}

/// A clock that moves only when told to, for tests of every time-dependent rule.
///
/// Cloning gives another handle on the same time. The wall clock and the
/// monotonic clock can be moved separately, so a test can step the wall clock
/// backwards while monotonic time goes on. [`Clock::sleep`] advances both
/// clocks by the requested duration instead of blocking, and counts it.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    inner: Arc<ManualInner>,
}

#[derive(Debug, Default)]
struct ManualInner {
    wall_ns: AtomicU64,
    mono_ns: AtomicU64,
    slept_ns: AtomicU64,
    sleeps: AtomicU64,
}

impl ManualClock {
    /// A manual clock whose wall clock reads `unix_ms` milliseconds since 1970.
    pub fn at_unix_ms(unix_ms: u64) -> Self {
        let c = ManualClock::default();
        c.inner.wall_ns.store(unix_ms * 1_000_000, Ordering::SeqCst);
        c.inner.mono_ns.store(1_000_000_000, Ordering::SeqCst);
        c
    }

    /// Moves both clocks forward.
    pub fn advance(&self, by: Duration) {
        let ns = by.as_nanos() as u64;
        self.inner.wall_ns.fetch_add(ns, Ordering::SeqCst);
        self.inner.mono_ns.fetch_add(ns, Ordering::SeqCst);
    }

    /// Sets the wall clock alone (forwards or backwards); monotonic time stays.
    pub fn set_wall_unix_ms(&self, unix_ms: u64) {
        self.inner
            .wall_ns
            .store(unix_ms * 1_000_000, Ordering::SeqCst);
    }

    /// The wall clock in milliseconds since 1970.
    pub fn wall_unix_ms(&self) -> u64 {
        self.inner.wall_ns.load(Ordering::SeqCst) / 1_000_000
    }

    /// Total time passed to [`Clock::sleep`] so far.
    pub fn slept(&self) -> Duration {
        Duration::from_nanos(self.inner.slept_ns.load(Ordering::SeqCst))
    }

    /// How many times [`Clock::sleep`] was called.
    pub fn sleeps(&self) -> u64 {
        self.inner.sleeps.load(Ordering::SeqCst)
    }
}

impl Clock for ManualClock {
    fn wall_ns(&self) -> u64 {
        self.inner.wall_ns.load(Ordering::SeqCst)
    }
    #[inline]
    fn monotonic_ns(&self) -> u64 {
        self.inner.mono_ns.load(Ordering::Acquire)
    }
    fn sleep(&self, duration: Duration) {
        let ns = duration.as_nanos() as u64;
        self.inner.slept_ns.fetch_add(ns, Ordering::SeqCst);
        self.inner.sleeps.fetch_add(1, Ordering::SeqCst);
        self.advance(duration);
    }
}

/// Milliseconds on the wall-clock scale, measured on the monotonic clock from one
/// wall-clock reading, with the TSC gate: the OS clock is read only when the tick
/// counter says the current millisecond may be over.
#[derive(Debug)]
pub(crate) struct Ticker {
    /// Wall nanoseconds minus monotonic nanoseconds, both read at build time.
    offset_ns: u64,
    /// The latest millisecond seen (on the wall scale).
    ms: AtomicU64,
    /// Below this tick count, `ms` is still the current millisecond.
    deadline: AtomicU64,
}

impl Ticker {
    pub(crate) fn new<C: Clock>(clock: &C) -> Self {
        let wall = clock.wall_ns();
        let mono = clock.monotonic_ns();
        Ticker {
            offset_ns: wall.wrapping_sub(mono),
            ms: AtomicU64::new(wall / 1_000_000),
            deadline: AtomicU64::new(0),
        }
    }

    /// The current time in milliseconds since 1970 (monotonic, never backwards).
    #[inline]
    pub(crate) fn now_ms<C: Clock>(&self, clock: &C) -> u64 {
        if let Some(t) = clock.fast_ticks()
            && t < self.deadline.load(Ordering::Acquire)
        {
            return self.ms.load(Ordering::Relaxed);
        }
        self.read(clock)
    }

    #[cold]
    fn read<C: Clock>(&self, clock: &C) -> u64 {
        let ticks = clock.fast_ticks();
        let wall_ns = clock.monotonic_ns().wrapping_add(self.offset_ns);
        let ms = wall_ns / 1_000_000;
        let prev = self.ms.fetch_max(ms, Ordering::Relaxed);
        if let Some(t) = ticks
            && prev <= ms
        {
            let left = self.deadline_left(clock, wall_ns);
            if left > 0 {
                self.deadline
                    .fetch_max(t.saturating_add(left), Ordering::Release);
            }
        }
        ms.max(prev)
    }

    fn deadline_left<C: Clock>(&self, clock: &C, wall_ns: u64) -> u64 {
        let to_boundary = 1_000_000 - wall_ns % 1_000_000;
        clock.ticks_within(to_boundary)
    }

    /// Nanoseconds until the wall-scale millisecond `target_ms` begins (0 if it has).
    pub(crate) fn ns_until<C: Clock>(&self, clock: &C, target_ms: u64) -> u64 {
        let wall_ns = clock.monotonic_ns().wrapping_add(self.offset_ns);
        (target_ms.saturating_mul(1_000_000)).saturating_sub(wall_ns)
    }

    /// Blocks (sleeping, not spinning) until millisecond `target_ms` has begun.
    pub(crate) fn wait_for<C: Clock>(&self, clock: &C, target_ms: u64) {
        loop {
            let ns = self.ns_until(clock, target_ms);
            if ns == 0 {
                return;
            }
            clock.sleep(Duration::from_nanos(ns));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::at_unix_ms(1_000);
        assert_eq!(c.wall_unix_ms(), 1_000);
        let m = c.monotonic_ns();
        c.advance(Duration::from_millis(5));
        assert_eq!(c.wall_unix_ms(), 1_005);
        assert_eq!(c.monotonic_ns() - m, 5_000_000);
        c.set_wall_unix_ms(10);
        assert_eq!(
            c.monotonic_ns() - m,
            5_000_000,
            "a wall step leaves monotonic time"
        );
        c.sleep(Duration::from_micros(1500));
        assert_eq!(c.slept(), Duration::from_micros(1500));
        assert_eq!(c.sleeps(), 1);
    }

    #[test]
    fn ticker_ignores_wall_steps_after_build() {
        let c = ManualClock::at_unix_ms(5_000);
        let t = Ticker::new(&c);
        c.set_wall_unix_ms(1_000);
        assert_eq!(t.now_ms(&c), 5_000);
        c.advance(Duration::from_millis(3));
        assert_eq!(t.now_ms(&c), 5_003);
    }

    #[test]
    fn system_ticker_agrees_with_the_os_clock() {
        let c = SystemClock::new();
        let t = Ticker::new(&c);
        // Past the calibration window the TSC gate is in use; every reading must
        // still lie within the OS clock's readings around it.
        std::thread::sleep(Duration::from_millis(25));
        for _ in 0..200_000 {
            let before = (c.monotonic_ns().wrapping_add(t.offset_ns)) / 1_000_000;
            let ms = t.now_ms(&c);
            let after = (c.monotonic_ns().wrapping_add(t.offset_ns)) / 1_000_000;
            assert!(before <= ms && ms <= after, "{before} <= {ms} <= {after}");
        }
    }

    #[test]
    fn wait_for_sleeps_until_the_millisecond() {
        let c = ManualClock::at_unix_ms(100);
        let t = Ticker::new(&c);
        t.wait_for(&c, 103);
        assert_eq!(t.now_ms(&c), 103);
        assert_eq!(c.slept(), Duration::from_millis(3));
    }
}
