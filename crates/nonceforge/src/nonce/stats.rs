//! What a generator has done and how much room it has left, for operators:
//! [`NonceGenerator::stats`].
//!
//! Nothing here costs the hot path a write. Counter and encrypted nonces are
//! counted by the tick counters they are made from anyway (one per size); a
//! generator's own sortable nonces by the state word they are taken from (its
//! lifts into a new millisecond, and the words a call had to give up, are
//! kept once a millisecond); per-handle sequences add their count once a
//! millisecond and when dropped. Waits, refusals and the ticks a handle
//! leaves unused are counted where they happen: on paths that already wait,
//! fail or drop.

use super::layout::Bits;
use super::{NO_64, NonceGenerator, STOPPED_PAST_DEADLINE, Shared, sortable};
use crate::clock::Clock;
use crate::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Why a call was refused, as counted in [`Refusals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    Disabled,
    Deadline,
    EpochExhausted,
    CounterExhausted,
    NoKey,
}

/// The counts a generator keeps beside its hot state (on cache lines of their
/// own: they are written on slow paths only).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Ticks taken from a size's counter that made no nonce: a call refused
    /// after taking its tick, ticks a [`super::LocalNonces`] dropped unused.
    ticks_unused: [AtomicU64; 3],
    /// The generator's own sortable words that made no nonce (a call that
    /// found the millisecond moved on gives up its word; a refusal after
    /// taking one), plus the jumps of the word into a new millisecond.
    sortable_skipped: [AtomicU64; 3],
    /// Nonces of per-handle sortable sequences (96 and 128 bits), added once a
    /// millisecond and when a sequence is dropped.
    sequences: [AtomicU64; 3],
    throttled: AtomicU64,
    throttled_ns: AtomicU64,
    refused: [AtomicU64; 5],
}

impl Counts {
    #[cold]
    pub(crate) fn ticks_unused(&self, bits: Bits, n: u64) {
        self.ticks_unused[bits as usize].fetch_add(n, Ordering::Relaxed);
    }

    #[cold]
    pub(crate) fn sortable_skipped(&self, bits: Bits, n: u64) {
        self.sortable_skipped[bits as usize].fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn sequence_issued(&self, bits: Bits, n: u64) {
        if n > 0 {
            self.sequences[bits as usize].fetch_add(n, Ordering::Relaxed);
        }
    }

    pub(crate) fn throttled(&self, waited_ns: u64) {
        self.throttled.fetch_add(1, Ordering::Relaxed);
        self.throttled_ns.fetch_add(waited_ns, Ordering::Relaxed);
    }

    #[cold]
    pub(crate) fn refused(&self, why: Refusal) {
        self.refused[why as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Calls refused, by reason (each a count since the generator was built).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusals {
    /// [`Error::Disabled`] while [`NonceGenerator::disable`] held it.
    pub disabled: u64,
    /// [`Error::Disabled`] past its deadline: a machine-id lease that lapsed,
    /// was lost or released ([`NonceGenerator::set_valid_until`]).
    pub deadline: u64,
    /// [`Error::EpochExhausted`]: the 42-bit timestamp range has ended.
    pub epoch_exhausted: u64,
    /// [`Error::CounterExhausted`]: a 128-bit counter or the sortable slots ran out.
    pub counter_exhausted: u64,
    /// [`Error::NoKey`]: an encrypted nonce asked of a generator without a key.
    pub no_key: u64,
}

impl Refusals {
    /// Every refusal, whatever the reason.
    pub fn total(&self) -> u64 {
        self.disabled + self.deadline + self.epoch_exhausted + self.counter_exhausted + self.no_key
    }
}

/// What a generator has issued, waited for and refused, and how much room it
/// has left: a snapshot, taken without stopping it ([`NonceGenerator::stats`]).
/// Counts are since the generator was built; every handle on it (clones,
/// [`super::LocalNonces`]) counts into the same figures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GeneratorStats {
    /// The generator's machine id.
    pub machine_id: u16,
    /// Counter and encrypted nonces issued, per size (64, 96, 128 bits): they
    /// are made from one tick counter per size, and counted by it at no cost
    /// per nonce, so the two kinds are counted together (a generator is meant
    /// to make one kind per key). A [`super::LocalNonces`] block counts as it
    /// is handed out, its unused rest when the handle is dropped.
    pub counter_issued: [u64; 3],
    /// Sortable nonces issued, per size: the generator's shared sequence and
    /// the per-handle sequences of 96 and 128 bits (those add their count
    /// once a millisecond and when dropped). Words taken from a shared word
    /// of another generator's ([`NonceGenerator::sortable_shared`]) are not
    /// counted here.
    pub sortable_issued: [u64; 3],
    /// Times a call waited because its millisecond's counter ran out (64-bit
    /// nonces: 8192 a millisecond), or for the clock to reach a timestamp.
    pub throttled: u64,
    /// The time those waits took, in all.
    pub throttled_for: Duration,
    /// Calls refused, by reason.
    pub refused: Refusals,
    /// How far the wall clock is behind the generator's own clock now (zero
    /// when it is not): the generator reads the wall clock once and then
    /// counts on the monotonic clock, so a wall clock stepped back (by NTP,
    /// by an operator) shows here, and cannot make it repeat a value. The next
    /// generator of this machine id starts from the wall clock: behind by more
    /// than the lease's margin, it waits (or, with a floor, fails).
    pub clock_behind: Duration,
    /// How long until the 42-bit timestamp range of the generator's epoch ends.
    pub epoch_ends_in: Duration,
    /// How long the generator may still issue before its deadline (a
    /// machine-id lease's local deadline), if it has one.
    pub deadline_in: Option<Duration>,
    /// Whether it issues: neither disabled nor past its deadline.
    pub enabled: bool,
}

impl GeneratorStats {
    /// Counter and encrypted nonces of `bits` issued.
    pub fn counter_issued(&self, bits: Bits) -> u64 {
        self.counter_issued[bits as usize]
    }

    /// Sortable nonces of `bits` issued.
    pub fn sortable_issued(&self, bits: Bits) -> u64 {
        self.sortable_issued[bits as usize]
    }
}

impl<C: Clock> Shared<C> {
    /// Counts a refusal and returns its error.
    #[cold]
    #[inline(never)]
    pub(crate) fn refuse(&self, why: Refusal, error: Error) -> Error {
        self.counts.refused(why);
        error
    }

    /// The refusal of a stopped generator, by why it stopped.
    #[cold]
    #[inline(never)]
    pub(crate) fn refuse_stopped(&self, bits: Bits) -> Error {
        let stopped = self.stopped.load(Ordering::Relaxed);
        if bits == Bits::B64 && stopped & NO_64 != 0 {
            // Not a refusal of a working generator: a call the layout has not.
            return Error::WideLayoutNo64;
        }
        let why = if stopped & STOPPED_PAST_DEADLINE != 0 {
            Refusal::Deadline
        } else {
            Refusal::Disabled
        };
        self.refuse(why, Error::Disabled)
    }

    pub(crate) fn counts(&self) -> &Counts {
        &self.counts
    }
}

impl<C: Clock> NonceGenerator<C> {
    /// What this generator has issued, waited for and refused, and how much
    /// room it has left — for metrics and health checks. Cheap (a few atomic
    /// loads and one reading of each clock), and nothing on the hot path pays
    /// for it: see [`GeneratorStats`] for how each figure is kept.
    ///
    /// ```
    /// use nonceforge::{Bits, MachineId, NonceGenerator};
    /// let generator = NonceGenerator::builder(MachineId::new(7)?).build()?;
    /// generator.counter_96()?;
    /// generator.sortable_64()?;
    /// let mut local = generator.local();
    /// local.counter_96()?;
    /// drop(local);
    /// let stats = generator.stats();
    /// assert_eq!(stats.counter_issued(Bits::B96), 2);
    /// assert_eq!(stats.sortable_issued(Bits::B64), 1);
    /// assert_eq!(stats.refused.total(), 0);
    /// assert!(stats.enabled);
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn stats(&self) -> GeneratorStats {
        let s = &self.shared;
        let c = &s.counts;
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let counter_issued = Bits::ALL.map(|b| {
            let i = b as usize;
            // The 128-bit counter refuses past its last tick without undoing
            // its fetch_add: count only what it could hand out.
            let taken = match b {
                Bits::B128 => load(&s.counters[i]).min(super::counter::LAST_TICK_128 + 1),
                _ => load(&s.counters[i]),
            };
            taken.saturating_sub(load(&c.ticks_unused[i]))
        });
        let sortable_issued = Bits::ALL.map(|b| {
            let i = b as usize;
            let start = s.init_ts << sortable::state_counter_bits(b);
            let words = load(&s.sortables[i]).saturating_sub(start);
            words.saturating_sub(load(&c.sortable_skipped[i])) + load(&c.sequences[i])
        });
        let now = s.ticker.now_ms(&s.clock);
        let wall = s.clock.wall_ns() / 1_000_000;
        let until = s.valid_until_unix_ms.load(Ordering::Relaxed);
        let refused = |r: Refusal| load(&c.refused[r as usize]);
        GeneratorStats {
            machine_id: s.machine_id.get(),
            counter_issued,
            sortable_issued,
            throttled: load(&c.throttled),
            throttled_for: Duration::from_nanos(load(&c.throttled_ns)),
            refused: Refusals {
                disabled: refused(Refusal::Disabled),
                deadline: refused(Refusal::Deadline),
                epoch_exhausted: refused(Refusal::EpochExhausted),
                counter_exhausted: refused(Refusal::CounterExhausted),
                no_key: refused(Refusal::NoKey),
            },
            clock_behind: Duration::from_millis(now.saturating_sub(wall)),
            epoch_ends_in: Duration::from_millis(s.end_unix_ms().saturating_sub(now)),
            deadline_in: (until != u64::MAX)
                .then(|| Duration::from_millis(until.saturating_sub(now))),
            enabled: s.stopped.load(Ordering::Relaxed) & !NO_64 == 0,
        }
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
