//! The exact window: at least the last `capacity` nonces a shard has seen, in
//! two generations of a SwissTable (hashbrown's `HashTable`, which matches a
//! group of 16 slots with one SIMD compare, so a probe rarely mispredicts).
//!
//! ```text
//!   older generation (full: capacity nonces)   current generation (filling)
//!   { a, b, c, d, e, ... }                      { f, g, ... }
//! ```
//!
//! Nonces go into the current generation; when it holds `capacity`, the older
//! one is cleared (its allocation kept) and becomes current. A lookup checks
//! both, so every nonce among the last `capacity` insertions (and some older
//! ones) is found. Nothing is deleted one by one, nothing is allocated after
//! construction, and everything remembered was really sealed, so remembering
//! more than `capacity` never makes a false positive.
//!
//! Measured before choosing it (10M random 96-bit nonces into a 1024 window,
//! one thread, this machine): 20.4 ns a nonce with our own linear-probing
//! tables (mispredicted probe branches), 6.2 ns with this. Each generation
//! also keeps a 16-bits-a-nonce filter (2 KB for 1024, in L1): a clear bit
//! means "not here", so a fresh nonce usually probes neither table before its
//! insert (the window row of `nonceforge bench` at 64 B: +22 → +19 ns a seal).

use super::Tag;
use hashbrown::HashTable;

/// Where a nonce was put: generation and index within it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    epoch: u64,
    index: u32,
}

/// What the window knows of a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Not remembered; it is now (at this place).
    New(Place),
    /// Remembered, with the tag of its first message if one was recorded.
    Again { tag: Option<Tag> },
}

struct Generation<const N: usize> {
    /// (nonce, index in this generation; u32::MAX once forgotten).
    table: HashTable<([u8; N], u32)>,
    epoch: u64,
    /// Tags by index, when identical messages may be sealed again.
    tags: Option<Box<[Option<Tag>]>>,
    /// One bit per hash bucket of 16 × capacity: clear means "not in this
    /// generation", so most fresh nonces skip a probe of the (larger) table.
    filter: Box<[u64]>,
}

impl<const N: usize> Generation<N> {
    #[inline(always)]
    fn filter_bit(&self, hash: u64) -> (usize, u64) {
        // Bits of the hash that hashbrown's bucket index and tag do not use.
        let b = (hash >> 20) as usize & (self.filter.len() * 64 - 1);
        (b / 64, 1 << (b % 64))
    }

    #[inline(always)]
    fn may_hold(&self, hash: u64) -> bool {
        let (w, b) = self.filter_bit(hash);
        self.filter[w] & b != 0
    }
}

/// One shard's window of nonces of `N` bytes.
pub(crate) struct Window<const N: usize> {
    generations: [Generation<N>; 2],
    current: usize,
    count: usize,
    capacity: usize,
    epochs: u64,
}

/// Forgotten entries keep their slot (so nothing moves) but match no nonce.
const FORGOTTEN: u32 = u32::MAX;

