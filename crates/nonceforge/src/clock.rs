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

/// The wall clock, read from the OS about once a millisecond and, between two
/// readings, extrapolated on the clock's tick counter (the invariant TSC):
/// for generators that follow the wall clock on every call (UUIDv7s), where a
/// read of the OS clock costs more than the rest of an id (bench/RESULTS.md,
/// issue 50).
///
/// The tick rate is timed against the monotonic clock, from the first reading
/// on (so a step of the wall clock never skews it), and used after 20 ms of it;
/// until then, and on a clock without a tick counter (the manual clock of
/// tests), every call reads the wall clock. A reading is extrapolated for at
/// most one millisecond of ticks, so a step of the wall clock shows within one;
/// each reading checks the estimate it replaces, and one more than 50 µs off (a
/// stepped clock, a tick counter that jumped, a rate gone wrong) has the rate
/// timed again. An estimate lags the clock by the time a reading takes and
/// leads it by at most the rate's error over a millisecond. Callers that must
/// not go back keep their own floor (as [`crate::uuid::UuidV7Generator`] does).
#[derive(Debug, Default, Clone)]
pub struct WallExtrapolator {
    /// Tick count and wall nanoseconds of the last OS reading.
    anchor_ticks: u64,
    anchor_ns: u64,
    /// Ticks a reading is extrapolated for (one millisecond's; 0 until calibrated).
    span: u64,
    /// Nanoseconds per tick, ×2^32.
    ns_per_tick_q32: u64,
    /// Tick count and monotonic nanoseconds of the first reading (the rate's base).
    base_ticks: u64,
    base_mono_ns: u64,
}

/// How long the tick rate is measured before it is used.
const CALIBRATE_NS: u64 = 20_000_000;
/// How far an estimate may be from the reading that replaces it before the
/// rate is measured again (a reading every millisecond at most is 5 % of one).
const DRIFT_NS: u64 = 50_000;
/// The most two monotonic readings around a tick count may differ for the
/// pair to time the rate: 20 µs in 20 ms and more is an error of 0.1 % at most.
const PAIR_NS: u64 = 20_000;

impl WallExtrapolator {
    /// A new one: its first calls read the OS clock.
    pub const fn new() -> Self {
        WallExtrapolator {
            anchor_ticks: 0,
            anchor_ns: 0,
            span: 0,
            ns_per_tick_q32: 0,
            base_ticks: 0,
            base_mono_ns: 0,
        }
    }

    /// Nanoseconds since the Unix epoch on `clock`'s wall clock (see the type).
    #[inline]
    pub fn wall_ns<C: Clock>(&mut self, clock: &C) -> u64 {
        if let Some(t) = clock.fast_ticks() {
            // Ticks below the anchor (a counter that went back) wrap to a large
            // difference and take the OS reading below.
            let dt = t.wrapping_sub(self.anchor_ticks);
            if dt < self.span {
                // dt < span = 1 ms of ticks: the product stays below 2^32 × 10^6.
                return self.anchor_ns + ((dt * self.ns_per_tick_q32) >> 32);
            }
        }
        self.read(clock)
    }

