//! Bulk crypto on caller-owned buffers: stream ciphers, AEADs, hashes and HMAC,
//! byte-identical to OpenSSL's (and so to Node's `crypto` and
//! @ronomon/crypto-async), for faces that run them off the main thread.
//!
//! Everything here is a plain synchronous function over slices: the thread
//! pool lives in the face (libuv's in Node). Names are OpenSSL's, looked up
//! without regard to case ([`CipherAlg::from_name`], [`DigestAlg::from_name`]).
//!
//! ```
//! use nonceforge_bulk::{self as bulk, CipherAlg, Data, DigestAlg, Tag};
//!
//! let alg = CipherAlg::from_name("AES-256-GCM").unwrap();
//! let (key, iv) = ([7u8; 32], [1u8; 12]);
//! let mut buf = *b"attack at dawn";
//! let mut tag = Tag::new(16)?;
//! bulk::cipher(alg, true, &key, &iv, Data::InPlace(&mut buf), b"header", &mut tag)?;
//! bulk::cipher(alg, false, &key, &iv, Data::InPlace(&mut buf), b"header", &mut tag)?;
//! assert_eq!(&buf, b"attack at dawn");
//!
//! let mut out = [0u8; 64];
//! let n = bulk::hash(DigestAlg::from_name("sha256").unwrap(), b"abc", &mut out)?;
//! assert_eq!(n, 32);
//! # Ok::<(), nonceforge_bulk::BulkError>(())
//! ```
//!
//! Algorithms: AES-128/192/256, ARIA-128/192/256, Camellia-128/192/256 and SM4
//! in CTR mode (128-bit big-endian counter, as OpenSSL); ChaCha20 with
//! OpenSSL's 16-byte IV (a 64-bit little-endian block counter, then the
//! 8-byte nonce); AES- and ARIA-GCM with a 12-byte IV and tags of 4, 8 or 12–16
//! bytes; ChaCha20-Poly1305 with tags of 1–16 bytes. On decryption the tag is
//! checked (in constant time) *before* anything is written: a forged message
//! leaves the target as it was. Digests: MD5, SHA-1, SHA-2, SHA-3, SHAKE
//! (OpenSSL's default lengths), BLAKE2b-512, BLAKE2s-256, RIPEMD-160, MD5-SHA1,
//! SM3, and BLAKE3 (not an OpenSSL name). HMAC over every digest but SHAKE.
//!
//! Crates: RustCrypto's `aes`, `aria`, `camellia`, `sm4`, `chacha20`,
//! `aes-gcm` (for GCM, generic over the block cipher and tag size), `poly1305`
//! and the digest crates; ring seals AES-128/256-GCM and ChaCha20-Poly1305 with
//! a whole tag (faster here, figures at `seal_ring`). ChaCha20-Poly1305 is composed here from `chacha20`
//! and `poly1305` (RFC 8439 §2.8) because no crate checks a truncated tag; CTR
//! mode is written here over the block ciphers because the `ctr` crate was
//! the bottleneck (figures at `ctr`), and is tested against it.

mod alg;
mod chacha20;
mod chacha20_poly1305;
mod ctr;
mod data;
mod error;
mod gcm;
mod hash;
mod hmac;
mod names;
mod ring_seal;
#[cfg(test)]
mod tests;

use cipher::InOutBuf;

pub use alg::{CipherAlg, DigestAlg};
pub use data::{Data, Tag};
pub use error::BulkError;
pub use hash::{Hasher, hash};
pub use hmac::hmac;

use chacha20::chacha20_openssl;
use chacha20_poly1305::chacha20_poly1305;
use ctr::ctr;
use gcm::gcm;
use ring_seal::seal_ring;

/// Encrypt (`encrypt = true`) or decrypt `data` with `alg`. For an AEAD, `aad`
/// is authenticated and `tag` is written (encrypt) or checked (decrypt) —
/// checked before anything is written, so a forged message leaves `data` as it
/// was and gives [`BulkError::Corrupt`]. For a stream cipher `aad` and `tag`
/// must be empty.
pub fn cipher(
    alg: CipherAlg,
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    data: Data<'_>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError> {
    if key.len() != alg.key_len() {
        return Err(BulkError::KeySize {
            expected: alg.key_len(),
            got: key.len(),
        });
    }
    if iv.len() != alg.iv_len() {
        return Err(BulkError::IvSize {
            expected: alg.iv_len(),
            got: iv.len(),
        });
    }
    if !alg.is_aead() && !aad.is_empty() {
        return Err(BulkError::AadNotAllowed);
    }
    if !alg.tag_len_ok(tag.len) {
        return Err(BulkError::TagSize { got: tag.len });
    }
    let buf: InOutBuf<'_, '_, u8> = match data {
        Data::InPlace(b) => b.into(),
        Data::Copy(src, dst) => {
            if dst.len() < src.len() {
                return Err(BulkError::TargetTooShort {
                    needed: src.len(),
                    got: dst.len(),
                });
            }
            let n = src.len();
            InOutBuf::new(src, &mut dst[..n]).expect("lengths are equal")
        }
    };
    use CipherAlg::*;
    match alg {
        Aes128Gcm if encrypt && tag.len == 16 => {
            seal_ring(&ring::aead::AES_128_GCM, key, iv, buf, aad, tag)
        }
        Aes256Gcm if encrypt && tag.len == 16 => {
            seal_ring(&ring::aead::AES_256_GCM, key, iv, buf, aad, tag)
        }
        ChaCha20Poly1305 if encrypt && tag.len == 16 => {
            seal_ring(&ring::aead::CHACHA20_POLY1305, key, iv, buf, aad, tag)
        }
        Aes128Ctr => ctr::<aes::Aes128>(key, iv, buf),
        Aes192Ctr => ctr::<aes::Aes192>(key, iv, buf),
        Aes256Ctr => ctr::<aes::Aes256>(key, iv, buf),
        Aria128Ctr => ctr::<aria::Aria128>(key, iv, buf),
        Aria192Ctr => ctr::<aria::Aria192>(key, iv, buf),
        Aria256Ctr => ctr::<aria::Aria256>(key, iv, buf),
        Camellia128Ctr => ctr::<camellia::Camellia128>(key, iv, buf),
        Camellia192Ctr => ctr::<camellia::Camellia192>(key, iv, buf),
        Camellia256Ctr => ctr::<camellia::Camellia256>(key, iv, buf),
        Sm4Ctr => ctr::<sm4::Sm4>(key, iv, buf),
        ChaCha20 => chacha20_openssl(key, iv, buf),
        Aes128Gcm => gcm::<aes::Aes128>(encrypt, key, iv, buf, aad, tag),
        Aes192Gcm => gcm::<aes::Aes192>(encrypt, key, iv, buf, aad, tag),
        Aes256Gcm => gcm::<aes::Aes256>(encrypt, key, iv, buf, aad, tag),
        Aria128Gcm => gcm::<aria::Aria128>(encrypt, key, iv, buf, aad, tag),
        Aria192Gcm => gcm::<aria::Aria192>(encrypt, key, iv, buf, aad, tag),
        Aria256Gcm => gcm::<aria::Aria256>(encrypt, key, iv, buf, aad, tag),
        ChaCha20Poly1305 => chacha20_poly1305(encrypt, key, iv, buf, aad, tag),
    }
}

/// The README's examples, compiled (and run where they can) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
