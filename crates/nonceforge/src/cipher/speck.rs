//! Speck64/128 and Speck96/144 (Beaulieu et al., "The Simon and Speck Families of
//! Lightweight Block Ciphers", 2013), with a multi-block path.
//!
//! Written here rather than taken from the `speck-cipher` crate because the crate
//! encrypts one block at a time through byte buffers: through it a 96-bit
//! encrypted nonce fell below the 30 M/s goal (bench/RESULTS.md, "The
//! measurements behind the code").
//! A round is a chain of dependent add-rotate-xor steps, so the speed comes from
//! running several independent blocks side by side ([`Speck96::encrypt_lanes`]).
//! The crate stays as the reference the tests compare against, with the designers'
//! published vectors.
//!
//! Words are big-endian and the first word of a block is `x`, as in the paper's
//! vectors; round keys are wiped on drop.

use zeroize::Zeroize;

/// Lanes encrypted side by side in the multi-block path.
pub const LANES: usize = 8;

macro_rules! speck {
    ($name:ident, $word:ty, $n:literal, $m:literal, $rounds:literal, $doc:literal) => {
        #[doc = $doc]
        pub(crate) struct $name {
            rk: [$word; $rounds],
            /// AVX-512 found at run time: the lanes run as one vector.
            avx512: bool,
        }

        impl $name {
            const MASK: $word = (((1u128 << $n) - 1) as $word);
            /// Bytes in a word.
            const WORD: usize = $n / 8;

            #[inline(always)]
            fn ror(x: $word, r: u32) -> $word {
                ((x >> r) | (x << ($n - r))) & Self::MASK
            }

            #[inline(always)]
            fn rol(x: $word, r: u32) -> $word {
                ((x << r) | (x >> ($n - r))) & Self::MASK
            }

            #[inline(always)]
            fn word(bytes: &[u8]) -> $word {
                bytes.iter().fold(0, |w, &b| (w << 8) | b as $word)
            }

            #[inline(always)]
            fn put(word: $word, out: &mut [u8]) {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = (word >> (8 * (Self::WORD - 1 - i))) as u8;
                }
            }

            /// Expands a key of `KEY` bytes.
            pub(crate) fn new(key: &[u8; $m * $n / 8]) -> Self {
                let w = Self::WORD;
                // Key words as printed: l[m-2] .. l[0], k[0].
                let mut k = Self::word(&key[($m - 1) * w..]);
                let mut l = [0 as $word; $m - 1 + $rounds];
                for i in 0..$m - 1 {
                    l[i] = Self::word(&key[($m - 2 - i) * w..($m - 1 - i) * w]);
                }
                let mut rk = [0 as $word; $rounds];
                for i in 0..$rounds {
                    rk[i] = k;
                    if i + 1 < $rounds {
                        l[i + $m - 1] =
                            (k.wrapping_add(Self::ror(l[i], 8)) & Self::MASK) ^ i as $word;
                        k = Self::rol(k, 3) ^ l[i + $m - 1];
                    }
                }
                l.zeroize();
                k.zeroize();
                $name {
                    rk,
                    avx512: avx512(),
                }
            }

            /// Encrypts the words (x, y) of one block.
            #[inline(always)]
            pub(crate) fn encrypt_words(&self, mut x: $word, mut y: $word) -> ($word, $word) {
                for &k in &self.rk {
                    x = (Self::ror(x, 8).wrapping_add(y) & Self::MASK) ^ k;
                    y = Self::rol(y, 3) ^ x;
                }
                (x, y)
            }

            /// Decrypts the words (x, y) of one block.
            pub(crate) fn decrypt_words(&self, mut x: $word, mut y: $word) -> ($word, $word) {
                for &k in self.rk.iter().rev() {
                    y = Self::ror(y ^ x, 3);
                    x = Self::rol((x ^ k).wrapping_sub(y) & Self::MASK, 8);
                }
                (x, y)
            }

            /// Encrypts `LANES` blocks side by side: the rounds of different
            /// blocks are independent, so the CPU runs them in parallel, and with
            /// AVX-512 as one 8-lane vector.
            #[inline]
            pub(crate) fn encrypt_lanes(&self, x: &mut [$word; LANES], y: &mut [$word; LANES]) {
                #[cfg(target_arch = "x86_64")]
                if self.avx512 {
                    // SAFETY: `avx512` is true only where the CPU reported AVX-512F
                    // and AVX-512VL at run time (see `avx512()`).
                    return unsafe { self.encrypt_lanes_avx512(x, y) };
                }
                self.encrypt_lanes_portable(x, y)
            }

            /// The same code, compiled for AVX-512 (the compiler vectorizes the lanes).
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512vl")]
            fn encrypt_lanes_avx512(&self, x: &mut [$word; LANES], y: &mut [$word; LANES]) {
                self.encrypt_lanes_portable(x, y)
            }

            #[inline(always)]
            fn encrypt_lanes_portable(&self, x: &mut [$word; LANES], y: &mut [$word; LANES]) {
                for &k in &self.rk {
                    for i in 0..LANES {
                        x[i] = (Self::ror(x[i], 8).wrapping_add(y[i]) & Self::MASK) ^ k;
                        y[i] = Self::rol(y[i], 3) ^ x[i];
                    }
                }
            }

            /// Encrypts one block in place.
            pub(crate) fn encrypt_block(&self, block: &mut [u8; $n / 4]) {
                let (x, y) = self.encrypt_words(
                    Self::word(&block[..Self::WORD]),
                    Self::word(&block[Self::WORD..]),
                );
                Self::put(x, &mut block[..Self::WORD]);
                Self::put(y, &mut block[Self::WORD..]);
            }

            /// Decrypts one block in place.
            pub(crate) fn decrypt_block(&self, block: &mut [u8; $n / 4]) {
                let (x, y) = self.decrypt_words(
                    Self::word(&block[..Self::WORD]),
                    Self::word(&block[Self::WORD..]),
                );
                Self::put(x, &mut block[..Self::WORD]);
                Self::put(y, &mut block[Self::WORD..]);
            }

            /// Encrypts many blocks in place, `LANES` at a time.
            pub(crate) fn encrypt_blocks(&self, blocks: &mut [[u8; $n / 4]]) {
                let mut chunks = blocks.chunks_exact_mut(LANES);
                for chunk in &mut chunks {
                    let (mut x, mut y) = ([0 as $word; LANES], [0 as $word; LANES]);
                    for (i, b) in chunk.iter().enumerate() {
                        x[i] = Self::word(&b[..Self::WORD]);
                        y[i] = Self::word(&b[Self::WORD..]);
                    }
                    self.encrypt_lanes(&mut x, &mut y);
                    for (i, b) in chunk.iter_mut().enumerate() {
                        Self::put(x[i], &mut b[..Self::WORD]);
                        Self::put(y[i], &mut b[Self::WORD..]);
                    }
                }
                for b in chunks.into_remainder() {
                    self.encrypt_block(b);
                }
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                self.rk.zeroize();
            }
        }
    };
}

