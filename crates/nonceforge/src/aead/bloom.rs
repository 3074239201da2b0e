//! The optional long tail: a Bloom filter over every nonce the window path has
//! seen, lock-free (bits are set with `fetch_or`). A hit is only *suspected*
//! reuse: its false-positive rate is the one it was sized for, at `n` nonces.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) struct Bloom {
    bits: Box<[AtomicU64]>,
    /// Number of bits (a power of two).
    mask: u64,
    hashes: u32,
}

impl Bloom {
    /// Sized for `n` items at false-positive rate `p`: m = -n ln p / ln² 2 bits
    /// (rounded up to a power of two), k = m/n · ln 2 hashes.
    pub(crate) fn new(n: u64, p: f64) -> Self {
        let ln2 = std::f64::consts::LN_2;
        let m = (-(n as f64) * p.ln() / (ln2 * ln2)).ceil().max(64.0) as u64;
        let m = m.next_power_of_two();
        let k = ((m as f64 / n as f64) * ln2).round().clamp(1.0, 32.0) as u32;
        Bloom {
            bits: (0..m / 64).map(|_| AtomicU64::new(0)).collect(),
            mask: m - 1,
            hashes: k,
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        size_of_val(&*self.bits)
    }

    /// Whether every bit of `(h1, h2)` was set (probably seen); sets them all.
    pub(crate) fn check_and_insert(&self, h1: u64, h2: u64) -> bool {
        let mut all = true;
        // Double hashing (Kirsch–Mitzenmacher): g_i = h1 + i·h2.
        let h2 = h2 | 1;
        for i in 0..self.hashes as u64 {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) & self.mask;
            let (w, b) = ((bit / 64) as usize, 1u64 << (bit % 64));
            all &= self.bits[w].fetch_or(b, Ordering::Relaxed) & b != 0;
        }
        all
    }

    #[cfg(test)]
    fn contains(&self, h1: u64, h2: u64) -> bool {
        let h2 = h2 | 1;
        (0..self.hashes as u64).all(|i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) & self.mask;
            self.bits[(bit / 64) as usize].load(Ordering::Relaxed) & (1 << (bit % 64)) != 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn false_positive_rate_is_near_the_stated_one() {
        let b = Bloom::new(100_000, 0.01);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..100_000 {
            let (a, c) = (next(), next());
            b.check_and_insert(a, c);
        }
        let mut hits = 0;
        for _ in 0..100_000 {
            if b.contains(next(), next()) {
                hits += 1;
            }
        }
        // Sized for 1 % at 100,000 (the power-of-two rounding only lowers it).
        assert!(hits < 1_300, "{hits} false positives in 100,000");
        // Everything inserted is found.
        let b = Bloom::new(1000, 0.001);
        for i in 0..1000u64 {
            b.check_and_insert(i, i * 7);
        }
        assert!((0..1000u64).all(|i| b.check_and_insert(i, i * 7)));
    }
}
