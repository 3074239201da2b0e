//! One cipher or digest over spans: the same code for the calls on the
//! calling thread and on the pool.

use super::span::{CipherArgs, DigestArgs, Span};
use super::{E_ARGS, code};
use napi::Env;
use napi::bindgen_prelude::*;
use nonceforge_bulk::{self as bulk, CipherAlg, Data, DigestAlg, Tag};
use zeroize::Zeroizing;

/// One cipher call, resolved to spans.
pub struct CipherJob {
    pub alg: CipherAlg,
    pub encrypt: bool,
    pub key: Span,
    pub iv: Span,
    pub source: Span,
    pub target: Span,
    pub aad: Span,
    pub tag: Span,
}

impl CipherJob {
    /// Runs the cipher. The source may be the target (in place) or overlap it
    /// (copied first); key, IV, AAD and an expected tag are copied when they
    /// overlap what is written, so every input is read as it was at the call.
    ///
    /// # Safety
    /// Every span is valid for the access it gets and untouched by others
    /// during the call.
    pub unsafe fn run(&self) -> i32 {
        // SAFETY (all blocks below): per this function's contract; each slice is
        // made only where no mutable slice of the same bytes lives.
        // Key and IV to the stack (no allocation per call): they may lie in the
        // target, which is written below. Longer ones are no cipher's.
        let (mut key_buf, mut iv_buf) = (Zeroizing::new([0u8; 32]), [0u8; 16]);
        if self.key.len > key_buf.len() || self.iv.len > iv_buf.len() {
            return E_ARGS;
        }
        let key = &mut key_buf[..self.key.len];
        key.copy_from_slice(unsafe { self.key.slice() });
        let iv = &mut iv_buf[..self.iv.len];
        iv.copy_from_slice(unsafe { self.iv.slice() });
        // The expected tag (decrypt) is read now, before the target is written.
        let made = if self.encrypt {
            Tag::new(self.tag.len)
        } else {
            Tag::from_slice(unsafe { self.tag.slice() })
        };
        let mut tag = match made {
            Ok(t) => t,
            Err(e) => return code(e),
        };
        let aad_copy;
        let aad: &[u8] = if self.aad.overlaps(&self.target) {
            aad_copy = unsafe { self.aad.to_vec() };
            &aad_copy
        } else {
            unsafe { self.aad.slice() }
        };
        if self.alg == CipherAlg::ChaCha20Poly1305
            && self.encrypt
            && self.source.len >= OPENSSL_SEAL_MIN
            && let Some(n) = unsafe { self.seal_openssl(key, iv, aad) }
        {
            return n;
        }
        if self.alg == CipherAlg::ChaCha20
            && self.source.len >= OPENSSL_STREAM_MIN
            && let Some(n) = unsafe { self.chacha20_openssl(key, iv) }
        {
            return n;
        }
        let result = if self.source.ptr == self.target.ptr && self.source.len == self.target.len {
            let buf = unsafe { self.target.slice_mut() };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::InPlace(buf),
                aad,
                &mut tag,
            )
        } else if self.source.overlaps(&self.target) {
            let src = unsafe { self.source.to_vec() };
            let dst = unsafe { self.target.slice_mut() };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::Copy(&src, dst),
                aad,
                &mut tag,
            )
        } else {
            let (src, dst) = unsafe { (self.source.slice(), self.target.slice_mut()) };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::Copy(src, dst),
                aad,
                &mut tag,
            )
        };
        match result {
            Ok(()) => {
                if self.encrypt && self.tag.len > 0 {
                    // SAFETY: the tag span is valid for writes; no slice is live now.
                    unsafe { std::ptr::copy(tag.as_slice().as_ptr(), self.tag.ptr, self.tag.len) };
                }
                self.source.len as i32
            }
            Err(e) => code(e),
        }
    }
}

/// ChaCha20-Poly1305 messages of at least this many bytes are sealed by
/// Node's OpenSSL (see `openssl::evp`); below it the context set-up costs
/// more than OpenSSL's faster code saves, and ring seals them.
const OPENSSL_SEAL_MIN: usize = 4096;

