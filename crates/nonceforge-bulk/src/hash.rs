//! One-shot and streaming hashes.

use core::fmt;

use crate::hmac::Md5Sha1Digest;
use crate::{BulkError, DigestAlg};
use digest::{Digest, ExtendableOutput, Update};

/// Hash `data` into `out`; gives the digest's length. `out` must hold
/// [`DigestAlg::output_len`] bytes; only those are written.
pub fn hash(alg: DigestAlg, data: &[u8], out: &mut [u8]) -> Result<usize, BulkError> {
    let mut h = Hasher::new(alg);
    h.update(data);
    h.finalize_into(out)
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
