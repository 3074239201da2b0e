//! Bulk crypto on caller-owned buffers: stream ciphers, AEADs, hashes and HMAC,
//! byte-identical to OpenSSL's (and so to Node's `crypto` and
//! @ronomon/crypto-async), for faces that run them off the main thread.
//!
//! Everything here is a plain synchronous function over slices: the thread
//! pool lives in the face (libuv's in Node). Names are OpenSSL's, looked up
//! without regard to case ([`CipherAlg::from_name`], [`DigestAlg::from_name`]).
//!
//! ```
//! use nonceforge::bulk::{self, CipherAlg, Data, DigestAlg, Tag};
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
//! # Ok::<(), nonceforge::bulk::BulkError>(())
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

mod names;

use core::fmt;

use aes_gcm::aead::AeadInOut;
use aes_gcm::aead::array::Array;
use cipher::consts::{U4, U8, U12, U13, U14, U15, U16};
use cipher::{BlockCipherEncrypt, BlockSizeUser, InOutBuf, KeyInit, KeyIvInit, StreamCipher};
use cipher::{StreamCipherSeek, typenum::Unsigned};
use digest::{Digest, ExtendableOutput, Update};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

/// An error from a bulk operation. Its `Display` is OpenSSL's word for it
/// where @ronomon/crypto-async passes one on (`corrupt`, `initialization failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BulkError {
    /// The tag did not match: the message was forged or damaged. Nothing was written.
    Corrupt,
    /// The key has the wrong length for the algorithm.
    KeySize {
        /// What the algorithm needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The IV has the wrong length for the algorithm.
    IvSize {
        /// What the algorithm needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The tag length is not allowed for the algorithm (or a tag or AAD was given
    /// to a cipher that has none).
    TagSize {
        /// What was given.
        got: usize,
    },
    /// Associated data was given to a cipher that is not an AEAD.
    AadNotAllowed,
    /// The target is shorter than the source, or the digest's output.
    TargetTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
    /// HMAC over an extendable-output function (SHAKE), which OpenSSL refuses.
    InitializationFailed,
    /// The keystream would run past the cipher's counter (more than 256 GiB under
    /// one ChaCha20-Poly1305 nonce).
    TooLong,
}

impl fmt::Display for BulkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Corrupt => f.write_str("corrupt"),
            Self::KeySize { expected, got } => {
                write!(
                    f,
                    "keySize invalid: the key must be {expected} bytes, got {got}"
                )
            }
            Self::IvSize { expected, got } => {
                write!(
                    f,
                    "ivSize invalid: the IV must be {expected} bytes, got {got}"
                )
            }
            Self::TagSize { got } => write!(f, "tagSize invalid: {got} bytes"),
            Self::AadNotAllowed => f.write_str("aadSize invalid: the cipher is not an AEAD"),
            Self::TargetTooShort { needed, got } => {
                write!(f, "target too short: {needed} bytes needed, {got} given")
            }
            Self::InitializationFailed => f.write_str("initialization failed"),
            Self::TooLong => f.write_str("update failed: message too long for the cipher"),
        }
    }
}

impl std::error::Error for BulkError {}

macro_rules! algs {
    ($(#[$m:meta])* $vis:vis enum $name:ident names $table:path { $($(#[$vm:meta])* $v:ident = $n:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        $vis enum $name { $($(#[$vm])* $v = $n,)* }
        impl $name {
            /// Every algorithm, in id order.
            pub const ALL: &'static [Self] = &[$(Self::$v,)*];
            /// The algorithm with this numeric id (its discriminant).
            pub fn from_id(id: u32) -> Option<Self> {
                Self::ALL.get(id as usize).copied()
            }

            /// The algorithm with this OpenSSL name or alias, in any case
            /// (`aes-256-ctr`, `id-aes256-GCM`, `SHA2-256`, `RSA-SHA256`, the OIDs;
            /// and `blake3`, nonceforge's extra).
            pub fn from_name(name: &str) -> Option<Self> {
                lookup($table, name)
            }

            /// Every accepted name and alias, lower case, with its algorithm.
            pub fn names() -> impl Iterator<Item = (&'static str, Self)> {
                $table.iter().copied()
            }

            /// OpenSSL's name (the first in the table).
            pub fn name(self) -> &'static str {
                $table
                    .iter()
                    .find(|(_, a)| *a == self)
                    .map(|(n, _)| *n)
                    .unwrap_or("?")
            }
        }
    };
}