/// ChaCha20 runs through Node's OpenSSL from this many bytes (see
/// `openssl::evp`; the same threshold measured as for the seal).
const OPENSSL_STREAM_MIN: usize = 4096;

impl CipherJob {
    /// Seals through Node's OpenSSL: the bytes written, or `None` to seal
    /// another way (no OpenSSL, or it failed).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    unsafe fn seal_openssl(&self, key: &[u8], iv: &[u8], aad: &[u8]) -> Option<i32> {
        let key: &[u8; 32] = key.try_into().ok()?;
        let nonce: &[u8; 12] = iv.try_into().ok()?;
        let mut tag = [0u8; 16];
        let tag = tag.get_mut(..self.tag.len)?;
        // SAFETY: per this function's contract.
        let (_copy, src) = unsafe { self.source.read_beside(&self.target) };
        // SAFETY: src is the source (or a copy) and the target holds as many
        // bytes; they are equal or disjoint (checked above).
        unsafe {
            crate::openssl::evp::seal_chacha20_poly1305(
                key,
                nonce,
                aad,
                src,
                self.target.ptr,
                self.source.len,
                tag,
            )?
        };
        // SAFETY: the tag span is valid for writes; no slice is live now.
        unsafe { std::ptr::copy(tag.as_ptr(), self.tag.ptr, self.tag.len) };
        Some(self.source.len as i32)
    }
}

impl CipherJob {
    /// ChaCha20 through Node's OpenSSL: the bytes written, or `None` to
    /// run it in Rust (no OpenSSL).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    unsafe fn chacha20_openssl(&self, key: &[u8], iv: &[u8]) -> Option<i32> {
        let key: &[u8; 32] = key.try_into().ok()?;
        let iv: &[u8; 16] = iv.try_into().ok()?;
        // SAFETY: per this function's contract.
        let (_copy, src) = unsafe { self.source.read_beside(&self.target) };
        // SAFETY: src is the source (or a copy) and the target holds as many
        // bytes; they are equal or disjoint (checked above).
        unsafe { crate::openssl::evp::chacha20(key, iv, src, self.target.ptr, self.source.len)? };
        Some(self.source.len as i32)
    }
}

/// One hash or HMAC call.
pub struct DigestJob {
    pub alg: DigestAlg,
    pub key: Option<Span>,
    pub source: Span,
    pub target: Span,
}

impl DigestJob {
    /// # Safety
    /// As [`CipherJob::run`].
    pub unsafe fn run(&self) -> i32 {
        let mut out = [0u8; 64];
        // SAFETY: read-only slices; the target is written after they are dead.
        let n = match self.key {
            None => bulk::hash(self.alg, unsafe { self.source.slice() }, &mut out),
            Some(key) => bulk::hmac(
                self.alg,
                unsafe { key.slice() },
                unsafe { self.source.slice() },
                &mut out,
            ),
        };
        match n {
            Ok(n) if n <= self.target.len => {
                // SAFETY: the target span holds at least n bytes.
                unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), self.target.ptr, n) };
                n as i32
            }
            Ok(_) => E_ARGS,
            Err(e) => code(e),
        }
    }
}

impl CipherJob {
    /// The job over the buffers as they are now (for a call that runs before
    /// it returns).
    pub fn now(env: &Env, alg: CipherAlg, encrypt: bool, a: &CipherArgs<'_, '_>) -> Result<Self> {
        Ok(CipherJob {
            alg,
            encrypt,
            key: a.key.span(env)?,
            iv: a.iv.span(env)?,
            source: a.source.span(env)?,
            target: a.target.span(env)?,
            aad: a.aad.span(env)?,
            tag: a.tag.span(env)?,
        })
    }
}

impl DigestJob {
    /// The job over the buffers as they are now.
    pub fn now(env: &Env, alg: DigestAlg, a: &DigestArgs<'_, '_>) -> Result<Self> {
        Ok(DigestJob {
            alg,
            key: a.key.map(|k| k.span(env)).transpose()?,
            source: a.source.span(env)?,
            target: a.target.span(env)?,
        })
    }
}
