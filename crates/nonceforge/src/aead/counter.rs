//! The counter path: exact over all history in O(1) memory, as IPsec's
//! anti-replay window (RFC 4303 §3.4.3, RFC 6479).
//!
//! A counter-shaped nonce maps to a number `x` (its XOR with the key's first
//! nonce, read big-endian). The state is the highest `x` sealed and a circular
//! bitmap of the `W` values below it, where a set bit marks a *hole*: a value
//! below the highest that has not been sealed yet.
//!
//! ```text
//!   x:      ... h-3  h-2  h-1   h   | h+1 (next in order)
//!   hole:   ...  0    1    0    0   |   bit of h+1-W must be 0 to take the fast path
//! ```
//!
//! The next value in order (`h + 1`, the common case) is taken with one load and
//! one compare-and-swap and no lock; anything else (a jump ahead that opens
//! holes, filling a hole, a repeat, tags to remember) takes the lock. While the
//! lock holder rewrites bits for a jump it marks `high` as LOCKED, so no fast
//! path can move past bits that are being rewritten.
//!
//! **Below the window.** A value leaves the window sealed unless it was a hole
//! then (the fast path only reuses a slot whose value was sealed). The holes
//! that leave — never sealed, so still free — are kept as ranges ([`Lost`], at
//! most [`LOST_RANGES`]; past that, everything from the lowest range dropped
//! on is "unknown"). So a value below the window is *certainly sealed before*
//! unless it lies in a lost hole or in the unknown part: the classic bug — a
//! counter that restarts from its first value after any number of seals — is
//! caught exactly, in O(1) memory for a counter with few gaps.

use super::Tag;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

const LOCKED: u64 = 1 << 63;
/// Counter values from here on are not treated as counters (room for LOCKED).
pub(crate) const COUNTER_LIMIT: u64 = 1 << 62;
/// How many ranges of never-sealed values below the window are kept exactly.
pub(crate) const LOST_RANGES: usize = 64;

/// What the counter path says of `x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterSeen {
    New,
    /// Sealed before; with its message's tag if one was recorded.
    Again {
        tag: Option<Tag>,
    },
    /// More than the window below the highest, and in a hole that left the
    /// window (or the part past [`LOST_RANGES`]): cannot be proven fresh.
    TooOld,
}

/// The never-sealed values below the window: sorted, disjoint half-open
/// ranges, and where knowledge ends (values from `unknown_from` up that are
/// below the window may or may not have been sealed).
#[derive(Debug, Default)]
struct Lost {
    ranges: Vec<(u64, u64)>,
    unknown_from: Option<u64>,
}

impl Lost {
    /// Whether `x`, below the window, was certainly sealed.
    fn sealed_before(&self, x: u64) -> bool {
        if self.unknown_from.is_some_and(|u| x >= u) {
            return false;
        }
        let i = self.ranges.partition_point(|&(_, hi)| hi <= x);
        self.ranges.get(i).is_none_or(|&(lo, _)| lo > x)
    }

    /// Records [lo, hi) as never sealed (ranges arrive in increasing order:
    /// the window only moves up).
    fn add(&mut self, lo: u64, hi: u64) {
        if lo >= hi || self.unknown_from.is_some_and(|u| lo >= u) {
            return;
        }
        let full = self.ranges.len() == LOST_RANGES;
        match self.ranges.last_mut() {
            Some(last) if last.1 >= lo => last.1 = last.1.max(hi),
            _ if full => self.unknown_from = Some(lo),
            _ => self.ranges.push((lo, hi)),
        }
    }
}

pub(crate) struct CounterTrack {
    width: u64,
    /// The highest value sealed, plus one (0: none yet); LOCKED while bits move.
    high: AtomicU64,
    /// The bitmap, made on the first hole (a counter that only goes up in
    /// order never needs it: no bitmap reads as no holes).
    holes: OnceLock<Box<[AtomicU64]>>,
    slow: Mutex<Slow>,
    /// Every call takes the lock (tags are kept, or bytes are counted).
    always_slow: bool,
}

/// Tags by position, and whether each is set: grown to the highest position
/// used (a power of two, up to the width), so a key that seals a few messages
/// holds a few tags.
type Tags = (Vec<Tag>, Vec<bool>);

/// Whether the tag at position `p` is set, and its value.
fn tag_at(tags: &Tags, p: usize) -> Option<Tag> {
    tags.1.get(p).copied().unwrap_or(false).then(|| tags.0[p])
}

fn clear_tag(tags: &mut Tags, p: usize) {
    if let Some(has) = tags.1.get_mut(p) {
        *has = false;
    }
}

