//! The exact window: the last `capacity` (rounded up to a power of two, R)
//! nonces a shard has seen, in a ring, with an index of one cache line per
//! hash bucket.
//!
//! ```text
//!   ring (R nonces, oldest overwritten)     index (R/2 buckets, one line each)
//!   [ n0 | n1 | n2 | ... | nR-1 ]            [ e0 e1 ... e14 | oldest ]
//!                                            e = fingerprint | seq mod 2^k
//! ```
//!
//! A nonce's entry holds a fingerprint (hash bits the bucket does not use) and
//! its insertion number modulo 2^k (k = log2 R + 8), whose low log2 R bits are
//! its ring slot. A bucket is a FIFO of 15 entries: an insert overwrites the
//! bucket's oldest entry, which must be stale (inserted more than R ago). A
//! lookup reads one 64-byte line, compares the 15 fingerprints at once (SIMD),
//! and reads the ring only on a fingerprint match, which a fresh nonce almost
//! never has; an insert writes that line and the next ring slot. Nothing is
//! allocated on this path.
//!
//! Exact, because the ring decides: a nonce is found when a ring slot written
//! within the last R insertions holds it, and an entry is only overwritten
//! once stale, so every nonce in the ring has its entry. Ages are modulo 2^k:
//! a stale entry may look live again (2^k = 256 R insertions on), which costs a
//! ring compare on a fingerprint match, or, for a bucket's oldest entry, a
//! needless spill, never a wrong answer. A bucket whose oldest entry is live
//! (all 15 are; about 10^-9 of inserts at 2 live entries a bucket on average)
//! puts the nonce in a spill list, checked while it is non-empty; a withdrawn
//! seal's slot is listed as forgotten until overwritten.
//!
//! **Grown with use.** A window holds nothing until its first nonce (a key
//! whose nonces all take the counter path never allocates one), then
//! [`FIRST_RING`] nonces (or R, if smaller), and doubles each time its ring
//! fills, up to R: a key that seals a few messages holds a few hundred bytes,
//! not R's worth. Until the ring is
//! full nothing has left it, so the grown window (every nonce re-inserted, at
//! its same insertion number) holds exactly what a full-size one would: the
//! detection is the same at every size. Growing costs one re-insertion per
//! nonce held, amortized O(1) a seal (a window of 2^20 pauses its shard
//! ~10 ms at its last doubling).
//!
//! Measured against the two SwissTable generations it replaces (hashbrown,
//! with a 2 KB filter each): see bench/RESULTS.md, "Nonce sanitizer".

use super::Tag;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where a nonce was put: its insertion number in this window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    seq: u64,
}

/// What the window knows of a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Not remembered; it is now (at this place).
    New(Place),
    /// Remembered, with the tag of its first message if one was recorded.
    Again { tag: Option<Tag> },
}

const WAYS: usize = 16;
/// Nonces a window holds before its first doubling.
pub(crate) const FIRST_RING: usize = 8;
/// Entry lanes a bucket; the last is the index of its oldest entry.
const LANES: usize = WAYS - 1;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Bucket([u32; WAYS]);

/// One shard's window of nonces of `N` bytes.
pub(crate) struct Window<const N: usize> {
    buckets: Box<[Bucket]>,
    bucket_mask: usize,
    ring: Box<[[u8; N]]>,
    /// Tags by ring slot, when identical messages may be sealed again.
    tags: Option<Box<[Option<Tag>]>>,
    /// R − 1.
    ring_mask: u64,
    /// k: bits of the insertion number an entry keeps; the rest is fingerprint.
    seq_bits: u32,
    seq_mask: u32,
    /// Insertions so far.
    next: u64,
    /// `next` at which the ring is full and doubles (u64::MAX at full size).
    grow_at: u64,
    /// R: the ring's size at full size.
    full: usize,
    /// Insertion numbers of nonces whose bucket was full of live entries.
    spill: Vec<u64>,
    /// Insertion numbers of withdrawn seals still in the ring.
    forgotten: Vec<u64>,
}

