//! AES-128 (FIPS-197) for external ids: an AES-NI path for one block at a time,
//! where the latency of a single id is the point, and the `aes` crate for the
//! rest — its portable code where the CPU has no AES-NI, and its pipelined
//! (VAES) path for batches.
//!
//! Why not the crate alone for one block: its one-block call passes the block
//! through memory, a third more per id than the path here, where the block goes
//! from two general registers into one vector register and back without
//! touching memory (bench/RESULTS.md, "The measurements behind the code").

use aes::Aes128;
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use zeroize::Zeroize;

/// One AES-128 key, expanded for both directions.
pub(crate) struct Aes128Key {
    /// The crate's cipher: portable fallback and batches.
    portable: Aes128,
    /// Encryption round keys (FIPS-197 key expansion), for the AES-NI path.
    enc: [[u8; 16]; 11],
    /// Decryption round keys for AESDEC (InvMixColumns applied to rounds 1..9).
    dec: [[u8; 16]; 11],
    /// The CPU has AES-NI (and SSSE3): checked once, when the key is made.
    ni: bool,
}

impl Aes128Key {
    pub(crate) fn new(key: &[u8; 16]) -> Self {
        let portable = Aes128::new(key.into());
        let ni = ni::available();
        let (mut enc, mut dec) = ([[0u8; 16]; 11], [[0u8; 16]; 11]);
        if ni {
            // SAFETY: `ni::available()` said the CPU has AES-NI and SSSE3.
            unsafe { ni::expand(key, &mut enc, &mut dec) };
        }
        Aes128Key {
            portable,
            enc,
            dec,
            ni,
        }
    }

    /// Encrypts the block whose bytes are `v` big-endian, and returns the
    /// ciphertext read the same way. On the AES-NI path the value goes from two
    /// general registers into one vector register and back, with no trip through
    /// memory: the latency path.
    #[inline]
    pub(crate) fn encrypt_be(&self, v: u128) -> u128 {
        if self.ni {
            // SAFETY: `ni` is true only where the CPU has AES-NI and SSSE3.
            return unsafe { ni::encrypt_be(&self.enc, v) };
        }
        u128::from_be_bytes(self.encrypt(v.to_be_bytes()))
    }

    /// Decrypts, as [`encrypt_be`](Self::encrypt_be).
    #[inline]
    pub(crate) fn decrypt_be(&self, v: u128) -> u128 {
        if self.ni {
            // SAFETY: as in `encrypt_be`.
            return unsafe { ni::decrypt_be(&self.dec, v) };
        }
        u128::from_be_bytes(self.decrypt(v.to_be_bytes()))
    }

    /// Encrypts one block.
    #[inline]
    pub(crate) fn encrypt(&self, block: [u8; 16]) -> [u8; 16] {
        if self.ni {
            // SAFETY: `ni` is true only where the CPU has AES-NI and SSSE3.
            return unsafe { ni::encrypt(&self.enc, block) };
        }
        let mut b = block;
        self.portable.encrypt_block((&mut b).into());
        b
    }

    /// Decrypts one block.
    #[inline]
    pub(crate) fn decrypt(&self, block: [u8; 16]) -> [u8; 16] {
        if self.ni {
            // SAFETY: as in `encrypt`.
            return unsafe { ni::decrypt(&self.dec, block) };
        }
        let mut b = block;
        self.portable.decrypt_block((&mut b).into());
        b
    }