struct Slow {
    /// Tags by position, when identical messages may be sealed again.
    tags: Option<Tags>,
    /// Never-sealed values that left the window.
    lost: Lost,
}

impl CounterTrack {
    /// A window of `width` values (rounded up to a power of two, at least 64).
    pub(crate) fn new(width: usize, keep_tags: bool, always_slow: bool) -> Self {
        let width = width.max(64).next_power_of_two();
        CounterTrack {
            width: width as u64,
            high: AtomicU64::new(0),
            holes: OnceLock::new(),
            slow: Mutex::new(Slow {
                tags: keep_tags.then(Tags::default),
                lost: Lost::default(),
            }),
            always_slow: always_slow || keep_tags,
        }
    }

    pub(crate) fn width(&self) -> u64 {
        self.width
    }

    /// The highest value sealed, plus one (0: none yet).
    pub(crate) fn high_water(&self) -> u64 {
        self.high.load(Ordering::Acquire) & !LOCKED
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        let slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        self.holes.get().map_or(0, |h| size_of_val(&**h))
            + slow
                .tags
                .as_ref()
                .map_or(0, |(t, f)| t.capacity() * size_of::<Tag>() + f.capacity())
    }

    /// The word `w` of the bitmap (0 while there is none).
    #[inline(always)]
    fn hole_word(&self, w: usize, order: Ordering) -> u64 {
        self.holes.get().map_or(0, |h| h[w].load(order))
    }

    /// The bitmap, made if need be (by lock holders only).
    fn holes_made(&self) -> &[AtomicU64] {
        self.holes
            .get_or_init(|| (0..self.width / 64).map(|_| AtomicU64::new(0)).collect())
    }

    #[inline]
    fn bit(&self, x: u64) -> (usize, u64) {
        let p = x & (self.width - 1);
        ((p / 64) as usize, 1 << (p % 64))
    }