impl<const N: usize> Window<N> {
    pub(crate) fn new(capacity: usize, keep_tags: bool) -> Self {
        let full = capacity.max(1).next_power_of_two();
        assert!(full <= 1 << 30, "window of at most 2^30 nonces");
        Self::sized(0, full, keep_tags)
    }

    /// A window whose ring holds `r` nonces now (0 or a power of two) and
    /// grows to `full`.
    fn sized(r: usize, full: usize, keep_tags: bool) -> Self {
        // 2^k = 256 R insertions before an age wraps; at most 31 bits, so at
        // least one of fingerprint.
        let seq_bits = (r.trailing_zeros() + 8).min(31);
        let seq_mask = (1u32 << seq_bits) - 1;
        // R/2 buckets, at least one — none for the empty ring.
        let buckets = r.div_ceil(2);
        // Stale from the start (age R + 1); lane 15 of each is its oldest: 0.
        let mut empty = Bucket([(r as u32 + 1).wrapping_neg() & seq_mask; WAYS]);
        empty.0[LANES] = 0;
        Window {
            buckets: vec![empty; buckets].into_boxed_slice(),
            bucket_mask: buckets.saturating_sub(1),
            ring: vec![[0; N]; r].into_boxed_slice(),
            tags: keep_tags.then(|| vec![None; r].into_boxed_slice()),
            // Empty ring: mask 0, so no insertion number is in it
            // (in_ring: 2^64 − 1 > 0).
            ring_mask: (r as u64).saturating_sub(1),
            seq_bits,
            seq_mask,
            next: 0,
            grow_at: if r < full { r as u64 } else { u64::MAX },
            full,
            spill: Vec::new(),
            forgotten: Vec::new(),
        }
    }

