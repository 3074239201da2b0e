//! Sortable nonces: strictly increasing per generator, carrying the millisecond
//! they were made in.
//!
//! Each size keeps one atomic word, `timestamp << k | counter` (k = 13 for 64-bit
//! nonces; 21 for 96 and 128, where the layout's wider counter field holds the
//! same value zero-extended). A call reads the clock, then takes the next word
//! with `fetch_add`:
//!
//! * word's timestamp behind the clock: the millisecond has moved on; lift the
//!   word to `now << k` with `fetch_max` (counter back to 0) and take again;
//! * word's timestamp ahead of the clock: the counter overflowed into the next
//!   millisecond (64-bit: the 8193rd nonce of a millisecond); that word is ours,
//!   but it is handed out only once the clock reaches it — the caller sleeps
//!   until then, it does not spin.
//!
//! Every word is taken by exactly one call, and the words are taken in one
//! total order in which they increase, so each thread sees its nonces strictly
//! increase. 2^21 per millisecond (2.1 billion a second) bounds 96- and 128-bit
//! sortable nonces per generator; that is beyond what one atomic word sustains.

use super::{Shared, layout};
use crate::clock::Clock;
use crate::error::Result;
use layout::{Bits, TIMESTAMP_END};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of the counter inside the state word.
pub(crate) const fn state_counter_bits(bits: Bits) -> u32 {
    match bits {
        Bits::B64 => 13,
        // 42 + 21 = 63: the word never wraps, even in the last millisecond.
        _ => 21,
    }
}

impl<C: Clock> Shared<C> {
    /// One sortable nonce.
    #[inline]
    pub(crate) fn sortable(&self, bits: Bits) -> Result<u128> {
        self.sortable_on(bits, &self.sortables[bits as usize], 0)
    }

    /// One sortable nonce from the state word `state`, whose timestamps count
    /// from `offset` ms before this generator's epoch (0: the generator's own
    /// word; the epoch: a word in Unix ms, shared with other generators).
    #[inline]
    pub(crate) fn sortable_on(&self, bits: Bits, state: &AtomicU64, offset: u64) -> Result<u128> {
        self.check_enabled(bits)?;
        let k = state_counter_bits(bits);
        // The generator's own word is counted (stats.rs); a shared one is not.
        let own = std::ptr::eq(state, &*self.sortables[bits as usize]);
        loop {
            let now = self.now_ts()?.wrapping_add(offset);
            let word = state.fetch_add(1, Ordering::Relaxed);
            let t = word >> k;
            if t < now {
                let prev = state.fetch_max(now << k, Ordering::Relaxed);
                if own {
                    // This call's word made no nonce; the lift skipped words.
                    self.counts()
                        .sortable_skipped(bits, 1 + (now << k).saturating_sub(prev));
                }
                continue;
            }
            // t >= now >= offset.
            let ts = t.wrapping_sub(offset);
            if t > now {
                let waited = if ts >= TIMESTAMP_END {
                    Err(self.exhausted())
                } else {
                    self.wait_until_ts(ts)
                };
                if let Err(e) = waited {
                    if own {
                        self.counts().sortable_skipped(bits, 1);
                    }
                    return Err(e);
                }
            }
            let counter = word & ((1 << k) - 1);
            return Ok(self.compose(bits, ts, counter));
        }
    }
}