/// Whether the CPU has AVX-512F and AVX-512VL (checked once per key schedule;
/// never when built with `--cfg nonceforge_portable`).
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !cfg!(nonceforge_portable)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

speck!(
    Speck64,
    u32,
    32,
    4,
    27,
    "Speck64/128: 32-bit words, 4-word key, 27 rounds."
);
speck!(
    Speck96,
    u64,
    48,
    3,
    29,
    "Speck96/144: 48-bit words, 3-word key, 29 rounds."
);

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{BlockCipherEncrypt, KeyInit};
    use proptest::prelude::*;

    proptest! {
        /// The vector path (where the CPU has one) and the portable path agree.
        #[test]
        fn lane_paths_agree(k64: [u8; 16], k96: [u8; 18], x in proptest::array::uniform8(0u64..1 << 48), y in proptest::array::uniform8(0u64..1 << 48)) {
            let c = Speck96::new(&k96);
            let (mut a, mut b) = (x, y);
            let (mut p, mut q) = (x, y);
            c.encrypt_lanes(&mut a, &mut b);
            c.encrypt_lanes_portable(&mut p, &mut q);
            prop_assert_eq!((a, b), (p, q));
            let c = Speck64::new(&k64);
            let (x, y) = (x.map(|v| v as u32), y.map(|v| v as u32));
            let (mut a, mut b) = (x, y);
            let (mut p, mut q) = (x, y);
            c.encrypt_lanes(&mut a, &mut b);
            c.encrypt_lanes_portable(&mut p, &mut q);
            prop_assert_eq!((a, b), (p, q));
        }

        /// The same answers as the `speck-cipher` crate, one block and many.
        #[test]
        fn agrees_with_the_speck_cipher_crate(k64: [u8; 16], k96: [u8; 18], b8: [[u8; 8]; 11], b12: [[u8; 12]; 11]) {
            // Ours, one block and many, against the crate's, one block at a time.
            macro_rules! check {
                ($ours:expr, $theirs:expr, $blocks:expr) => {
                    let (ours, theirs, blocks) = ($ours, $theirs, $blocks);
                    let mut many = blocks;
                    ours.encrypt_blocks(&mut many);
                    for (b, m) in blocks.iter().zip(&many) {
                        let mut t = *b;
                        theirs.encrypt_block((&mut t).into());
                        prop_assert_eq!(&t, m);
                        let mut d = *m;
                        ours.decrypt_block(&mut d);
                        prop_assert_eq!(&d, b);
                    }
                };
            }
            check!(Speck64::new(&k64), speck_cipher::Speck64_128::new(&k64.into()), b8);
            check!(Speck96::new(&k96), speck_cipher::Speck96_144::new(&k96.into()), b12);
        }
    }
}