algs! {
    /// A cipher: a stream cipher (CTR mode or ChaCha20) or an AEAD.
    pub enum CipherAlg names names::CIPHERS {
        /// AES-128 in CTR mode.
        Aes128Ctr = 0,
        /// AES-192 in CTR mode.
        Aes192Ctr = 1,
        /// AES-256 in CTR mode.
        Aes256Ctr = 2,
        /// ARIA-128 in CTR mode.
        Aria128Ctr = 3,
        /// ARIA-192 in CTR mode.
        Aria192Ctr = 4,
        /// ARIA-256 in CTR mode.
        Aria256Ctr = 5,
        /// Camellia-128 in CTR mode.
        Camellia128Ctr = 6,
        /// Camellia-192 in CTR mode.
        Camellia192Ctr = 7,
        /// Camellia-256 in CTR mode.
        Camellia256Ctr = 8,
        /// SM4 in CTR mode.
        Sm4Ctr = 9,
        /// ChaCha20 with OpenSSL's 16-byte IV.
        ChaCha20 = 10,
        /// AES-128-GCM.
        Aes128Gcm = 11,
        /// AES-192-GCM.
        Aes192Gcm = 12,
        /// AES-256-GCM.
        Aes256Gcm = 13,
        /// ARIA-128-GCM.
        Aria128Gcm = 14,
        /// ARIA-192-GCM.
        Aria192Gcm = 15,
        /// ARIA-256-GCM.
        Aria256Gcm = 16,
        /// ChaCha20-Poly1305 (RFC 8439).
        ChaCha20Poly1305 = 17,
    }
}

algs! {
    /// A message digest.
    pub enum DigestAlg names names::DIGESTS {
        /// MD5 (broken; for compatibility).
        Md5 = 0,
        /// SHA-1 (broken for collisions; for compatibility).
        Sha1 = 1,
        /// SHA-224.
        Sha224 = 2,
        /// SHA-256.
        Sha256 = 3,
        /// SHA-384.
        Sha384 = 4,
        /// SHA-512.
        Sha512 = 5,
        /// SHA-512/224.
        Sha512_224 = 6,
        /// SHA-512/256.
        Sha512_256 = 7,
        /// SHA3-224.
        Sha3_224 = 8,
        /// SHA3-256.
        Sha3_256 = 9,
        /// SHA3-384.
        Sha3_384 = 10,
        /// SHA3-512.
        Sha3_512 = 11,
        /// SHAKE128 with OpenSSL's default 16-byte output.
        Shake128 = 12,
        /// SHAKE256 with OpenSSL's default 32-byte output.
        Shake256 = 13,
        /// BLAKE2b-512.
        Blake2b512 = 14,
        /// BLAKE2s-256.
        Blake2s256 = 15,
        /// RIPEMD-160.
        Ripemd160 = 16,
        /// MD5 ‖ SHA-1 (TLS 1.0's PRF hash).
        Md5Sha1 = 17,
        /// SM3.
        Sm3 = 18,
        /// BLAKE3 (32 bytes).
        Blake3 = 19,
    }
}

fn lookup<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    if name.len() > 64 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    table.iter().find(|(n, _)| *n == lower).map(|&(_, a)| a)
}