    /// Doubles a full ring: every nonce again at its insertion number (the
    /// ring holds numbers 0..next, slot = number, as nothing has left it yet),
    /// with its tag; withdrawn ones stay withdrawn. `rehash` is the hash the
    /// window's callers use.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, rehash: &impl Fn(&[u8; N]) -> u64, bytes: &AtomicUsize) {
        debug_assert_eq!(self.next, self.ring.len() as u64);
        let before = self.memory_bytes();
        let r = (self.ring.len() * 2).clamp(FIRST_RING.min(self.full), self.full);
        let mut bigger = Self::sized(r, self.full, self.tags.is_some());
        for nonce in self.ring.iter() {
            bigger.insert(nonce, rehash(nonce));
        }
        if let (Some(old), Some(new)) = (&self.tags, &mut bigger.tags) {
            new[..old.len()].copy_from_slice(old);
        }
        bigger.forgotten = std::mem::take(&mut self.forgotten);
        *self = bigger;
        bytes.fetch_add(
            self.memory_bytes().saturating_sub(before),
            Ordering::Relaxed,
        );
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        size_of_val(&*self.buckets)
            + size_of_val(&*self.ring)
            + self.tags.as_ref().map_or(0, |t| size_of_val(&**t))
            + (self.spill.capacity() + self.forgotten.capacity()) * size_of::<u64>()
    }

    /// How many nonces the ring holds at its present size.
    #[cfg(test)]
    pub(crate) fn ring_len(&self) -> usize {
        self.ring.len()
    }

    /// Whether an entry `age` insertions old (modulo 2^k) is among the last R.
    #[inline(always)]
    fn live(&self, age: u32) -> bool {
        age.wrapping_sub(1) <= self.ring_mask as u32
    }

    /// Whether the nonce inserted as number `seq` is in the ring now.
    #[inline]
    fn holds(&self, seq: u64) -> bool {
        in_ring(self.next, seq, self.ring_mask) && !self.forgotten.contains(&seq)
    }

    /// The tag at ring slot of `seq`, if `nonce` is what that slot holds.
    #[inline]
    fn matches(&self, seq: u64, nonce: &[u8; N]) -> Option<Option<Tag>> {
        let slot = (seq & self.ring_mask) as usize;
        (self.ring[slot] == *nonce && self.holds(seq))
            .then(|| self.tags.as_ref().and_then(|t| t[slot]))
    }

    /// Looks `nonce` (hashed to `hash` by `rehash`, which a growing window
    /// uses again on the nonces it holds) up and remembers it if it is new.
    /// What a doubling of the ring adds to the window's memory is added to
    /// `bytes` (the key's tally, read without the window's lock).
    #[inline(always)]
    pub(crate) fn check_and_insert(
        &mut self,
        nonce: &[u8; N],
        hash: u64,
        rehash: &impl Fn(&[u8; N]) -> u64,
        bytes: &AtomicUsize,
    ) -> Seen {
        if self.next == self.grow_at {
            self.grow(rehash, bytes);
        }
        let b = (hash as usize) & self.bucket_mask;
        let fp = ((hash >> 32) as u32) << self.seq_bits;
        let fp_mask = !self.seq_mask;
        let bucket = &self.buckets[b].0;
        let mut hits = 0u32;
        for (i, &e) in bucket[..LANES].iter().enumerate() {
            hits |= (((e & fp_mask) == fp) as u32) << i;
        }
        if (hits != 0 || !self.spill.is_empty())
            && let Some(tag) = self.find(nonce, hits, bucket)
        {
            return Seen::Again { tag };
        }
        Seen::New(self.insert(nonce, hash))
    }

    /// Remembers `nonce` (hashed to `hash`) as the next insertion.
    #[inline(always)]
    fn insert(&mut self, nonce: &[u8; N], hash: u64) -> Place {
        let b = (hash as usize) & self.bucket_mask;
        let fp = ((hash >> 32) as u32) << self.seq_bits;
        let bucket = &self.buckets[b].0;
        let seq = self.next;
        let now = seq as u32 & self.seq_mask;
        let head = bucket[LANES] as usize;
        let oldest = bucket[head];
        let age = now.wrapping_sub(oldest) & self.seq_mask;
        if !self.live(age) {
            let lanes = &mut self.buckets[b].0;
            lanes[head] = fp | now;
            lanes[LANES] = if head + 1 == LANES {
                0
            } else {
                head as u32 + 1
            };
        } else {
            self.spill_push(seq);
        }
        let slot = (seq & self.ring_mask) as usize;
        self.ring[slot] = *nonce;
        if let Some(t) = &mut self.tags {
            t[slot] = None;
        }
        self.next += 1;
        if !self.forgotten.is_empty() {
            self.prune_forgotten();
        }
        Place { seq }
    }

    /// The slow half of a lookup: ring compares for the bucket's candidates,
    /// then the spill list.
    #[cold]
    #[inline(never)]
    fn find(&self, nonce: &[u8; N], mut hits: u32, bucket: &[u32; WAYS]) -> Option<Option<Tag>> {
        let now = self.next as u32 & self.seq_mask;
        while hits != 0 {
            let e = bucket[hits.trailing_zeros() as usize];
            hits &= hits - 1;
            let age = now.wrapping_sub(e) & self.seq_mask;
            if !self.live(age) {
                continue;
            }
            let Some(seq) = self.next.checked_sub(age as u64) else {
                continue;
            };
            if let Some(tag) = self.matches(seq, nonce) {
                return Some(tag);
            }
        }
        self.spill.iter().find_map(|&seq| self.matches(seq, nonce))
    }

    #[cold]
    #[inline(never)]
    fn spill_push(&mut self, seq: u64) {
        // Those still in the ring once this insertion is counted.
        let (next, mask) = (self.next + 1, self.ring_mask);
        self.spill.retain(|&s| in_ring(next, s, mask));
        self.spill.push(seq);
    }

    #[cold]
    #[inline(never)]
    fn prune_forgotten(&mut self) {
        let (next, mask) = (self.next, self.ring_mask);
        self.forgotten.retain(|&s| in_ring(next, s, mask));
    }

    /// Records the tag sealed under the nonce at `p`, if it is still there.
    pub(crate) fn set_tag(&mut self, p: Place, tag: &Tag) {
        if self.holds(p.seq)
            && let Some(t) = &mut self.tags
        {
            t[(p.seq & self.ring_mask) as usize] = Some(*tag);
        }
    }

    /// Forgets the nonce at `p` (a seal that failed before any output).
    pub(crate) fn forget(&mut self, p: Place) {
        if self.holds(p.seq) {
            self.forgotten.push(p.seq);
        }
    }
}