impl<const N: usize> Window<N> {
    pub(crate) fn new(capacity: usize, keep_tags: bool) -> Self {
        let capacity = capacity.max(1);
        let filter_words = (capacity * 16).next_power_of_two().div_ceil(64);
        let generation = |epoch| Generation {
            table: HashTable::with_capacity(capacity),
            epoch,
            tags: keep_tags.then(|| vec![None; capacity].into_boxed_slice()),
            filter: vec![0u64; filter_words].into_boxed_slice(),
        };
        Window {
            generations: [generation(1), generation(0)],
            current: 0,
            count: 0,
            capacity,
            epochs: 1,
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.generations
            .iter()
            .map(|g| {
                // Slots plus one control byte each (hashbrown's layout).
                g.table.capacity().next_power_of_two() * (size_of::<([u8; N], u32)>() + 1)
                    + g.tags.as_ref().map_or(0, |t| size_of_val(&**t))
                    + size_of_val(&*g.filter)
            })
            .sum()
    }

    #[inline]
    fn lookup(&self, g: usize, nonce: &[u8; N], hash: u64) -> Option<Option<Tag>> {
        let gen_ = &self.generations[g];
        if !gen_.may_hold(hash) {
            return None;
        }
        gen_.table
            .find(hash, |(n, i)| *i != FORGOTTEN && n == nonce)
            .map(|&(_, i)| gen_.tags.as_ref().and_then(|t| t[i as usize]))
    }

    /// Looks `nonce` up and remembers it if it is new. `rehash` gives a stored
    /// nonce's hash (only needed if the table had to grow, which it never does:
    /// it is made with room for `capacity`).
    #[inline(always)]
    pub(crate) fn check_and_insert(
        &mut self,
        nonce: &[u8; N],
        hash: u64,
        rehash: impl Fn(&[u8; N]) -> u64,
    ) -> Seen {
        if self.count == self.capacity {
            // The older generation is at least `capacity` insertions old.
            let older = 1 - self.current;
            self.epochs += 1;
            let g = &mut self.generations[older];
            g.table.clear();
            g.filter.fill(0);
            g.epoch = self.epochs;
            if let Some(t) = &mut g.tags {
                t.fill(None);
            }
            (self.current, self.count) = (older, 0);
        }
        if let Some(tag) = self.lookup(1 - self.current, nonce, hash) {
            return Seen::Again { tag };
        }
        if let Some(tag) = self.lookup(self.current, nonce, hash) {
            return Seen::Again { tag };
        }
        let index = self.count as u32;
        let g = &mut self.generations[self.current];
        g.table
            .insert_unique(hash, (*nonce, index), |(n, _)| rehash(n));
        let (w, b) = g.filter_bit(hash);
        g.filter[w] |= b;
        self.count += 1;
        Seen::New(Place {
            epoch: g.epoch,
            index,
        })
    }

    fn generation_of(&mut self, p: Place) -> Option<&mut Generation<N>> {
        self.generations.iter_mut().find(|g| g.epoch == p.epoch)
    }

    /// Records the tag sealed under the nonce at `p`, if it is still there.
    pub(crate) fn set_tag(&mut self, p: Place, tag: &Tag) {
        if let Some(g) = self.generation_of(p)
            && let Some(t) = &mut g.tags
        {
            t[p.index as usize] = Some(*tag);
        }
    }

    /// Forgets the nonce at `p` (a seal that failed before any output).
    pub(crate) fn forget(&mut self, p: Place, nonce: &[u8; N], hash: u64) {
        if let Some(g) = self.generation_of(p)
            && let Some(e) = g.table.find_mut(hash, |(n, i)| *i == p.index && n == nonce)
        {
            e.1 = FORGOTTEN;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn n(i: u64) -> [u8; 12] {
        let mut b = [0; 12];
        b[4..].copy_from_slice(&i.to_be_bytes());
        b
    }

    /// A deliberately bad hash (few distinct values) makes long probe runs.
    fn bad_hash(b: &[u8; 12]) -> u64 {
        let v = u64::from_be_bytes(b[4..].try_into().unwrap());
        ((v % 7) << 57) | (v % 5)
    }

    #[test]
    fn remembers_at_least_the_last_capacity_and_only_what_was_inserted() {
        let mut w = Window::<12>::new(64, false);
        let mut recent: VecDeque<u64> = VecDeque::new();
        let mut ever = std::collections::HashSet::new();
        let mut x = 0x1234_5678u64;
        for step in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 300;
            let seen = w.check_and_insert(&n(v), bad_hash(&n(v)), bad_hash);
            let is_again = matches!(seen, Seen::Again { .. });
            if recent.contains(&v) {
                assert!(is_again, "step {step}: {v} is among the last 64");
            }
            if is_again {
                assert!(ever.contains(&v), "step {step}: {v} was never inserted");
            } else {
                ever.insert(v);
                if recent.len() == 64 {
                    recent.pop_front();
                }
                recent.push_back(v);
            }
        }
    }

    #[test]
    fn tags_and_forgetting() {
        let mut w = Window::<12>::new(4, true);
        let Seen::New(p) = w.check_and_insert(&n(1), 99, bad_hash) else {
            panic!()
        };
        assert_eq!(
            w.check_and_insert(&n(1), 99, bad_hash),
            Seen::Again { tag: None }
        );
        w.set_tag(p, &[7; 16]);
        assert_eq!(
            w.check_and_insert(&n(1), 99, bad_hash),
            Seen::Again { tag: Some([7; 16]) }
        );
        w.forget(p, &n(1), 99);
        assert!(matches!(
            w.check_and_insert(&n(1), 99, bad_hash),
            Seen::New(_)
        ));
        // A place from a cleared generation is stale: tagging it does nothing.
        for i in 10..30 {
            w.check_and_insert(&n(i), i, bad_hash);
        }
        w.set_tag(p, &[9; 16]);
    }
}