impl CipherAlg {
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        use CipherAlg::*;
        match self {
            Aes128Ctr | Aria128Ctr | Camellia128Ctr | Sm4Ctr | Aes128Gcm | Aria128Gcm => 16,
            Aes192Ctr | Aria192Ctr | Camellia192Ctr | Aes192Gcm | Aria192Gcm => 24,
            Aes256Ctr | Aria256Ctr | Camellia256Ctr | Aes256Gcm | Aria256Gcm => 32,
            ChaCha20 | ChaCha20Poly1305 => 32,
        }
    }

    /// IV length in bytes (the only one accepted: OpenSSL's default).
    pub fn iv_len(self) -> usize {
        if self.is_aead() { 12 } else { 16 }
    }

    /// Whether the cipher authenticates (takes AAD and a tag).
    pub fn is_aead(self) -> bool {
        self as u32 >= CipherAlg::Aes128Gcm as u32
    }

    /// Whether `n` is an allowed tag length: 0 for stream ciphers; 4, 8 or
    /// 12–16 for GCM (NIST SP 800-38D); 1–16 for ChaCha20-Poly1305.
    pub fn tag_len_ok(self, n: usize) -> bool {
        match self {
            CipherAlg::ChaCha20Poly1305 => (1..=16).contains(&n),
            a if a.is_aead() => matches!(n, 4 | 8 | 12..=16),
            _ => n == 0,
        }
    }
}

impl DigestAlg {
    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        use DigestAlg::*;
        match self {
            Md5 | Shake128 => 16,
            Sha1 | Ripemd160 => 20,
            Sha224 | Sha512_224 | Sha3_224 => 28,
            Sha256 | Sha512_256 | Sha3_256 | Shake256 | Blake2s256 | Sm3 | Blake3 => 32,
            Md5Sha1 => 36,
            Sha384 | Sha3_384 => 48,
            Sha512 | Sha3_512 | Blake2b512 => 64,
        }
    }

    /// Whether HMAC is defined over it (not for SHAKE).
    pub fn hmac_ok(self) -> bool {
        !matches!(self, DigestAlg::Shake128 | DigestAlg::Shake256)
    }
}

/// The data a cipher runs over: in place, or from a source into a target of the
/// same length (the two must not overlap; Rust's borrows see to that).
#[derive(Debug)]
pub enum Data<'a> {
    /// Encrypt or decrypt these bytes where they are.
    InPlace(&'a mut [u8]),
    /// Read the source, write the target. `target.len()` must be at least
    /// `source.len()`; only the first `source.len()` bytes are written.
    Copy(&'a [u8], &'a mut [u8]),
}

/// An AEAD tag of 0–16 bytes: read on decryption, written on encryption.
#[derive(Clone, PartialEq, Eq)]
pub struct Tag {
    bytes: [u8; 16],
    len: usize,
}

impl Tag {
    /// A zeroed tag of `len` bytes (0 for stream ciphers).
    pub fn new(len: usize) -> Result<Self, BulkError> {
        if len > 16 {
            return Err(BulkError::TagSize { got: len });
        }
        Ok(Self {
            bytes: [0; 16],
            len,
        })
    }

    /// A tag holding these bytes (to check on decryption).
    pub fn from_slice(bytes: &[u8]) -> Result<Self, BulkError> {
        let mut t = Self::new(bytes.len())?;
        t.bytes[..bytes.len()].copy_from_slice(bytes);
        Ok(t)
    }

    /// The tag's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (a stream cipher's).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({} bytes)", self.len)
    }
}

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

/// Counter blocks encrypted at a time by [`ctr`]: 2 KiB of keystream on the stack.
const CTR_BLOCKS: usize = 128;

