//! The sanitizer over ring's `LessSafeKey`: the same methods, byte-identical
//! output. ring hides a key's bytes once it is bound, so the constructor takes
//! the bytes (to fingerprint them once) and binds the key itself.

use super::{GuardConfig, NonceGuard, Tag};
use crate::error::{Error, Result};
use ring::aead::{self, Aad, Algorithm, LessSafeKey, Nonce, UnboundKey};
use ring::error::Unspecified;
use zeroize::Zeroize;

fn name(algorithm: &'static Algorithm) -> &'static str {
    if algorithm == &aead::AES_128_GCM {
        "AES-128-GCM"
    } else if algorithm == &aead::AES_256_GCM {
        "AES-256-GCM"
    } else if algorithm == &aead::CHACHA20_POLY1305 {
        "ChaCha20-Poly1305"
    } else {
        "unknown ring AEAD"
    }
}

/// ring's `LessSafeKey`, refusing to seal twice under one nonce.
///
/// ```
/// use ring::aead::{AES_256_GCM, Aad, Nonce};
/// use nonceforge::aead::{GuardConfig, Policy, SanitizedLessSafeKey};
///
/// let key = SanitizedLessSafeKey::new(&AES_256_GCM, &[1; 32], GuardConfig::new().policy(Policy::Error))?;
/// let mut msg = b"hello".to_vec();
/// key.seal_in_place_append_tag(Nonce::assume_unique_for_key([0; 12]), Aad::empty(), &mut msg).unwrap();
/// let mut again = b"hello".to_vec();
/// assert!(key.seal_in_place_append_tag(Nonce::assume_unique_for_key([0; 12]), Aad::empty(), &mut again).is_err());
/// # Ok::<(), nonceforge::Error>(())
/// ```
pub struct SanitizedLessSafeKey {
    key: LessSafeKey,
    guard: NonceGuard<12>,
}

impl std::fmt::Debug for SanitizedLessSafeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SanitizedLessSafeKey")
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl SanitizedLessSafeKey {
    /// Binds `key_bytes` for `algorithm` (AES-128-GCM, AES-256-GCM or
    /// ChaCha20-Poly1305), with these settings.
    pub fn new(
        algorithm: &'static Algorithm,
        key_bytes: &[u8],
        config: GuardConfig,
    ) -> Result<Self> {
        let name = name(algorithm);
        let unbound = UnboundKey::new(algorithm, key_bytes).map_err(|_| Error::KeyLength {
            argument: "key_bytes",
            algorithm: name,
            expected: algorithm.key_len(),
            len: key_bytes.len(),
        })?;
        Ok(SanitizedLessSafeKey {
            key: LessSafeKey::new(unbound),
            guard: NonceGuard::new(name, key_bytes, config)?,
        })
    }

    #[doc(hidden)]
    pub fn inner_key_tmp(&self) -> &LessSafeKey {
        &self.key
    }

    /// The guard.
    pub fn guard(&self) -> &NonceGuard<12> {
        &self.guard
    }

    /// The algorithm.
    pub fn algorithm(&self) -> &'static Algorithm {
        self.key.algorithm()
    }

    /// As `LessSafeKey::seal_in_place_separate_tag`; on a violation `in_out` is
    /// wiped and the policy applies (`Unspecified` unless it panics).
    ///
    /// The common case returns ring's own result straight away: passing it
    /// through the crate's larger error type cost more than the check
    /// (bench/RESULTS.md, "The measurements behind the code").
    #[inline]
    pub fn seal_in_place_separate_tag<A: AsRef<[u8]>>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &mut [u8],
    ) -> Result<aead::Tag, Unspecified> {
        if self.guard.try_fast(nonce.as_ref()) {
            return self.key.seal_in_place_separate_tag(nonce, aad, in_out);
        }
        self.seal_checked(nonce, aad, in_out)
            .map_err(|_| Unspecified)
    }

    /// As `LessSafeKey::seal_in_place_append_tag`.
    pub fn seal_in_place_append_tag<A, InOut>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &mut InOut,
    ) -> Result<(), Unspecified>
    where
        A: AsRef<[u8]>,
        InOut: AsMut<[u8]> + for<'in_out> Extend<&'in_out u8>,
    {
        let tag = self.seal_in_place_separate_tag(nonce, aad, in_out.as_mut())?;
        in_out.extend(tag.as_ref());
        Ok(())
    }

    /// As `seal_in_place_separate_tag`, with the sanitizer's typed error.
    #[inline]
    pub fn seal<A: AsRef<[u8]>>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &mut [u8],
    ) -> Result<aead::Tag> {
        if self.guard.try_fast(nonce.as_ref()) {
            return self
                .key
                .seal_in_place_separate_tag(nonce, aad, in_out)
                .map_err(|_| self.failed());
        }
        self.seal_checked(nonce, aad, in_out)
    }

    /// ring fails only on lengths beyond what fits in memory; nothing was
    /// written (a fast-path nonce stays recorded, though unused).
    #[cold]
    fn failed(&self) -> Error {
        Error::Aead {
            algorithm: self.guard.algorithm(),
            operation: "seal",
        }
    }

    /// Everything but the common case: repeats, tags, byte limits, the Bloom
    /// filter. Kept out of line so the fast path stays small.
    #[inline(never)]
    fn seal_checked<A: AsRef<[u8]>>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &mut [u8],
    ) -> Result<aead::Tag> {
        let n = *nonce.as_ref();
        let ticket = match self.guard.begin_seal(&n, in_out.len()) {
            Ok(t) => t,
            Err(v) => {
                in_out.zeroize();
                return Err(self.guard.refuse(v));
            }
        };
        match self.key.seal_in_place_separate_tag(nonce, aad, in_out) {
            Ok(tag) => {
                let t: &Tag = tag.as_ref().try_into().expect("16-byte tag");
                match self.guard.finish_seal(ticket, t) {
                    Ok(()) => Ok(tag),
                    Err(v) => {
                        in_out.zeroize();
                        Err(self.guard.refuse(v))
                    }
                }
            }
            Err(_) => {
                self.guard.cancel_seal(ticket);
                Err(self.failed())
            }
        }
    }

    /// As `LessSafeKey::open_in_place` (plus the replay check when the config
    /// asks; a replay wipes the plaintext and fails).
    pub fn open_in_place<'in_out, A: AsRef<[u8]>>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &'in_out mut [u8],
    ) -> Result<&'in_out mut [u8], Unspecified> {
        self.open_within(nonce, aad, in_out, 0..)
    }

    /// As `LessSafeKey::open_within`.
    pub fn open_within<'in_out, A: AsRef<[u8]>>(
        &self,
        nonce: Nonce,
        aad: Aad<A>,
        in_out: &'in_out mut [u8],
        ciphertext_and_tag: std::ops::RangeFrom<usize>,
    ) -> Result<&'in_out mut [u8], Unspecified> {
        let n = *nonce.as_ref();
        let plain = self
            .key
            .open_within(nonce, aad, in_out, ciphertext_and_tag)?;
        if self.guard.check_open(&n).is_err() {
            plain.zeroize();
            return Err(Unspecified);
        }
        Ok(plain)
    }
}