    /// The Feistel round function: the first 8 bytes of AES-128 of (`x` as 8
    /// little-endian bytes ‖ 8 zero bytes), read little-endian. Little-endian so
    /// that `x` goes into the register and back out with one move each.
    #[inline]
    pub(crate) fn prf64(&self, x: u64) -> u64 {
        if self.ni {
            // SAFETY: `ni` is true only where the CPU has AES-NI and SSSE3.
            return unsafe { ni::prf64(&self.enc, x) };
        }
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&x.to_le_bytes());
        self.portable.encrypt_block((&mut b).into());
        u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
    }

    /// Feistel rounds on the AES-NI path, both halves kept in vector registers
    /// from the first round to the last: for each pair of keys (k1, k2),
    /// `l ^= F_k1(r) & l_mask; r ^= F_k2(l) & r_mask` (backwards when decoding).
    /// `None` where the CPU has no AES-NI: the caller runs [`Self::prf64`] rounds.
    #[inline]
    pub(crate) fn feistel_ni(
        keys: &[Aes128Key],
        forward: bool,
        l: u64,
        r: u64,
        l_mask: u64,
        r_mask: u64,
    ) -> Option<(u64, u64)> {
        if !keys.iter().all(|k| k.ni) {
            return None;
        }
        // SAFETY: every key found AES-NI and SSSE3 on this CPU.
        Some(unsafe { ni::feistel(keys, forward, l, r, l_mask, r_mask) })
    }

    /// Encrypts many blocks in place (the crate's pipelined path: VAES here).
    pub(crate) fn encrypt_many(&self, blocks: &mut [[u8; 16]]) {
        self.portable
            .encrypt_blocks(cipher::Array::cast_slice_from_core_mut(blocks));
    }

    /// [`Self::prf64`] of many values at once, through the pipelined path;
    /// `scratch` holds at least `xs.len()` blocks.
    pub(crate) fn prf64_many(&self, xs: &[u64], out: &mut [u64], scratch: &mut [[u8; 16]]) {
        let blocks = &mut scratch[..xs.len()];
        for (b, &x) in blocks.iter_mut().zip(xs) {
            *b = [0u8; 16];
            b[..8].copy_from_slice(&x.to_le_bytes());
        }
        self.encrypt_many(blocks);
        for (o, b) in out.iter_mut().zip(blocks.iter()) {
            *o = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        }
    }

    /// Decrypts many blocks in place.
    pub(crate) fn decrypt_many(&self, blocks: &mut [[u8; 16]]) {
        self.portable
            .decrypt_blocks(cipher::Array::cast_slice_from_core_mut(blocks));
    }

    /// The AES-NI path is in use.
    #[cfg(test)]
    pub(crate) fn uses_ni(&self) -> bool {
        self.ni
    }

    /// A key that takes the `aes` crate's path only: its own key schedule and
    /// code, nothing shared with the AES-NI path (the fallback's tests, and
    /// the self-check's second opinion).
    pub(crate) fn portable_only(key: &[u8; 16]) -> Self {
        Aes128Key {
            portable: Aes128::new(key.into()),
            enc: [[0u8; 16]; 11],
            dec: [[0u8; 16]; 11],
            ni: false,
        }
    }
}

impl Drop for Aes128Key {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

#[cfg(target_arch = "x86_64")]
mod ni {
    use core::arch::x86_64::*;

    /// AES-NI and SSSE3 at run time (never when built with
    /// `--cfg nonceforge_portable`, which `make test` uses to test the fallback).
    pub(super) fn available() -> bool {
        !cfg!(nonceforge_portable)
            && std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("ssse3")
    }

    /// Loads a block into a register (FIPS-197 byte order: byte 0 first).
    #[inline(always)]
    unsafe fn load(b: [u8; 16]) -> __m128i {
        // SAFETY: `b` is 16 readable bytes; loadu has no alignment demand.
        unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
    }

