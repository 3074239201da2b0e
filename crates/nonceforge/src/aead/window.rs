//! The exact window: the last `capacity` nonces a shard has seen, in a ring
//! (oldest evicted first) with an open-addressing index over it, so a lookup is
//! one hash and a short probe and nothing is allocated after construction.
//!
//! ```text
//!  ring (FIFO, capacity C)      index (2C..4C slots, linear probing)
//!  +----+----+----+----+        +---+---+---+---+---+---+---+---+
//!  | n7 | n8 | n5 | n6 |  <---  | 2 | - | 0 | 3 | - | 1 | - | - |
//!  +----+----+----+----+        +---+---+---+---+---+---+---+---+
//!          head ^ (next evicted)   slot = hash(nonce) & mask
//! ```
//!
//! Removal uses backward-shift deletion, so the index never fills with
//! tombstones and probes stay short however long the window runs.

use super::Tag;

const EMPTY: u32 = u32::MAX;

/// What the window knows of a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Not among the remembered nonces; it is now (at `position`).
    New { position: u32 },
    /// Remembered, with the tag of its first message if one was recorded.
    Again { tag: Option<Tag> },
}

#[derive(Clone, Copy)]
struct Entry<const N: usize> {
    nonce: [u8; N],
    hash: u64,
    tag: Tag,
    has_tag: bool,
    live: bool,
}

/// One shard's window of nonces of `N` bytes.
pub(crate) struct Window<const N: usize> {
    ring: Box<[Entry<N>]>,
    /// The next ring position to write (and, once full, the oldest entry).
    head: usize,
    index: Box<[u32]>,
    mask: usize,
}

impl<const N: usize> Window<N> {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let slots = (capacity * 2).next_power_of_two();
        let blank = Entry {
            nonce: [0; N],
            hash: 0,
            tag: [0; 16],
            has_tag: false,
            live: false,
        };
        Window {
            ring: vec![blank; capacity].into_boxed_slice(),
            head: 0,
            index: vec![EMPTY; slots].into_boxed_slice(),
            mask: slots - 1,
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        size_of_val(&*self.ring) + size_of_val(&*self.index)
    }

    /// Looks `nonce` up and remembers it if it is new (evicting the oldest).
    pub(crate) fn check_and_insert(&mut self, nonce: &[u8; N], hash: u64) -> Seen {
        if let Some(slot) = self.find(nonce, hash) {
            let e = &self.ring[self.index[slot] as usize];
            return Seen::Again {
                tag: e.has_tag.then_some(e.tag),
            };
        }
        let position = self.head;
        if self.ring[position].live {
            let old_hash = self.ring[position].hash;
            let old_nonce = self.ring[position].nonce;
            let slot = self
                .find(&old_nonce, old_hash)
                .expect("a live entry is indexed");
            self.unindex(slot);
        }
        self.ring[position] = Entry {
            nonce: *nonce,
            hash,
            tag: [0; 16],
            has_tag: false,
            live: true,
        };
        let mut slot = hash as usize & self.mask;
        while self.index[slot] != EMPTY {
            slot = (slot + 1) & self.mask;
        }
        self.index[slot] = position as u32;
        self.head = (position + 1) % self.ring.len();
        Seen::New {
            position: position as u32,
        }
    }

    /// Records the tag of the message sealed under the nonce at `position`, if
    /// that entry still holds `nonce` (it may have been evicted meanwhile).
    pub(crate) fn set_tag(&mut self, position: u32, nonce: &[u8; N], tag: &Tag) {
        let e = &mut self.ring[position as usize];
        if e.live && e.nonce == *nonce {
            e.tag = *tag;
            e.has_tag = true;
        }
    }

    /// Forgets the nonce at `position` (a seal that failed before any output).
    pub(crate) fn forget(&mut self, position: u32, nonce: &[u8; N]) {
        let e = self.ring[position as usize];
        if e.live
            && e.nonce == *nonce
            && let Some(slot) = self.find(nonce, e.hash)
        {
            self.unindex(slot);
            self.ring[position as usize].live = false;
        }
    }

    fn find(&self, nonce: &[u8; N], hash: u64) -> Option<usize> {
        let mut slot = hash as usize & self.mask;
        loop {
            let i = self.index[slot];
            if i == EMPTY {
                return None;
            }
            let e = &self.ring[i as usize];
            if e.hash == hash && e.nonce == *nonce {
                return Some(slot);
            }
            slot = (slot + 1) & self.mask;
        }
    }

    /// Backward-shift deletion: pulls later entries of the probe run into the
    /// hole so every entry stays reachable from its home slot.
    fn unindex(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let i = self.index[j];
            if i == EMPTY {
                break;
            }
            let home = self.ring[i as usize].hash as usize & self.mask;
            // Move j into the hole unless its home lies cyclically in (hole, j].
            let home_in_between = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !home_in_between {
                self.index[hole] = i;
                hole = j;
            }
        }
        self.index[hole] = EMPTY;
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
    fn remembers_exactly_the_last_capacity_nonces() {
        // A deliberately bad hash (few distinct values) makes long probe runs,
        // so backward-shift deletion is exercised; a model checks every answer.
        let mut w = Window::<12>::new(64);
        let mut model: VecDeque<u64> = VecDeque::new();
        let mut x = 0x1234_5678u64;
        for step in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x % 300;
            let hash = v % 7;
            let seen = w.check_and_insert(&n(v), hash);
            let in_model = model.contains(&v);
            assert_eq!(
                matches!(seen, Seen::Again { .. }),
                in_model,
                "step {step} v {v}"
            );
            if !in_model {
                if model.len() == 64 {
                    model.pop_front();
                }
                model.push_back(v);
            }
        }
    }

    #[test]
    fn tags_and_forgetting() {
        let mut w = Window::<12>::new(4);
        let Seen::New { position } = w.check_and_insert(&n(1), 99) else {
            panic!()
        };
        assert_eq!(w.check_and_insert(&n(1), 99), Seen::Again { tag: None });
        w.set_tag(position, &n(1), &[7; 16]);
        assert_eq!(
            w.check_and_insert(&n(1), 99),
            Seen::Again { tag: Some([7; 16]) }
        );
        w.forget(position, &n(1));
        assert!(matches!(w.check_and_insert(&n(1), 99), Seen::New { .. }));
    }
}