/// Whether insertion number `seq` is among the last R (`mask` = R − 1) of the
/// `next` insertions so far.
#[inline]
fn in_ring(next: u64, seq: u64, mask: u64) -> bool {
    next.wrapping_sub(seq).wrapping_sub(1) <= mask
}

#[cfg(test)]
mod tests {
    /// The memory tally the tests pass (checked in the guard's tests).
    static TALLY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    use super::*;
    use std::collections::VecDeque;

    /// A nonce of N bytes: a fixed prefix, then `i`.
    fn n<const N: usize>(i: u64) -> [u8; N] {
        let mut b = [0xa5; N];
        b[N - 8..].copy_from_slice(&i.to_be_bytes());
        b
    }

    /// A deliberately bad hash: 5 buckets, one fingerprint, so every lookup
    /// compares against the ring and buckets overflow into the spill list.
    fn bad_hash(v: u64) -> u64 {
        v % 5
    }

    fn good_hash(v: u64) -> u64 {
        let mut z = v ^ 0x9e37_79b9_7f4a_7c15;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Against a model: a nonce is found exactly when it is among the last R
    /// (capacity rounded up to a power of two) nonces inserted.
    fn exact_against_model<const N: usize>(
        capacity: usize,
        domain: u64,
        steps: u32,
        hash: fn(u64) -> u64,
        never_spills: bool,
    ) {
        let r = capacity.next_power_of_two();
        let mut w = Window::<N>::new(capacity, false);
        let mut recent: VecDeque<u64> = VecDeque::new();
        let mut x = 0x1234_5678u64;
        for step in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % domain;
            let rehash = |b: &[u8; N]| hash(u64::from_be_bytes(b[N - 8..].try_into().unwrap()));
            let again = matches!(
                w.check_and_insert(&n::<N>(v), hash(v), &rehash, &TALLY),
                Seen::Again { .. }
            );
            assert_eq!(again, recent.contains(&v), "step {step}: {v}");
            if never_spills {
                // No bucket of a good hash fills up: stale entries are reused.
                assert!(w.spill.is_empty(), "step {step}: spilled");
            }
            if !again {
                if recent.len() == r {
                    recent.pop_front();
                }
                recent.push_back(v);
            }
        }
    }

    #[test]
    fn exact_with_a_bad_hash_spilling() {
        exact_against_model::<12>(64, 300, 200_000, bad_hash, false);
        exact_against_model::<8>(64, 300, 50_000, bad_hash, false);
        exact_against_model::<24>(64, 300, 50_000, bad_hash, false);
    }

