//! The exact window: at least the last `capacity` nonces a shard has seen, in
//! two generations of an open-addressing table.
//!
//! ```text
//!   older table (full, capacity nonces)     current table (filling)
//!   +---+---+---+---+---+---+---+---+       +---+---+---+---+---+---+---+---+
//!   | a | - | b | c | - | d | - | e |       | f | - | - | g | - | - | - | - |
//!   +---+---+---+---+---+---+---+---+       +---+---+---+---+---+---+---+---+
//!   slot = hash & mask, linear probing; each table at most half full
//! ```
//!
//! Nonces go into the current table; when it holds `capacity`, the older table
//! is cleared and becomes current. A lookup checks both, so every nonce among
//! the last `capacity` insertions (and some older ones) is found. Nothing is
//! ever deleted from a table — no tombstones, no backward shifts, no ring — and
//! everything remembered was really sealed, so remembering more than
//! `capacity` never makes a false positive. Clearing a table costs a memset of
//! its slots once per `capacity` insertions.

use super::Tag;

#[derive(Clone, Copy)]
struct Slot<const N: usize> {
    /// 0: empty; else 1 << 31 | 31 bits of the keyed hash.
    meta: u32,
    nonce: [u8; N],
}

const EMPTY_SLOT: u32 = 0;

/// Where a nonce was put: table and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    table: u8,
    slot: u32,
}

/// What the window knows of a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Not remembered; it is now (at this place).
    New(Place),
    /// Remembered, with the tag of its first message if one was recorded.
    Again { tag: Option<Tag> },
}

struct Table<const N: usize> {
    slots: Box<[Slot<N>]>,
    /// Tags by slot, when identical messages may be sealed again.
    tags: Option<(Box<[Tag]>, Box<[bool]>)>,
}

/// One shard's window of nonces of `N` bytes.
pub(crate) struct Window<const N: usize> {
    tables: [Table<N>; 2],
    current: usize,
    count: usize,
    capacity: usize,
    mask: usize,
}

impl<const N: usize> Window<N> {
    pub(crate) fn new(capacity: usize, keep_tags: bool) -> Self {
        let capacity = capacity.max(1);
        let slots = (capacity * 2).next_power_of_two();
        let table = || Table {
            slots: vec![
                Slot {
                    meta: EMPTY_SLOT,
                    nonce: [0; N]
                };
                slots
            ]
            .into_boxed_slice(),
            tags: keep_tags.then(|| {
                (
                    vec![[0u8; 16]; slots].into_boxed_slice(),
                    vec![false; slots].into_boxed_slice(),
                )
            }),
        };
        Window {
            tables: [table(), table()],
            current: 0,
            count: 0,
            capacity,
            mask: slots - 1,
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| {
                size_of_val(&*t.slots)
                    + t.tags
                        .as_ref()
                        .map_or(0, |(tags, set)| size_of_val(&**tags) + size_of_val(&**set))
            })
            .sum()
    }

    #[inline]
    fn meta(hash: u64) -> u32 {
        (hash >> 33) as u32 | 1 << 31
    }

    /// The slot holding `nonce` in table `t` (Ok), or the empty slot where it
    /// would go (Err).
    #[inline]
    fn find(&self, t: usize, nonce: &[u8; N], hash: u64) -> Result<usize, usize> {
        let (slots, meta) = (&self.tables[t].slots, Self::meta(hash));
        let mut i = hash as usize & self.mask;
        loop {
            let s = &slots[i];
            if s.meta == EMPTY_SLOT {
                return Err(i);
            }
            if s.meta == meta && s.nonce == *nonce {
                return Ok(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    fn tag_of(&self, t: usize, i: usize) -> Option<Tag> {
        self.tables[t]
            .tags
            .as_ref()
            .and_then(|(tags, set)| set[i].then_some(tags[i]))
    }

    /// Looks `nonce` up and remembers it if it is new.
    #[inline]
    pub(crate) fn check_and_insert(&mut self, nonce: &[u8; N], hash: u64) -> Seen {
        let older = 1 - self.current;
        if let Ok(i) = self.find(older, nonce, hash) {
            return Seen::Again {
                tag: self.tag_of(older, i),
            };
        }
        let mut slot = match self.find(self.current, nonce, hash) {
            Ok(i) => {
                return Seen::Again {
                    tag: self.tag_of(self.current, i),
                };
            }
            Err(i) => i,
        };
        if self.count == self.capacity {
            // The older generation is at least `capacity` insertions old.
            let t = &mut self.tables[older];
            t.slots.fill(Slot {
                meta: EMPTY_SLOT,
                nonce: [0; N],
            });
            if let Some((_, set)) = &mut t.tags {
                set.fill(false);
            }
            (self.current, self.count) = (older, 0);
            slot = self
                .find(older, nonce, hash)
                .expect_err("a cleared table holds nothing");
        }
        self.tables[self.current].slots[slot] = Slot {
            meta: Self::meta(hash),
            nonce: *nonce,
        };
        self.count += 1;
        Seen::New(Place {
            table: self.current as u8,
            slot: slot as u32,
        })
    }

    fn holds(&self, p: Place, nonce: &[u8; N]) -> bool {
        let s = &self.tables[p.table as usize].slots[p.slot as usize];
        s.meta != EMPTY_SLOT && s.nonce == *nonce
    }

    /// Records the tag sealed under the nonce at `p`, if it is still there.
    pub(crate) fn set_tag(&mut self, p: Place, nonce: &[u8; N], tag: &Tag) {
        if !self.holds(p, nonce) {
            return;
        }
        if let Some((tags, set)) = &mut self.tables[p.table as usize].tags {
            tags[p.slot as usize] = *tag;
            set[p.slot as usize] = true;
        }
    }

    /// Forgets the nonce at `p` (a seal that failed before any output). The
    /// slot keeps a marker that matches no nonce, so probe chains stay intact.
    pub(crate) fn forget(&mut self, p: Place, nonce: &[u8; N]) {
        if self.holds(p, nonce) {
            let s = &mut self.tables[p.table as usize].slots[p.slot as usize];
            // A meta value `meta()` never produces (its top bit is always set).
            s.meta = 1;
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

    #[test]
    fn remembers_at_least_the_last_capacity_and_only_what_was_inserted() {
        // A deliberately bad hash (few distinct values) makes long probe runs;
        // a model of the last 64 insertions checks every answer.
        let mut w = Window::<12>::new(64, false);
        let mut recent: VecDeque<u64> = VecDeque::new();
        let mut ever = std::collections::HashSet::new();
        let mut x = 0x1234_5678u64;
        for step in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 300;
            let hash = (v % 7) << 33 | v % 5;
            let seen = w.check_and_insert(&n(v), hash);
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
        let Seen::New(p) = w.check_and_insert(&n(1), 99) else {
            panic!()
        };
        assert_eq!(w.check_and_insert(&n(1), 99), Seen::Again { tag: None });
        w.set_tag(p, &n(1), &[7; 16]);
        assert_eq!(
            w.check_and_insert(&n(1), 99),
            Seen::Again { tag: Some([7; 16]) }
        );
        w.forget(p, &n(1));
        assert!(matches!(w.check_and_insert(&n(1), 99), Seen::New(_)));
    }
}
