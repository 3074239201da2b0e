//! The sanitizer over RustCrypto's AEADs: `Sanitized<A>` implements the same
//! traits as `A` (`KeyInit`, `AeadCore`, `AeadInOut`, hence `Aead` and
//! `AeadInPlace`), with byte-identical output.

use super::{GuardConfig, NonceGuard, Tag};
use crate::error::{Error, Result};
use aead::array::typenum::Unsigned;
use aead::inout::InOutBuf;
use aead::{AeadCore, AeadInOut, Key, KeyInit, KeySizeUser, Nonce};
use zeroize::Zeroize;

/// An AEAD's name, shared by every implementation of one algorithm (a
/// RustCrypto and a ring instance with one key share state through it).
pub trait NamedAead {
    /// E.g. "AES-256-GCM".
    const NAME: &'static str;
}

macro_rules! named {
    ($($t:ty => $name:literal),* $(,)?) => {
        $(impl NamedAead for $t { const NAME: &'static str = $name; })*
    };
}
/// AES-192 in GCM with a 96-bit nonce (aes-gcm names only the 128- and 256-bit
/// keys).
pub type Aes192Gcm = aes_gcm::AesGcm<aes_gcm::aes::Aes192, aes_gcm::aead::consts::U12>;

named!(
    aes_gcm::Aes128Gcm => "AES-128-GCM",
    Aes192Gcm => "AES-192-GCM",
    aes_gcm::Aes256Gcm => "AES-256-GCM",
    chacha20poly1305::ChaCha20Poly1305 => "ChaCha20-Poly1305",
    chacha20poly1305::XChaCha20Poly1305 => "XChaCha20-Poly1305",
    aes_gcm_siv::Aes128GcmSiv => "AES-128-GCM-SIV",
    aes_gcm_siv::Aes256GcmSiv => "AES-256-GCM-SIV",
);

/// `A`, refusing to seal twice under one nonce. `N` is the nonce size in bytes:
/// 12 (the default) for AES-GCM, AES-GCM-SIV and ChaCha20-Poly1305, 24 for
/// XChaCha20-Poly1305.
///
/// On a violation the output buffer is wiped (zeroed — for an in-place call
/// that is the plaintext, so nothing sealed or unsealed can be sent by mistake)
/// and the [`Policy`](super::Policy) applies: a panic by default; otherwise the
/// traits' opaque `aead::Error`, with the details given to the callback, or
/// returned by [`Sanitized::seal_in_place_detached`].
///
/// ```
/// use chacha20poly1305::{XChaCha20Poly1305, KeyInit, aead::{AeadInOut, Nonce}};
/// use nonceforge::aead::{GuardConfig, Policy, Sanitized};
///
/// let key = [9u8; 32];
/// let cipher = Sanitized::<XChaCha20Poly1305, 24>::with_config(
///     &key.into(),
///     GuardConfig::new().policy(Policy::Error),
/// )?;
/// let nonce = Nonce::<XChaCha20Poly1305>::from([3u8; 24]);
/// let mut msg = *b"hello";
/// cipher.seal_in_place_detached(&nonce, b"", &mut msg)?;
/// let mut again = *b"world";
/// let err = cipher.seal_in_place_detached(&nonce, b"", &mut again).unwrap_err();
/// assert!(err.to_string().starts_with("nonceforge: nonce reuse"));
/// assert_eq!(again, [0; 5]); // wiped
/// # Ok::<(), nonceforge::Error>(())
/// ```
pub struct Sanitized<A, const N: usize = 12> {
    inner: A,
    guard: NonceGuard<N>,
}

impl<A, const N: usize> std::fmt::Debug for Sanitized<A, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sanitized")
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl<A: AeadInOut + KeyInit + NamedAead, const N: usize> Sanitized<A, N> {
    /// The sanitized AEAD for `key`, with these settings.
    pub fn with_config(key: &Key<A>, config: GuardConfig) -> Result<Self> {
        Self::check_sizes();
        Ok(Sanitized {
            inner: A::new(key),
            guard: NonceGuard::new(A::NAME, key, config)?,
        })
    }

    const fn check_sizes() {
        const {
            assert!(
                <A::NonceSize as Unsigned>::USIZE == N,
                "N must be the AEAD's nonce size"
            );
            assert!(<A::TagSize as Unsigned>::USIZE == 16, "16-byte tags");
        }
    }

    /// The guard (its memory, whether it shares state with another).
    pub fn guard(&self) -> &NonceGuard<N> {
        &self.guard
    }

    /// Seals `buffer` in place and returns the tag, with the sanitizer's typed
    /// error on a violation (unless the policy panics).
    pub fn seal_in_place_detached(
        &self,
        nonce: &Nonce<A>,
        associated_data: &[u8],
        buffer: &mut [u8],
    ) -> Result<aead::Tag<A>> {
        self.seal(nonce, associated_data, buffer.into())
    }

    /// Opens `buffer` in place (and checks for a replay when the config asks);
    /// on failure `buffer` is wiped.
    pub fn open_in_place_detached(
        &self,
        nonce: &Nonce<A>,
        associated_data: &[u8],
        buffer: &mut [u8],
        tag: &aead::Tag<A>,
    ) -> Result<()> {
        self.open(nonce, associated_data, buffer.into(), tag)
    }

    fn nonce_bytes(nonce: &Nonce<A>) -> &[u8; N] {
        nonce.as_slice().try_into().expect("N is the nonce size")
    }

    fn seal(
        &self,
        nonce: &Nonce<A>,
        associated_data: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> Result<aead::Tag<A>> {
        let n = Self::nonce_bytes(nonce);
        if self.guard.try_fast(n) {
            // (An AEAD error here leaves the nonce recorded though unused: the
            // AEADs fail only on messages too long to exist in memory.)
            return self
                .inner
                .encrypt_inout_detached(nonce, associated_data, buffer)
                .map_err(|_| Self::failed("seal"));
        }
        self.seal_checked(nonce, associated_data, buffer)
    }

    /// The AEAD refused (a message too long, or a tag that does not verify).
    #[cold]
    fn failed(operation: &'static str) -> Error {
        Error::Aead {
            algorithm: A::NAME,
            operation,
        }
    }

    /// Everything but the common case, out of line so the fast path stays small.
    #[inline(never)]
    fn seal_checked(
        &self,
        nonce: &Nonce<A>,
        associated_data: &[u8],
        mut buffer: InOutBuf<'_, '_, u8>,
    ) -> Result<aead::Tag<A>> {
        let n = Self::nonce_bytes(nonce);
        let ticket = match self.guard.begin_seal(n, buffer.len()) {
            Ok(t) => t,
            Err(v) => {
                buffer.get_out().zeroize();
                return Err(self.guard.refuse(v));
            }
        };
        match self
            .inner
            .encrypt_inout_detached(nonce, associated_data, buffer.reborrow())
        {
            Ok(tag) => {
                let t: &Tag = tag.as_slice().try_into().expect("16-byte tag");
                match self.guard.finish_seal(ticket, t) {
                    Ok(()) => Ok(tag),
                    Err(v) => {
                        buffer.get_out().zeroize();
                        Err(self.guard.refuse(v))
                    }
                }
            }
            Err(_) => {
                self.guard.cancel_seal(ticket);
                Err(Self::failed("seal"))
            }
        }
    }

    fn open(
        &self,
        nonce: &Nonce<A>,
        associated_data: &[u8],
        mut buffer: InOutBuf<'_, '_, u8>,
        tag: &aead::Tag<A>,
    ) -> Result<()> {
        if self
            .inner
            .decrypt_inout_detached(nonce, associated_data, buffer.reborrow(), tag)
            .is_err()
        {
            return Err(Self::failed("open"));
        }
        if let Err(e) = self.guard.check_open(Self::nonce_bytes(nonce)) {
            buffer.get_out().zeroize();
            return Err(e);
        }
        Ok(())
    }
}

impl<A: KeySizeUser, const N: usize> KeySizeUser for Sanitized<A, N> {
    type KeySize = A::KeySize;
}

impl<A: AeadInOut + KeyInit + NamedAead, const N: usize> KeyInit for Sanitized<A, N> {
    /// The sanitized AEAD with the default settings (panic on violation).
    fn new(key: &Key<Self>) -> Self {
        Self::check_sizes();
        Sanitized {
            inner: A::new(key),
            guard: NonceGuard::new_valid(A::NAME, key, GuardConfig::default()),
        }
    }
}

impl<A: AeadCore, const N: usize> AeadCore for Sanitized<A, N> {
    type NonceSize = A::NonceSize;
    type TagSize = A::TagSize;
    const TAG_POSITION: aead::TagPosition = A::TAG_POSITION;
}

impl<A: AeadInOut + KeyInit + NamedAead, const N: usize> AeadInOut for Sanitized<A, N> {
    #[inline]
    fn encrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> aead::Result<aead::Tag<Self>> {
        // The common case returns the AEAD's own result straight away (see
        // the ring adapter: the crate's larger error type costs a copy).
        if self.guard.try_fast(Self::nonce_bytes(nonce)) {
            return self
                .inner
                .encrypt_inout_detached(nonce, associated_data, buffer);
        }
        self.seal_checked(nonce, associated_data, buffer)
            .map_err(|_| aead::Error)
    }

    fn decrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        associated_data: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
        tag: &aead::Tag<Self>,
    ) -> aead::Result<()> {
        self.open(nonce, associated_data, buffer, tag)
            .map_err(|_| aead::Error)
    }
}