    #[test]
    #[cfg_attr(
        debug_assertions,
        ignore = "16 s in a debug build: make test runs it in release (make check skips it)"
    )]
    fn exact_with_a_good_hash_past_many_wraps_of_the_entries_counter() {
        // 2^(log2 128 + 8) = 32768 insertions a wrap: a dozen wraps.
        exact_against_model::<12>(100, 2_000, 400_000, good_hash, true);
        exact_against_model::<12>(1024, 1 << 40, 300_000, good_hash, true);
        exact_against_model::<24>(1000, 5_000, 100_000, good_hash, true);
        // 200 values over 32 buckets: a bucket may go 256 R insertions with
        // fewer than 15 of its own, its oldest entry's age wraps and looks live,
        // and the nonce spills (needlessly, and still exactly).
        exact_against_model::<16>(64, 200, 100_000, good_hash, false);
    }

    #[test]
    fn tags_and_forgetting() {
        let mut w = Window::<12>::new(4, true);
        let Seen::New(p) = w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY) else {
            panic!()
        };
        assert_eq!(
            w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY),
            Seen::Again { tag: None }
        );
        w.set_tag(p, &[7; 16]);
        assert_eq!(
            w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY),
            Seen::Again { tag: Some([7; 16]) }
        );
        w.forget(p);
        let Seen::New(q) = w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY) else {
            panic!("a forgotten nonce may be sealed again")
        };
        assert_eq!(
            w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY),
            Seen::Again { tag: None }
        );
        // Out of the ring: tagging it does nothing, and it is new again.
        for i in 10..30 {
            w.check_and_insert(&n::<12>(i), i, &|_| i, &TALLY);
        }
        w.set_tag(q, &[9; 16]);
        assert!(matches!(
            w.check_and_insert(&n::<12>(1), 99, &|_| 99, &TALLY),
            Seen::New(_)
        ));
        assert!(w.forgotten.is_empty(), "pruned once overwritten");
    }

    #[test]
    fn growing_keeps_tags_withdrawals_and_places() {
        let hash = |v: u64| v.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let rehash = |b: &[u8; 12]| hash(u64::from_be_bytes(b[4..].try_into().unwrap()));
        let mut w = Window::<12>::new(256, true);
        assert_eq!(w.ring_len(), 0, "nothing before the first nonce");
        let mut places = Vec::new();
        for v in 0..200u64 {
            let Seen::New(p) = w.check_and_insert(&n::<12>(v), hash(v), &rehash, &TALLY) else {
                panic!("{v} is new")
            };
            places.push(p);
            if v % 3 == 0 {
                w.set_tag(p, &[v as u8; 16]);
            }
            if v % 7 == 1 {
                w.forget(p);
            }
        }
        assert_eq!(w.ring_len(), 256, "grew by doubling");
        // A ticket taken before a doubling and finished after still lands.
        w.set_tag(places[5], &[55; 16]);
        for v in 0..200u64 {
            let seen = w.check_and_insert(&n::<12>(v), hash(v), &rehash, &TALLY);
            let expect = match v {
                5 => Seen::Again {
                    tag: Some([55; 16]),
                },
                _ if v % 7 == 1 => {
                    assert!(matches!(seen, Seen::New(_)), "{v} was withdrawn");
                    continue;
                }
                _ if v % 3 == 0 => Seen::Again {
                    tag: Some([v as u8; 16]),
                },
                _ => Seen::Again { tag: None },
            };
            assert_eq!(seen, expect, "{v}");
        }
        assert!(matches!(
            w.check_and_insert(&n::<12>(1), hash(1), &rehash, &TALLY),
            Seen::Again { .. }
        ));
        w.check_and_insert(&n::<12>(1000), hash(1000), &rehash, &TALLY);
        let mut small = Window::<12>::new(4, false);
        small.check_and_insert(&n::<12>(0), hash(0), &rehash, &TALLY);
        assert_eq!(small.ring_len(), 4, "no bigger than R from the start");
        for v in 1..100 {
            small.check_and_insert(&n::<12>(v), hash(v), &rehash, &TALLY);
        }
        assert_eq!(small.ring_len(), 4);
        assert!(
            w.memory_bytes() >= 256 * (12 + 32),
            "the full window's buckets and ring"
        );
        assert_eq!(Window::<12>::new(1 << 20, true).memory_bytes(), 0);
        assert!(small.memory_bytes() <= 4 * (12 + 32 + 17) + 64);
    }

    #[test]
    fn a_zero_nonce_is_not_found_in_the_unwritten_ring() {
        let mut w = Window::<12>::new(1024, false);
        // Every entry starts with fingerprint 0; a hash with fingerprint 0
        // must still not match the ring's zeroed slots.
        assert!(matches!(
            w.check_and_insert(&[0; 12], 0, &|_| 0, &TALLY),
            Seen::New(_)
        ));
        assert!(matches!(
            w.check_and_insert(&[0; 12], 0, &|_| 0, &TALLY),
            Seen::Again { .. }
        ));
    }
}