    #[cold]
    fn read<C: Clock>(&mut self, clock: &C) -> u64 {
        // The wall reading first: any delay before the tick count only makes
        // the estimates that follow lag.
        let ns = clock.wall_ns();
        let m1 = clock.monotonic_ns();
        let Some(t) = clock.fast_ticks() else {
            return ns;
        };
        let m2 = clock.monotonic_ns();
        // A (ticks, monotonic) pair for the rate only when the thread was not
        // held up between the two monotonic readings around the tick count.
        let gap = m2.wrapping_sub(m1);
        let paired = gap < PAIR_NS;
        let mono = m1 + gap / 2;
        // The estimate this reading replaces, checked against it: a wall clock
        // stepped, a tick counter that jumped (a virtual machine moved) or a
        // rate gone wrong shows here, and the rate is measured again from now.
        if self.span > 0 {
            let dt = t.wrapping_sub(self.anchor_ticks);
            let est = u128::from(self.anchor_ns)
                + ((u128::from(dt) * u128::from(self.ns_per_tick_q32)) >> 32);
            if est.abs_diff(u128::from(ns)) > u128::from(DRIFT_NS) {
                *self = WallExtrapolator::new();
            }
        }
        if self.base_ticks == 0 {
            if paired {
                (self.base_ticks, self.base_mono_ns) = (t, mono);
            }
        } else if let (Some(dm), Some(dt)) = (
            mono.checked_sub(self.base_mono_ns),
            t.checked_sub(self.base_ticks),
        ) && paired
            && dm >= CALIBRATE_NS
            && dt > 0
        {
            let q = ((u128::from(dm) << 32) / u128::from(dt)).min(u128::from(u64::MAX >> 1));
            self.ns_per_tick_q32 = (q as u64).max(1);
            self.span = ((1_000_000u128 << 32) / u128::from(self.ns_per_tick_q32)) as u64;
        }
        (self.anchor_ticks, self.anchor_ns) = (t, ns);
        ns
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

    /// A manual clock with a tick counter running `ticks_per_us` a microsecond.
    struct Ticked {
        inner: ManualClock,
        ticks_per_us: u64,
    }

    impl Clock for Ticked {
        fn wall_ns(&self) -> u64 {
            self.inner.wall_ns()
        }
        fn monotonic_ns(&self) -> u64 {
            self.inner.monotonic_ns()
        }
        fn fast_ticks(&self) -> Option<u64> {
            Some(self.inner.monotonic_ns() * self.ticks_per_us / 1_000)
        }
    }

    #[test]
    fn wall_extrapolator_reads_the_os_then_extrapolates_within_a_millisecond() {
        let c = Ticked {
            inner: ManualClock::at_unix_ms(1_000),
            ticks_per_us: 2_900,
        };
        let mut w = WallExtrapolator::new();
        assert_eq!(w.wall_ns(&c), 1_000_000_000);
        // Until 20 ms have been measured, every call reads the clock: a wall
        // step shows at once.
        c.inner.advance(Duration::from_micros(300));
        c.inner.set_wall_unix_ms(900);
        assert_eq!(w.wall_ns(&c), 900_000_000);
        c.inner.advance(Duration::from_millis(25));
        assert_eq!(w.wall_ns(&c), 925_000_000, "calibrated at this reading");
        // Now a step is seen only at the next reading, within 1 ms; between
        // readings the time moves with the ticks (to within a nanosecond or two).
        c.inner.set_wall_unix_ms(5_000);
        c.inner.advance(Duration::from_micros(400));
        let got = w.wall_ns(&c);
        assert!(got.abs_diff(925_400_000) <= 2, "{got}");
        c.inner.advance(Duration::from_micros(599));
        let got = w.wall_ns(&c);
        assert!(got.abs_diff(925_999_000) <= 2, "{got}");
        c.inner.advance(Duration::from_micros(2));
        assert_eq!(w.wall_ns(&c), 5_001_001_000, "a millisecond on: read again");
        // That reading was 4 s from the estimate: the rate is measured again,
        // and for the next 20 ms every call reads the clock.
        c.inner.advance(Duration::from_micros(100));
        c.inner.set_wall_unix_ms(6_000);
        assert_eq!(w.wall_ns(&c), 6_000_000_000);
        c.inner.advance(Duration::from_millis(21));
        assert_eq!(w.wall_ns(&c), 6_021_000_000, "calibrated again");
        c.inner.advance(Duration::from_micros(500));
        let got = w.wall_ns(&c);
        assert!(got.abs_diff(6_021_500_000) <= 2, "{got}");
    }

    #[test]
    fn wall_extrapolator_without_ticks_reads_every_time() {
        let c = ManualClock::at_unix_ms(1_000);
        let mut w = WallExtrapolator::new();
        for i in 0..50 {
            c.advance(Duration::from_millis(1));
            c.set_wall_unix_ms(1_000 + 7 * i);
            assert_eq!(w.wall_ns(&c), (1_000 + 7 * i) * 1_000_000);
        }
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