    #[inline(always)]
    unsafe fn store(x: __m128i) -> [u8; 16] {
        let mut out = [0u8; 16];
        // SAFETY: `out` is 16 writable bytes; storeu has no alignment demand.
        unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), x) };
        out
    }

    macro_rules! expand_round {
        ($k:expr, $rcon:literal) => {{
            let k = $k;
            let t = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(k, $rcon), 0xff);
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            let k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
            _mm_xor_si128(k, t)
        }};
    }

    /// FIPS-197 key expansion, and the equivalent inverse cipher's round keys.
    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn expand(
        key: &[u8; 16],
        enc: &mut [[u8; 16]; 11],
        dec: &mut [[u8; 16]; 11],
    ) {
        // SAFETY (all intrinsics below): the caller checked AES-NI and SSSE3.
        // The round keys go straight into `enc` (and `dec` from it): no
        // array of them on the stack to outlive the call uncleared.
        unsafe {
            let mut k = load(*key);
            enc[0] = store(k);
            k = expand_round!(k, 0x01);
            enc[1] = store(k);
            k = expand_round!(k, 0x02);
            enc[2] = store(k);
            k = expand_round!(k, 0x04);
            enc[3] = store(k);
            k = expand_round!(k, 0x08);
            enc[4] = store(k);
            k = expand_round!(k, 0x10);
            enc[5] = store(k);
            k = expand_round!(k, 0x20);
            enc[6] = store(k);
            k = expand_round!(k, 0x40);
            enc[7] = store(k);
            k = expand_round!(k, 0x80);
            enc[8] = store(k);
            k = expand_round!(k, 0x1b);
            enc[9] = store(k);
            k = expand_round!(k, 0x36);
            enc[10] = store(k);
            dec[0] = enc[10];
            dec[10] = enc[0];
            for i in 1..10 {
                dec[i] = store(_mm_aesimc_si128(load(enc[10 - i])));
            }
        }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn encrypt(rk: &[[u8; 16]; 11], block: [u8; 16]) -> [u8; 16] {
        // SAFETY: the caller checked AES-NI and SSSE3.
        unsafe { store(aes(rk, load(block))) }
    }

    /// Register holding `v` little-endian ⇄ register holding it big-endian.
    #[inline(always)]
    unsafe fn swap(x: __m128i) -> __m128i {
        // SAFETY: the caller checked SSSE3.
        unsafe {
            _mm_shuffle_epi8(
                x,
                _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
            )
        }
    }

    #[inline(always)]
    unsafe fn from_u128(v: u128) -> __m128i {
        // SAFETY: SSE2 is part of x86-64.
        unsafe { swap(_mm_set_epi64x((v >> 64) as i64, v as i64)) }
    }

    #[inline(always)]
    unsafe fn to_u128(x: __m128i) -> u128 {
        // SAFETY: SSE2 is part of x86-64.
        unsafe {
            let x = swap(x);
            let lo = _mm_cvtsi128_si64(x) as u64;
            let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
            ((hi as u128) << 64) | lo as u128
        }
    }

    /// AES-128 of a register.
    #[inline(always)]
    unsafe fn aes(rk: &[[u8; 16]; 11], x: __m128i) -> __m128i {
        // SAFETY: the caller checked AES-NI; loads are of whole 16-byte arrays.
        unsafe {
            let mut x = _mm_xor_si128(x, load(rk[0]));
            for k in &rk[1..10] {
                x = _mm_aesenc_si128(x, load(*k));
            }
            _mm_aesenclast_si128(x, load(rk[10]))
        }
    }

    /// The inverse cipher of a register, with the decryption round keys.
    #[inline(always)]
    unsafe fn aes_inverse(rk: &[[u8; 16]; 11], x: __m128i) -> __m128i {
        // SAFETY: as in `aes`.
        unsafe {
            let mut x = _mm_xor_si128(x, load(rk[0]));
            for k in &rk[1..10] {
                x = _mm_aesdec_si128(x, load(*k));
            }
            _mm_aesdeclast_si128(x, load(rk[10]))
        }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn feistel(
        keys: &[super::Aes128Key],
        forward: bool,
        l: u64,
        r: u64,
        l_mask: u64,
        r_mask: u64,
    ) -> (u64, u64) {
        // SAFETY: the caller checked AES-NI and SSSE3. `movq` clears the upper
        // 64 bits, and the masks keep them clear, so each half is exactly the
        // block "x as 8 little-endian bytes ‖ 8 zero bytes" of `prf64`.
        unsafe {
            let (mut l, mut r) = (_mm_cvtsi64_si128(l as i64), _mm_cvtsi64_si128(r as i64));
            let (lm, rm) = (
                _mm_cvtsi64_si128(l_mask as i64),
                _mm_cvtsi64_si128(r_mask as i64),
            );
            if forward {
                for pair in keys.chunks_exact(2) {
                    l = _mm_xor_si128(l, _mm_and_si128(aes(&pair[0].enc, r), lm));
                    r = _mm_xor_si128(r, _mm_and_si128(aes(&pair[1].enc, l), rm));
                }
            } else {
                for pair in keys.chunks_exact(2).rev() {
                    r = _mm_xor_si128(r, _mm_and_si128(aes(&pair[1].enc, l), rm));
                    l = _mm_xor_si128(l, _mm_and_si128(aes(&pair[0].enc, r), lm));
                }
            }
            (_mm_cvtsi128_si64(l) as u64, _mm_cvtsi128_si64(r) as u64)
        }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn encrypt_be(rk: &[[u8; 16]; 11], v: u128) -> u128 {
        // SAFETY: the caller checked AES-NI and SSSE3.
        unsafe { to_u128(aes(rk, from_u128(v))) }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn decrypt_be(rk: &[[u8; 16]; 11], v: u128) -> u128 {
        // SAFETY: the caller checked AES-NI and SSSE3.
        unsafe { to_u128(aes_inverse(rk, from_u128(v))) }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn prf64(rk: &[[u8; 16]; 11], x: u64) -> u64 {
        // SAFETY: the caller checked AES-NI and SSSE3.
        unsafe { _mm_cvtsi128_si64(aes(rk, _mm_cvtsi64_si128(x as i64))) as u64 }
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) unsafe fn decrypt(rk: &[[u8; 16]; 11], block: [u8; 16]) -> [u8; 16] {
        // SAFETY: the caller checked AES-NI and SSSE3.
        unsafe { store(aes_inverse(rk, load(block))) }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod ni {
    pub(super) fn available() -> bool {
        false
    }
    pub(super) unsafe fn expand(_: &[u8; 16], _: &mut [[u8; 16]; 11], _: &mut [[u8; 16]; 11]) {}
    pub(super) unsafe fn encrypt(_: &[[u8; 16]; 11], _: [u8; 16]) -> [u8; 16] {
        unreachable!("AES-NI is never reported outside x86-64")
    }
    pub(super) unsafe fn decrypt(_: &[[u8; 16]; 11], _: [u8; 16]) -> [u8; 16] {
        unreachable!("AES-NI is never reported outside x86-64")
    }
    pub(super) unsafe fn prf64(_: &[[u8; 16]; 11], _: u64) -> u64 {
        unreachable!("AES-NI is never reported outside x86-64")
    }
    pub(super) unsafe fn encrypt_be(_: &[[u8; 16]; 11], _: u128) -> u128 {
        unreachable!("AES-NI is never reported outside x86-64")
    }
    pub(super) unsafe fn feistel(
        _: &[super::Aes128Key],
        _: bool,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
    ) -> (u64, u64) {
        unreachable!("AES-NI is never reported outside x86-64")
    }
    pub(super) unsafe fn decrypt_be(_: &[[u8; 16]; 11], _: u128) -> u128 {
        unreachable!("AES-NI is never reported outside x86-64")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// FIPS-197 Appendix C.1 (AES-128).
    #[test]
    fn fips_197() {
        let key: [u8; 16] = hex::decode("000102030405060708090a0b0c0d0e0f")
            .unwrap()
            .try_into()
            .unwrap();
        let pt: [u8; 16] = hex::decode("00112233445566778899aabbccddeeff")
            .unwrap()
            .try_into()
            .unwrap();
        let ct = "69c4e0d86a7b0430d8cdb78070b4c55a";
        for k in [Aes128Key::new(&key), Aes128Key::portable_only(&key)] {
            assert_eq!(hex::encode(k.encrypt(pt)), ct);
            assert_eq!(k.decrypt(k.encrypt(pt)), pt);
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(Aes128Key::new(&key).uses_ni(), ni::available());
    }

    proptest! {
        /// The AES-NI path, the crate's one-block path and its batch path agree.
        #[test]
        fn paths_agree(key: [u8; 16], blocks: [[u8; 16]; 9]) {
            let (fast, slow) = (Aes128Key::new(&key), Aes128Key::portable_only(&key));
            let mut many = blocks;
            fast.encrypt_many(&mut many);
            for (b, m) in blocks.iter().zip(&many) {
                prop_assert_eq!(fast.encrypt(*b), *m);
                prop_assert_eq!(slow.encrypt(*b), *m);
                prop_assert_eq!(fast.decrypt(*m), *b);
                prop_assert_eq!(slow.decrypt(*m), *b);
            }
            fast.decrypt_many(&mut many);
            prop_assert_eq!(many, blocks);
            let x = u64::from_le_bytes(blocks[0][..8].try_into().unwrap());
            prop_assert_eq!(fast.prf64(x), slow.prf64(x));
            let v = u128::from_be_bytes(blocks[1]);
            prop_assert_eq!(fast.encrypt_be(v).to_be_bytes(), slow.encrypt(blocks[1]));
            prop_assert_eq!(slow.encrypt_be(v).to_be_bytes(), slow.encrypt(blocks[1]));
            prop_assert_eq!(fast.decrypt_be(fast.encrypt_be(v)), v);
            prop_assert_eq!(slow.decrypt_be(slow.encrypt_be(v)), v);
        }
    }
}
