//! HMAC over every digest but SHAKE.

use crate::{BulkError, DigestAlg};
use digest::{Digest, Update};

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
pub(crate) struct Md5Sha1Digest(md5::Md5, sha1::Sha1);

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