    /// Takes `x` if it is the next value in order and its slot holds no hole:
    /// one load of each word and one compare-and-swap (`x == h` also means
    /// `high` is not locked, as x < COUNTER_LIMIT). False: ask
    /// [`check_and_insert`](Self::check_and_insert).
    #[inline(always)]
    pub(crate) fn try_fast(&self, x: u64) -> bool {
        if self.always_slow {
            return false;
        }
        let h = self.high.load(Ordering::Acquire);
        if h == 0 || x != h {
            return false;
        }
        let (w, b) = self.bit(x);
        self.hole_word(w, Ordering::Acquire) & b == 0
            && self
                .high
                .compare_exchange(h, h + 1, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// `try_fast` for the biased owner (bias.rs): no other thread touches the
    /// state, so a plain store replaces the compare-and-swap.
    #[inline(always)]
    pub(crate) fn try_fast_owned(&self, x: u64) -> bool {
        if self.always_slow {
            return false;
        }
        let h = self.high.load(Ordering::Relaxed);
        if h == 0 || x != h {
            return false;
        }
        let (w, b) = self.bit(x);
        if self.hole_word(w, Ordering::Relaxed) & b != 0 {
            return false;
        }
        self.high.store(h + 1, Ordering::Relaxed);
        true
    }

    /// Checks `x` (< COUNTER_LIMIT) and records it as sealed if it is new.
    #[inline]
    pub(crate) fn check_and_insert(&self, x: u64) -> CounterSeen {
        if self.try_fast(x) {
            return CounterSeen::New;
        }
        self.slow_path(x)
    }

    #[cold]
    fn slow_path(&self, x: u64) -> CounterSeen {
        let mut slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        // Only lock holders set LOCKED, and we hold the lock.
        let h = self.high.load(Ordering::Acquire);
        if h != 0 && x < h {
            let last = h - 1;
            if last - x >= self.width {
                return if slow.lost.sealed_before(x) {
                    CounterSeen::Again { tag: None }
                } else {
                    CounterSeen::TooOld
                };
            }
            let (w, b) = self.bit(x);
            let p = (x & (self.width - 1)) as usize;
            if self
                .holes
                .get()
                .is_some_and(|h| h[w].fetch_and(!b, Ordering::AcqRel) & b != 0)
            {
                if let Some(tags) = &mut slow.tags {
                    clear_tag(tags, p);
                }
                return CounterSeen::New;
            }
            let tag = slow.tags.as_ref().and_then(|tags| tag_at(tags, p));
            return CounterSeen::Again { tag };
        }
        // A jump ahead: claim it (a fast path may move `high` until we do).
        let mut h = h;
        loop {
            if h != 0 && x < h {
                // A fast path took x (or passed it) meanwhile: decide again.
                drop(slow);
                return self.slow_path(x);
            }
            match self
                .high
                .compare_exchange(h, h | LOCKED, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => h = now,
            }
        }
        // Values in (last, x) become holes; x itself is sealed.
        let from = h; // first value above the previous highest (0 when empty)
        // The values whose slots [from, x] take over leave the window: those
        // that are holes were never sealed (kept as lost), the others were.
        let leave_hi = (x + 1).saturating_sub(self.width);
        let leave_lo = from.saturating_sub(self.width);
        if leave_hi > leave_lo && slow.lost.unknown_from.is_none_or(|u| leave_lo < u) {
            let end = leave_hi.min(from);
            let mut run: Option<u64> = None;
            let mut v = leave_lo;
            while v < end {
                let (w, b) = self.bit(v);
                let word = self.hole_word(w, Ordering::Relaxed);
                // A whole word without holes (the common case) at once.
                if word == 0 && v.is_multiple_of(64) && v + 64 <= end {
                    if let Some(lo) = run.take() {
                        slow.lost.add(lo, v);
                    }
                    v += 64;
                    continue;
                }
                match (word & b != 0, run) {
                    (true, None) => run = Some(v),
                    (false, Some(lo)) => {
                        slow.lost.add(lo, v);
                        run = None;
                    }
                    _ => {}
                }
                v += 1;
            }
            if let Some(lo) = run {
                slow.lost.add(lo, end);
            }
            // Holes opened by this jump that fall below the new window at once.
            slow.lost.add(from, leave_hi);
        }
        if x - from >= self.width {
            for word in self.holes_made() {
                word.store(u64::MAX, Ordering::Relaxed);
            }
        } else if from < x {
            let holes = self.holes_made();
            for v in from..x {
                let (w, b) = self.bit(v);
                holes[w].fetch_or(b, Ordering::Relaxed);
            }
        }
        if let Some(holes) = self.holes.get() {
            let (w, b) = self.bit(x);
            holes[w].fetch_and(!b, Ordering::Relaxed);
        }
        if let Some(tags) = &mut slow.tags {
            let span = (x - from + 1).min(self.width);
            for v in x + 1 - span..=x {
                clear_tag(tags, (v & (self.width - 1)) as usize);
            }
        }
        self.high.store(x + 1, Ordering::Release);
        CounterSeen::New
    }

    /// Records the tag sealed under `x` (if `x` is still in the window).
    pub(crate) fn set_tag(&self, x: u64, tag: &Tag) {
        let mut slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        let h = self.high.load(Ordering::Acquire) & !LOCKED;
        if h == 0 || x >= h || h - 1 - x >= self.width {
            return;
        }
        if let Some((t, has)) = &mut slow.tags {
            let p = (x & (self.width - 1)) as usize;
            if p >= has.len() {
                let len = (p + 1).next_power_of_two().min(self.width as usize);
                t.resize(len, [0; 16]);
                has.resize(len, false);
            }
            t[p] = *tag;
            has[p] = true;
        }
    }

    /// Forgets `x` (its seal failed before any output): it is a hole again.
    pub(crate) fn forget(&self, x: u64) {
        let _slow = self.slow.lock().unwrap_or_else(|e| e.into_inner());
        let h = self.high.load(Ordering::Acquire) & !LOCKED;
        if h != 0 && x < h && h - 1 - x < self.width {
            let (w, b) = self.bit(x);
            self.holes_made()[w].fetch_or(b, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_out_of_order_repeats_and_too_old() {
        let c = CounterTrack::new(128, false, false);
        for x in 0..1000 {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
        }
        assert_eq!(c.check_and_insert(999), CounterSeen::Again { tag: None });
        // Below the window, and sealed: known (no hole left the window).
        assert_eq!(c.check_and_insert(500), CounterSeen::Again { tag: None });
        // A jump leaves holes: each is accepted once, then refused.
        assert_eq!(c.check_and_insert(1100), CounterSeen::New);
        for x in [1050, 1001, 1099, 1000] {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
            assert_eq!(
                c.check_and_insert(x),
                CounterSeen::Again { tag: None },
                "{x}"
            );
        }
        assert_eq!(c.check_and_insert(1100), CounterSeen::Again { tag: None });
        assert_eq!(c.check_and_insert(1101), CounterSeen::New);
        // A jump past the whole window: everything below is too old or a hole.
        assert_eq!(c.check_and_insert(10_000), CounterSeen::New);
        assert_eq!(c.check_and_insert(9_000), CounterSeen::TooOld);
        assert_eq!(c.check_and_insert(9_990), CounterSeen::New);
        assert_eq!(c.check_and_insert(9_990), CounterSeen::Again { tag: None });
        // A hole falling out of the window does not block the fast path's slot.
        for x in 10_001..10_400 {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
        }
    }

    #[test]
    fn a_counter_restarted_after_any_number_of_seals_is_caught() {
        for (width, seals) in [(64u64, 10_000u64), (1 << 16, 100_000), (1 << 16, 1_000_000)] {
            let c = CounterTrack::new(width as usize, false, false);
            for x in 0..seals {
                assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
            }
            // The restart: every value again from the first, far below the window.
            for x in 0..1000 {
                assert_eq!(
                    c.check_and_insert(x),
                    CounterSeen::Again { tag: None },
                    "{x} of {seals}"
                );
            }
            assert_eq!(
                c.check_and_insert(seals - width - 1),
                CounterSeen::Again { tag: None }
            );
        }
    }

    #[test]
    fn holes_below_the_window_stay_free_and_everything_else_is_known() {
        let c = CounterTrack::new(64, false, false);
        // 0..100 sealed but 10..13 and 50; then far ahead.
        for x in (0..100).filter(|x| !(10..13).contains(x) && *x != 50) {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
        }
        for x in 100..1000 {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
        }
        for x in [10, 11, 12, 50] {
            assert_eq!(
                c.check_and_insert(x),
                CounterSeen::TooOld,
                "{x} was never sealed"
            );
        }
        for x in [0, 9, 13, 49, 51, 99, 500, 935] {
            assert_eq!(
                c.check_and_insert(x),
                CounterSeen::Again { tag: None },
                "{x}"
            );
        }
        // A jump past the window: the values skipped are free, the rest known.
        assert_eq!(c.check_and_insert(5000), CounterSeen::New);
        for x in 5001..5200 {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
        }
        assert_eq!(c.check_and_insert(3000), CounterSeen::TooOld);
        assert_eq!(c.check_and_insert(999), CounterSeen::Again { tag: None });
        assert_eq!(c.check_and_insert(5000), CounterSeen::Again { tag: None });
    }

    #[test]
    fn past_the_lost_ranges_knowledge_ends_but_below_it_stays_exact() {
        let c = CounterTrack::new(64, false, false);
        // Every third value only: a hole range per sealed value.
        let mut x = 0;
        while x < 3 * (LOST_RANGES as u64 + 200) {
            assert_eq!(c.check_and_insert(x), CounterSeen::New, "{x}");
            x += 3;
        }
        assert_eq!(c.check_and_insert(0), CounterSeen::Again { tag: None });
        assert_eq!(c.check_and_insert(3), CounterSeen::Again { tag: None });
        assert_eq!(c.check_and_insert(1), CounterSeen::TooOld);
        // Far past the 64 ranges: unknown, so refused in Counter mode, left to
        // the window in Auto.
        assert_eq!(c.check_and_insert(3 * 100), CounterSeen::TooOld);
    }

    #[test]
    fn first_value_need_not_be_zero_and_forget_reopens() {
        let c = CounterTrack::new(64, true, false);
        assert_eq!(c.check_and_insert(5), CounterSeen::New);
        c.set_tag(5, &[5; 16]);
        assert_eq!(
            c.check_and_insert(5),
            CounterSeen::Again { tag: Some([5; 16]) }
        );
        assert_eq!(c.check_and_insert(3), CounterSeen::New);
        assert_eq!(c.check_and_insert(3), CounterSeen::Again { tag: None });
        c.forget(3);
        assert_eq!(c.check_and_insert(3), CounterSeen::New);
    }

    #[test]
    fn threads_racing_on_one_counter_take_each_value_once() {
        let c = CounterTrack::new(1024, false, false);
        let next = AtomicU64::new(0);
        let (accepted, too_old) = (AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            for t in 0..4 {
                let (c, next, accepted, too_old) = (&c, &next, &accepted, &too_old);
                s.spawn(move || {
                    for i in 0..200_000u64 {
                        // Mostly in order; now and then a value is sealed twice
                        // (by this thread again) or out of order.
                        let x = next.fetch_add(1, Ordering::Relaxed);
                        // A thread descheduled for a while may come back more
                        // than the window behind: refused as too old, never
                        // accepted twice.
                        match c.check_and_insert(x) {
                            CounterSeen::New => accepted.fetch_add(1, Ordering::Relaxed),
                            CounterSeen::TooOld => too_old.fetch_add(1, Ordering::Relaxed),
                            CounterSeen::Again { .. } => panic!("{x} taken twice"),
                        };
                        if (i + t) % 1000 == 0 {
                            assert_ne!(c.check_and_insert(x), CounterSeen::New, "repeat of {x}");
                        }
                    }
                });
            }
        });
        let (a, o) = (accepted.into_inner(), too_old.into_inner());
        assert_eq!(a + o, 800_000, "{a} accepted, {o} too old");
    }
}