/// CTR mode as OpenSSL's: the whole 128-bit block is the counter, big-endian,
/// wrapping at 2^128.
///
/// Written here instead of with the `ctr` crate (kept as the reference in the
/// tests) because that crate was the bottleneck: it encrypts a few blocks per
/// step and XORs them in, and measured here (2 vCPUs, AES-256, 2026-11-21;
/// `node bench/node/bench.js`, and a Rust loop over `apply_keystream_b2b`) it ran at
/// 5.5–6.6 GB/s on 64 KiB–1 MiB and 1.6–1.9 GB/s on 8 MiB, where OpenSSL ran at
/// 7.2 and 6.3–7.2 GB/s. Encrypting 128 counter blocks in one `encrypt_blocks`
/// call (the backend pipelines them: VAES/AES-NI) and XORing 2 KiB at once
/// runs at 9–11 GB/s on 64 KiB–1 MiB and 6–8 GB/s on 8 MiB.
fn ctr<C>(key: &[u8], iv: &[u8], mut buf: InOutBuf<'_, '_, u8>) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + KeyInit,
{
    let c = C::new_from_slice(key).map_err(|_| BulkError::KeySize {
        expected: C::KeySize::USIZE,
        got: key.len(),
    })?;
    let iv: [u8; 16] = iv.try_into().map_err(|_| BulkError::IvSize {
        expected: 16,
        got: iv.len(),
    })?;
    let mut counter = u128::from_be_bytes(iv);
    let mut ks = [Array::<u8, U16>::default(); CTR_BLOCKS];
    while !buf.is_empty() {
        let n = buf.len().min(16 * CTR_BLOCKS);
        let blocks = &mut ks[..n.div_ceil(16)];
        for b in blocks.iter_mut() {
            *b = counter.to_be_bytes().into();
            counter = counter.wrapping_add(1);
        }
        c.encrypt_blocks(blocks);
        let (mut head, tail) = buf.split_at(n);
        let ks = &Array::slice_as_flattened(&ks)[..n];
        let (input, output) = head.reborrow().into_raw();
        if std::ptr::eq(input, output) {
            // In place, `xor_in2out`'s loop over two equal raw pointers does not
            // vectorize (3.5x slower: 562 against 165 µs per MiB with AES-256,
            // this machine); over one `&mut` slice it does.
            for (o, k) in head.into_out().iter_mut().zip(ks) {
                *o ^= k;
            }
        } else {
            head.xor_in2out(ks);
        }
        buf = tail;
    }
    // The keystream is the plaintext's mask: not left on the stack.
    Array::slice_as_flattened_mut(&mut ks).zeroize();
    Ok(())
}

/// OpenSSL's ChaCha20: the 16-byte IV is a 64-bit little-endian block counter
/// (which carries from its low into its high word and wraps at 2^64) followed
/// by an 8-byte nonce — DJB's original layout.
fn chacha20_openssl(key: &[u8], iv: &[u8], buf: InOutBuf<'_, '_, u8>) -> Result<(), BulkError> {
    use cipher::StreamCipherCore;
    let pos = u64::from_le_bytes(iv[..8].try_into().expect("16-byte iv"));
    let nonce = &iv[8..];
    let mut c =
        chacha20::ChaCha20Legacy::new_from_slices(key, nonce).map_err(|_| BulkError::KeySize {
            expected: 32,
            got: key.len(),
        })?;
    // The crate's wrapper stops before block 2^64 - 1; OpenSSL uses that block and
    // goes on at block 0. So: the blocks before it, that block from the core, the rest.
    let before = (u64::MAX - pos).saturating_mul(64);
    let first = buf.len().min(usize::try_from(before).unwrap_or(usize::MAX));
    c.seek(pos as u128 * 64);
    let (head, rest) = buf.split_at(first);
    c.apply_keystream_inout(head);
    if rest.is_empty() {
        return Ok(());
    }
    let last_len = rest.len().min(64);
    let (mut last, tail) = rest.split_at(last_len);
    let mut core = chacha20::ChaCha20LegacyCore::new_from_slices(key, nonce).map_err(|_| {
        BulkError::KeySize {
            expected: 32,
            got: key.len(),
        }
    })?;
    core.set_block_pos(u64::MAX);
    let mut block = Default::default();
    core.write_keystream_block(&mut block);
    last.xor_in2out(&block[..last_len]);
    block.zeroize();
    if !tail.is_empty() {
        c.seek(0u64);
        c.apply_keystream_inout(tail);
    }
    Ok(())
}

