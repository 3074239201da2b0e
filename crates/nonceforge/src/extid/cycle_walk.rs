//! `cycle-walk`: AES-128 restricted to blocks whose first bit is clear
//! (Black and Rogaway, "Ciphers with Arbitrary Finite Domains", 2002).
//!
//! Encrypting re-applies AES-128 until the result's top bit is clear; decrypting
//! walks back the same way. On the set S of blocks with the top bit clear this is
//! a permutation: every input in S comes back, and the output is always in S
//! (so the first half of an id, read as a big-endian i64, is never negative).
//! Half of all blocks are in S, so a walk takes 2 AES calls on average, and more
//! than k with probability 2^-k.

use super::aes128::Aes128Key;

/// Whether a block is in the walk's domain (top bit clear).
#[inline(always)]
pub(crate) fn in_domain(block: &[u8; 16]) -> bool {
    block[0] & 0x80 == 0
}

/// Encrypts a block in the domain.
#[inline]
pub(crate) fn encrypt(key: &Aes128Key, block: [u8; 16]) -> [u8; 16] {
    debug_assert!(in_domain(&block));
    let mut c = key.encrypt(block);
    while !in_domain(&c) {
        c = key.encrypt(c);
    }
    c
}

/// Decrypts a block in the domain.
#[inline]
pub(crate) fn decrypt(key: &Aes128Key, block: [u8; 16]) -> [u8; 16] {
    debug_assert!(in_domain(&block));
    let mut p = key.decrypt(block);
    while !in_domain(&p) {
        p = key.decrypt(p);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn walks_stay_in_the_domain_and_come_back(key: [u8; 16], mut block: [u8; 16]) {
            block[0] &= 0x7f;
            let k = Aes128Key::new(&key);
            let c = encrypt(&k, block);
            prop_assert!(in_domain(&c));
            prop_assert_eq!(decrypt(&k, c), block);
        }
    }
}
