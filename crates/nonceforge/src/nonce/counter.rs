//! Counter nonces: one atomic tick counter per size.
//!
//! A tick `t` becomes a nonce this way (`start` is the generator's start time in
//! ms since the epoch, `k` the counter width: 13, 45 or 64 bits):
//!
//! ```text
//!   timestamp = start + (t >> k)      counter = t mod 2^k
//! ```
//!
//! So the counter carries into the timestamp when it overflows (64 bits: every
//! 8192 nonces; 96 bits: every 2^45). A timestamp may never pass the clock: the
//! highest timestamp known to have begun is kept in `verified_ts`, and only a tick
//! beyond it reads the clock — and waits, sleeping, if the clock is behind. Idle
//! time raises `verified_ts` at the next look at the clock: that is the bank a
//! burst draws on. 128-bit counters never carry: 2^63 ticks last 292 years at a
//! billion a second, and the tick after that fails rather than wrap.

use super::{Shared, layout};
use crate::clock::Clock;
use crate::error::{Error, Result};
use layout::{Bits, TIMESTAMP_END};
use std::sync::atomic::Ordering;

/// The largest 128-bit tick handed out (then [`Error::CounterExhausted`]).
pub(crate) const LAST_TICK_128: u64 = (1 << 63) - 1;

impl<C: Clock> Shared<C> {
    /// One counter nonce from the shared tick counter.
    #[inline]
    pub(crate) fn counter(&self, bits: Bits) -> Result<u128> {
        self.check_enabled(bits)?;
        let t = self.counters[bits as usize].fetch_add(1, Ordering::Relaxed);
        if let Err(e) = self.admit(bits, t) {
            return Err(self.untaken(bits, 1, e));
        }
        Ok(self.tick_value(bits, t))
    }

    /// Reserves `n` ticks with one atomic operation and returns the first; every
    /// reserved tick is admitted (its timestamp has begun) when this returns.
    #[inline]
    pub(crate) fn reserve(&self, bits: Bits, n: u64) -> Result<u64> {
        self.check_enabled(bits)?;
        self.check_deadline()?;
        let t = self.counters[bits as usize].fetch_add(n, Ordering::Relaxed);
        if let Err(e) = self.admit(bits, t.saturating_add(n - 1)) {
            return Err(self.untaken(bits, n, e));
        }
        Ok(t)
    }

    /// `n` ticks were taken for a call that failed with `e`: they made no
    /// nonce. (A 128-bit counter's ticks past its last are not counted as
    /// taken in the first place.)
    #[cold]
    #[inline(never)]
    fn untaken(&self, bits: Bits, n: u64, e: Error) -> Error {
        if bits != Bits::B128 {
            self.counts().ticks_unused(bits, n);
        }
        e
    }

    /// Fills `out` with counter nonces from one reservation.
    pub(crate) fn fill_counter<const N: usize>(
        &self,
        bits: Bits,
        out: &mut [[u8; N]],
    ) -> Result<()> {
        debug_assert_eq!(N, bits.bytes());
        if out.is_empty() {
            return self.check_enabled(bits);
        }
        let first = self.reserve(bits, out.len() as u64)?;
        self.write_ticks(bits, first, out);
        Ok(())
    }

    /// Writes the nonces of ticks `first..first + out.len()` (all admitted).
    #[inline]
    pub(crate) fn write_ticks<const N: usize>(&self, bits: Bits, first: u64, out: &mut [[u8; N]]) {
        let k = self.counter_bits(bits);
        // The machine id in place for this size (set at build, per layout).
        let mb = self.machine_bits[bits as usize];
        match bits {
            Bits::B64 => {
                // The standard layout's (the wide one has no 64-bit nonces).
                let base = (self.init_ts << 22) | mb;
                for (i, o) in out.iter_mut().enumerate() {
                    let t = first + i as u64;
                    let v = base + ((t >> 13) << 22) + (t & 0x1fff);
                    o.copy_from_slice(&v.to_be_bytes()[8 - N..]);
                }
            }
            Bits::B96 => {
                // Split where the counter carries, so each run has one timestamp.
                let mut i = 0;
                while i < out.len() {
                    let t = first + i as u64;
                    let ts = self.init_ts + (t >> k);
                    let run =
                        ((1u64 << k) - (t & ((1 << k) - 1))).min((out.len() - i) as u64) as usize;
                    let hi = (ts >> 10) as u32;
                    let lo_base = ((ts & 0x3ff) << 54) | mb;
                    let lo_t = t & ((1 << k) - 1);
                    for (j, o) in out[i..i + run].iter_mut().enumerate() {
                        o[..4].copy_from_slice(&hi.to_be_bytes());
                        o[4..]
                            .copy_from_slice(&(lo_base | (lo_t + j as u64)).to_be_bytes()[..N - 4]);
                    }
                    i += run;
                }
            }
            Bits::B128 => {
                let hi = ((self.init_ts << 22) | mb).to_be_bytes();
                for (i, o) in out.iter_mut().enumerate() {
                    o[..8].copy_from_slice(&hi);
                    o[8..].copy_from_slice(&(first + i as u64).to_be_bytes()[..N - 8]);
                }
            }
        }
    }

    /// The nonce value of tick `t` (which must have been admitted).
    #[inline(always)]
    pub(crate) fn tick_value(&self, bits: Bits, t: u64) -> u128 {
        match bits {
            Bits::B128 => self.compose(bits, self.init_ts, t),
            _ => {
                let k = self.counter_bits(bits);
                self.compose(bits, self.init_ts + (t >> k), t & ((1 << k) - 1))
            }
        }
    }

    /// Makes sure tick `t`'s timestamp has begun; waits if it has not.
    #[inline(always)]
    pub(crate) fn admit(&self, bits: Bits, t: u64) -> Result<()> {
        match bits {
            Bits::B128 => {
                if t > LAST_TICK_128 {
                    return Err(self.refuse(
                        super::stats::Refusal::CounterExhausted,
                        Error::CounterExhausted { bits: 128 },
                    ));
                }
                Ok(())
            }
            _ => {
                let ts = self.init_ts + (t >> self.counter_bits(bits));
                if ts <= self.verified_ts.load(Ordering::Relaxed) {
                    Ok(())
                } else {
                    self.catch_up(ts)
                }
            }
        }
    }

    /// The clock is behind timestamp `ts`, or has not been looked at lately.
    #[cold]
    #[inline(never)]
    fn catch_up(&self, ts: u64) -> Result<()> {
        if ts >= TIMESTAMP_END {
            return Err(self.exhausted());
        }
        let mut now = self.now_ts()?;
        if now < ts {
            self.wait_until_ts(ts)?;
            now = self.now_ts()?;
        }
        self.verified_ts.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }
}