/// AES-128/256-GCM and ChaCha20-Poly1305 sealing with a whole 16-byte tag,
/// through ring (BoringSSL's assembly). Measured here (2 vCPUs, 2026-11-21;
/// `node bench/node/bench.js`, "more ciphers"): AES-256-GCM at 64 KiB–1 MiB
/// 9.1 GB/s in a Rust loop against 3.4–3.5 GB/s for the `aes-gcm` crate, and
/// 1.6–2.3× OpenSSL 3 through @ronomon/crypto-async; ChaCha20-Poly1305 at 1 KiB
/// 1.45× OpenSSL where the composition below ran at 0.57× (at 64 KiB and more
/// both run at ~2.3 GB/s, about half of OpenSSL's AVX-512 code). Opening stays
/// with the code below, which checks the tag before it writes: ring decrypts
/// as it authenticates, so a forged message would reach the target.
fn seal_ring(
    alg: &'static ring::aead::Algorithm,
    key: &[u8],
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError> {
    use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
    let key = LessSafeKey::new(UnboundKey::new(alg, key).map_err(|_| BulkError::KeySize {
        expected: alg.key_len(),
        got: key.len(),
    })?);
    let nonce = Nonce::try_assume_unique_for_key(iv).map_err(|_| BulkError::IvSize {
        expected: 12,
        got: iv.len(),
    })?;
    let out = buf.into_out_with_copied_in();
    let t = key
        .seal_in_place_separate_tag(nonce, Aad::from(aad), out)
        .map_err(|_| BulkError::TooLong)?;
    tag.bytes.copy_from_slice(t.as_ref());
    Ok(())
}

fn gcm<C>(
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + KeyInit,
{
    let block = C::new_from_slice(key).map_err(|_| BulkError::KeySize {
        expected: C::KeySize::USIZE,
        got: key.len(),
    })?;
    macro_rules! with_tag {
        ($t:ty) => {
            gcm_tag::<C, $t>(block, encrypt, iv, buf, aad, tag)
        };
    }
    match tag.len {
        4 => with_tag!(U4),
        8 => with_tag!(U8),
        12 => with_tag!(U12),
        13 => with_tag!(U13),
        14 => with_tag!(U14),
        15 => with_tag!(U15),
        16 => with_tag!(U16),
        n => Err(BulkError::TagSize { got: n }),
    }
}

fn gcm_tag<C, T>(
    block: C,
    encrypt: bool,
    iv: &[u8],
    buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>,
    T: aes_gcm::TagSize,
{
    let g = aes_gcm::AesGcm::<C, U12, T>::from(block);
    let nonce = Array::<u8, U12>::try_from(iv).map_err(|_| BulkError::IvSize {
        expected: 12,
        got: iv.len(),
    })?;
    if encrypt {
        let t = g
            .encrypt_inout_detached(&nonce, aad, buf)
            .map_err(|_| BulkError::TooLong)?;
        tag.bytes[..tag.len].copy_from_slice(&t);
        Ok(())
    } else {
        let t = Array::<u8, T>::try_from(tag.as_slice())
            .map_err(|_| BulkError::TagSize { got: tag.len })?;
        g.decrypt_inout_detached(&nonce, aad, buf, &t)
            .map_err(|_| BulkError::Corrupt)
    }
}

/// RFC 8439 §2.8, with the tag truncated to `tag.len` bytes (OpenSSL allows
/// 1–16) and checked in constant time before the ciphertext is decrypted.
fn chacha20_poly1305(
    encrypt: bool,
    key: &[u8],
    iv: &[u8],
    mut buf: InOutBuf<'_, '_, u8>,
    aad: &[u8],
    tag: &mut Tag,
) -> Result<(), BulkError> {
    use poly1305::universal_hash::UniversalHash;
    // 2^32 blocks of 64 bytes, the first for the Poly1305 key.
    if buf.len() as u64 > (u32::MAX as u64 - 1) * 64 {
        return Err(BulkError::TooLong);
    }
    let mut c = chacha20::ChaCha20::new_from_slices(key, iv).map_err(|_| BulkError::KeySize {
        expected: 32,
        got: key.len(),
    })?;
    let mut otk = [0u8; 64];
    c.apply_keystream(&mut otk);
    let mut mac = poly1305::Poly1305::new_from_slice(&otk[..32]).expect("32-byte key");
    otk.zeroize();
    let full = |mac: &mut poly1305::Poly1305, ct: &[u8]| {
        mac.update_padded(aad);
        mac.update_padded(ct);
        let mut lens = poly1305::Block::default();
        lens[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
        lens[8..].copy_from_slice(&(ct.len() as u64).to_le_bytes());
        mac.update(&[lens]);
    };
    if encrypt {
        c.apply_keystream_inout(buf.reborrow());
        full(&mut mac, buf.get_out());
        let t = mac.finalize();
        tag.bytes[..tag.len].copy_from_slice(&t[..tag.len]);
        Ok(())
    } else {
        full(&mut mac, buf.get_in());
        let t = mac.finalize();
        if !bool::from(t[..tag.len].ct_eq(tag.as_slice())) {
            return Err(BulkError::Corrupt);
        }
        c.apply_keystream_inout(buf);
        Ok(())
    }
}

/// Hash `data` into `out`; gives the digest's length. `out` must hold
/// [`DigestAlg::output_len`] bytes; only those are written.
pub fn hash(alg: DigestAlg, data: &[u8], out: &mut [u8]) -> Result<usize, BulkError> {
    let mut h = Hasher::new(alg);
    h.update(data);
    h.finalize_into(out)
}

/// HMAC-`alg`(`key`, `data`) into `out`; gives its length.
pub fn hmac(alg: DigestAlg, key: &[u8], data: &[u8], out: &mut [u8]) -> Result<usize, BulkError> {
    use hmac::{KeyInit as _, Mac, SimpleHmac};
    let n = alg.output_len();
    if !alg.hmac_ok() {
        return Err(BulkError::InitializationFailed);
    }
    if out.len() < n {
        return Err(BulkError::TargetTooShort {
            needed: n,
            got: out.len(),
        });
    }
    macro_rules! mac {
        ($d:ty) => {{
            let mut m = <SimpleHmac<$d>>::new_from_slice(key).expect("HMAC takes any key length");
            Mac::update(&mut m, data);
            out[..n].copy_from_slice(&m.finalize().into_bytes());
        }};
    }
    use DigestAlg::*;
    match alg {
        Md5 => mac!(md5::Md5),
        Sha1 => mac!(sha1::Sha1),
        Sha224 => mac!(sha2::Sha224),
        Sha256 => mac!(sha2::Sha256),
        Sha384 => mac!(sha2::Sha384),
        Sha512 => mac!(sha2::Sha512),
        Sha512_224 => mac!(sha2::Sha512_224),
        Sha512_256 => mac!(sha2::Sha512_256),
        Sha3_224 => mac!(sha3::Sha3_224),
        Sha3_256 => mac!(sha3::Sha3_256),
        Sha3_384 => mac!(sha3::Sha3_384),
        Sha3_512 => mac!(sha3::Sha3_512),
        Blake2b512 => mac!(blake2::Blake2b512),
        Blake2s256 => mac!(blake2::Blake2s256),
        Ripemd160 => mac!(ripemd::Ripemd160),
        Md5Sha1 => mac!(Md5Sha1Digest),
        Sm3 => mac!(sm3::Sm3),
        Blake3 => mac!(blake3::Hasher),
        Shake128 | Shake256 => unreachable!("refused above"),
    }
    Ok(n)
}

/// MD5 ‖ SHA-1 as one digest (block size 64), for HMAC-MD5-SHA1 as OpenSSL.
#[derive(Clone, Default)]
struct Md5Sha1Digest(md5::Md5, sha1::Sha1);

impl digest::HashMarker for Md5Sha1Digest {}
impl digest::OutputSizeUser for Md5Sha1Digest {
    type OutputSize = cipher::consts::U36;
}
impl digest::block_api::BlockSizeUser for Md5Sha1Digest {
    type BlockSize = cipher::consts::U64;
}
impl Update for Md5Sha1Digest {
    fn update(&mut self, data: &[u8]) {
        Digest::update(&mut self.0, data);
        Digest::update(&mut self.1, data);
    }
}
impl digest::FixedOutput for Md5Sha1Digest {
    fn finalize_into(self, out: &mut digest::Output<Self>) {
        out[..16].copy_from_slice(&self.0.finalize());
        out[16..].copy_from_slice(&self.1.finalize());
    }
}
impl digest::Reset for Md5Sha1Digest {
    fn reset(&mut self) {
        *self = Self::default();
    }
}
impl digest::FixedOutputReset for Md5Sha1Digest {
    fn finalize_into_reset(&mut self, out: &mut digest::Output<Self>) {
        digest::FixedOutput::finalize_into(core::mem::take(self), out);
    }
}

/// A streaming hash: feed it in pieces, finish once. Same output as [`hash`]
/// over the concatenation.
#[derive(Clone)]
pub struct Hasher {
    alg: DigestAlg,
    state: State,
}

#[derive(Clone)]
enum State {
    Md5(md5::Md5),
    Sha1(sha1::Sha1),
    Sha224(sha2::Sha224),
    Sha256(sha2::Sha256),
    Sha384(sha2::Sha384),
    Sha512(sha2::Sha512),
    Sha512_224(sha2::Sha512_224),
    Sha512_256(sha2::Sha512_256),
    Sha3_224(sha3::Sha3_224),
    Sha3_256(sha3::Sha3_256),
    Sha3_384(sha3::Sha3_384),
    Sha3_512(sha3::Sha3_512),
    Shake128(sha3::Shake128),
    Shake256(sha3::Shake256),
    Blake2b512(blake2::Blake2b512),
    Blake2s256(blake2::Blake2s256),
    Ripemd160(ripemd::Ripemd160),
    Md5Sha1(Box<Md5Sha1Digest>),
    Sm3(sm3::Sm3),
    Blake3(Box<blake3::Hasher>),
}

impl Hasher {
    /// A new hash state.
    pub fn new(alg: DigestAlg) -> Self {
        use DigestAlg as D;
        let state = match alg {
            D::Md5 => State::Md5(Default::default()),
            D::Sha1 => State::Sha1(Default::default()),
            D::Sha224 => State::Sha224(Default::default()),
            D::Sha256 => State::Sha256(Default::default()),
            D::Sha384 => State::Sha384(Default::default()),
            D::Sha512 => State::Sha512(Default::default()),
            D::Sha512_224 => State::Sha512_224(Default::default()),
            D::Sha512_256 => State::Sha512_256(Default::default()),
            D::Sha3_224 => State::Sha3_224(Default::default()),
            D::Sha3_256 => State::Sha3_256(Default::default()),
            D::Sha3_384 => State::Sha3_384(Default::default()),
            D::Sha3_512 => State::Sha3_512(Default::default()),
            D::Shake128 => State::Shake128(Default::default()),
            D::Shake256 => State::Shake256(Default::default()),
            D::Blake2b512 => State::Blake2b512(Default::default()),
            D::Blake2s256 => State::Blake2s256(Default::default()),
            D::Ripemd160 => State::Ripemd160(Default::default()),
            D::Md5Sha1 => State::Md5Sha1(Default::default()),
            D::Sm3 => State::Sm3(Default::default()),
            D::Blake3 => State::Blake3(Default::default()),
        };
        Self { alg, state }
    }

    /// The algorithm.
    pub fn alg(&self) -> DigestAlg {
        self.alg
    }

    /// Feed more data.
    pub fn update(&mut self, data: &[u8]) {
        match &mut self.state {
            State::Md5(h) => Update::update(h, data),
            State::Sha1(h) => Update::update(h, data),
            State::Sha224(h) => Update::update(h, data),
            State::Sha256(h) => Update::update(h, data),
            State::Sha384(h) => Update::update(h, data),
            State::Sha512(h) => Update::update(h, data),
            State::Sha512_224(h) => Update::update(h, data),
            State::Sha512_256(h) => Update::update(h, data),
            State::Sha3_224(h) => Update::update(h, data),
            State::Sha3_256(h) => Update::update(h, data),
            State::Sha3_384(h) => Update::update(h, data),
            State::Sha3_512(h) => Update::update(h, data),
            State::Shake128(h) => Update::update(h, data),
            State::Shake256(h) => Update::update(h, data),
            State::Blake2b512(h) => Update::update(h, data),
            State::Blake2s256(h) => Update::update(h, data),
            State::Ripemd160(h) => Update::update(h, data),
            State::Md5Sha1(h) => Update::update(&mut **h, data),
            State::Sm3(h) => Update::update(h, data),
            // blake3's own update (its rayon-free SIMD path), not the digest shim.
            State::Blake3(h) => {
                h.update(data);
            }
        }
    }

    /// Finish into `out` (at least [`DigestAlg::output_len`] bytes); gives the length.
    pub fn finalize_into(self, out: &mut [u8]) -> Result<usize, BulkError> {
        let n = self.alg.output_len();
        if out.len() < n {
            return Err(BulkError::TargetTooShort {
                needed: n,
                got: out.len(),
            });
        }
        let out = &mut out[..n];
        match self.state {
            State::Shake128(h) => h.finalize_xof_into(out),
            State::Shake256(h) => h.finalize_xof_into(out),
            State::Md5(h) => out.copy_from_slice(&h.finalize()),
            State::Sha1(h) => out.copy_from_slice(&h.finalize()),
            State::Sha224(h) => out.copy_from_slice(&h.finalize()),
            State::Sha256(h) => out.copy_from_slice(&h.finalize()),
            State::Sha384(h) => out.copy_from_slice(&h.finalize()),
            State::Sha512(h) => out.copy_from_slice(&h.finalize()),
            State::Sha512_224(h) => out.copy_from_slice(&h.finalize()),
            State::Sha512_256(h) => out.copy_from_slice(&h.finalize()),
            State::Sha3_224(h) => out.copy_from_slice(&h.finalize()),
            State::Sha3_256(h) => out.copy_from_slice(&h.finalize()),
            State::Sha3_384(h) => out.copy_from_slice(&h.finalize()),
            State::Sha3_512(h) => out.copy_from_slice(&h.finalize()),
            State::Blake2b512(h) => out.copy_from_slice(&h.finalize()),
            State::Blake2s256(h) => out.copy_from_slice(&h.finalize()),
            State::Ripemd160(h) => out.copy_from_slice(&h.finalize()),
            State::Md5Sha1(h) => out.copy_from_slice(&Digest::finalize(*h)),
            State::Sm3(h) => out.copy_from_slice(&h.finalize()),
            State::Blake3(h) => out.copy_from_slice(blake3::Hasher::finalize(&h).as_bytes()),
        }
        Ok(n)
    }
}

impl fmt::Debug for Hasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hasher({})", self.alg.name())
    }
}

#[cfg(test)]
mod tests;
