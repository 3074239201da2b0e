//! `feistel-uuid`: a Feistel network with AES-128 as round function, placed so
//! that its output is a valid RFC 9562 UUID.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          L[59..28]                            |  octets 0-3
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           L[27..12]           |  ver  |       L[11..0]        |  octets 4-7
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |var|                     R[61..32]                             |  octets 8-11
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          R[31..0]                             |  octets 12-15
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! `ver` is 8 (`1000`, RFC 9562 §5.8, the default) or 4 (`0100`, §5.4, by option);
//! `var` is `10`. Fields are big-endian, as RFC 9562 writes them. L is the 60-bit
//! half made from the sequence number, R the 62-bit half made from the random
//! number.
//!
//! With the key version in band (the default) the top 4 bits of L carry the key
//! version, whitened with the low 4 bits of R (`v ^ R[3..0]`, so ids of one
//! version do not all begin with the same hex digit); the network then runs over
//! a 56-bit L. Out of band, it runs over all 60 bits.
//!
//! Rounds, with `F_k(x)` = the first 8 bytes of AES-128_k(x as 8 little-endian
//! bytes ‖ 8 zero bytes), read little-endian:
//!
//! ```text
//!   2 rounds:  L ^= F_k1(R) mod 2^|L|;  R ^= F_k2(L) mod 2^62
//!   4 rounds:  … then  L ^= F_k3(R);  R ^= F_k4(L)      (decoding runs them backwards)
//! ```

use super::aes128::Aes128Key;

/// The low 62 bits: the R half.
pub(crate) const R_BITS: u32 = 62;
const R_MASK: u64 = (1 << R_BITS) - 1;

/// Runs the rounds forwards. `l_bits` is 56 or 60.
#[inline(always)]
pub(crate) fn encrypt(keys: &[Aes128Key], l_bits: u32, mut l: u64, mut r: u64) -> (u64, u64) {
    let l_mask = (1u64 << l_bits) - 1;
    if let Some(out) = Aes128Key::feistel_ni(keys, true, l, r, l_mask, R_MASK) {
        return out;
    }
    for pair in keys.chunks_exact(2) {
        l ^= pair[0].prf64(r) & l_mask;
        r ^= pair[1].prf64(l) & R_MASK;
    }
    (l, r)
}

/// Runs the rounds backwards.
#[inline(always)]
pub(crate) fn decrypt(keys: &[Aes128Key], l_bits: u32, mut l: u64, mut r: u64) -> (u64, u64) {
    let l_mask = (1u64 << l_bits) - 1;
    if let Some(out) = Aes128Key::feistel_ni(keys, false, l, r, l_mask, R_MASK) {
        return out;
    }
    for pair in keys.chunks_exact(2).rev() {
        r ^= pair[1].prf64(l) & R_MASK;
        l ^= pair[0].prf64(r) & l_mask;
    }
    (l, r)
}

/// Places a 60-bit L and a 62-bit R into UUID bytes with version `ver`.
#[inline(always)]
pub(crate) fn place(l: u64, r: u64, ver: u8) -> [u8; 16] {
    let hi = ((l >> 12) << 16) | ((ver as u64) << 12) | (l & 0xfff);
    let lo = (0b10 << 62) | (r & R_MASK);
    ((hi as u128) << 64 | lo as u128).to_be_bytes()
}

/// Takes a UUID apart: (L, R, version nibble, variant bits).
#[inline(always)]
pub(crate) fn unplace(id: &[u8; 16]) -> (u64, u64, u8, u8) {
    let v = u128::from_be_bytes(*id);
    let (hi, lo) = ((v >> 64) as u64, v as u64);
    let l = ((hi >> 16) << 12) | (hi & 0xfff);
    ((l), lo & R_MASK, ((hi >> 12) & 0xf) as u8, (lo >> 62) as u8)
}

/// Batch form of [`encrypt`]: each round is one pass of the pipelined AES over
/// all ids. `l` and `r` are updated in place.
pub(crate) fn encrypt_many(
    keys: &[Aes128Key],
    l_bits: u32,
    l: &mut [u64],
    r: &mut [u64],
    scratch: &mut [[u8; 16]],
) {
    let l_mask = (1u64 << l_bits) - 1;
    for pair in keys.chunks_exact(2) {
        round(&pair[0], r, l, l_mask, scratch);
        round(&pair[1], l, r, R_MASK, scratch);
    }
}

/// Batch form of [`decrypt`].
pub(crate) fn decrypt_many(
    keys: &[Aes128Key],
    l_bits: u32,
    l: &mut [u64],
    r: &mut [u64],
    scratch: &mut [[u8; 16]],
) {
    let l_mask = (1u64 << l_bits) - 1;
    for pair in keys.chunks_exact(2).rev() {
        round(&pair[1], l, r, R_MASK, scratch);
        round(&pair[0], r, l, l_mask, scratch);
    }
}

/// `into[i] ^= F_k(from[i]) & mask` for every i.
fn round(k: &Aes128Key, from: &[u64], into: &mut [u64], mask: u64, scratch: &mut [[u8; 16]]) {
    let scratch = &mut scratch[..from.len()];
    for (b, x) in scratch.iter_mut().zip(from) {
        *b = [0; 16];
        b[..8].copy_from_slice(&x.to_le_bytes());
    }
    k.encrypt_many(scratch);
    for (y, b) in into.iter_mut().zip(scratch.iter()) {
        *y ^= u64::from_le_bytes(b[..8].try_into().expect("8 bytes")) & mask;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn place_unplace(l in 0u64..1 << 60, r in 0u64..1 << 62, v4: bool) {
            let ver = if v4 { 4 } else { 8 };
            let id = place(l, r, ver);
            prop_assert_eq!(unplace(&id), (l, r, ver, 0b10));
            let u = uuid::Uuid::from_bytes(id);
            prop_assert_eq!(u.get_version_num(), ver as usize);
            prop_assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
        }

        #[test]
        fn rounds_invert(k: [[u8; 16]; 4], l in 0u64..1 << 60, r in 0u64..1 << 62, four: bool, wide: bool) {
            let keys: Vec<Aes128Key> = k.iter().take(if four { 4 } else { 2 }).map(Aes128Key::new).collect();
            let bits = if wide { 60 } else { 56 };
            let l = l & ((1 << bits) - 1);
            let (a, b) = encrypt(&keys, bits, l, r);
            prop_assert!(a < 1 << bits && b < 1 << 62);
            prop_assert_eq!(decrypt(&keys, bits, a, b), (l, r));
            // The one-round-at-a-time path agrees with the vector-register path.
            let slow: Vec<Aes128Key> = k.iter().take(keys.len()).map(Aes128Key::portable_only).collect();
            prop_assert_eq!(encrypt(&slow, bits, l, r), (a, b));
            prop_assert_eq!(decrypt(&slow, bits, a, b), (l, r));
            let (mut ls, mut rs, mut scratch) = (vec![l; 3], vec![r; 3], vec![[0u8; 16]; 3]);
            encrypt_many(&keys, bits, &mut ls, &mut rs, &mut scratch);
            prop_assert_eq!((ls[2], rs[2]), (a, b));
            decrypt_many(&keys, bits, &mut ls, &mut rs, &mut scratch);
            prop_assert_eq!((ls[1], rs[1]), (l, r));
        }
    }
}
