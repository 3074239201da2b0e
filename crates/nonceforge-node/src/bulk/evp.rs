//! crypto-async 1.0.2's ciphers: any cipher Node's OpenSSL knows by name
//! (CBC and the other block modes included), with OpenSSL's PKCS#7 padding,
//! so that the output may be longer (encrypting) or shorter (decrypting) than
//! the input. node/lib/crypto-async-1.js is the entry point; the default
//! drop-in keeps 5.0.1's list (node/README.md says why).

use super::span::Span;
use super::{E_FINAL, E_INIT, E_UPDATE};
use crate::openssl::evp::Named;
use napi_derive::napi;

/// One 1.0.2 cipher call, resolved to spans.
pub struct EvpJob {
    pub cipher: Named,
    pub encrypt: bool,
    pub key: Span,
    pub iv: Span,
    pub source: Span,
    /// `cipher.room(encrypt, source.len)` bytes.
    pub target: Span,
}

impl EvpJob {
    /// Runs it: the bytes written, or `E_INIT`, `E_UPDATE`, `E_FINAL`.
    ///
    /// # Safety
    /// Every span is valid for the access it gets and untouched by others
    /// during the call; the key and IV spans are the cipher's lengths.
    pub unsafe fn run(&self) -> i32 {
        if self.key.len != self.cipher.key_len
            || self.iv.len != self.cipher.iv_len
            || self.target.len < self.cipher.room(self.encrypt, self.source.len)
        {
            return super::E_ARGS;
        }
        // OpenSSL works in place when both pointers are equal; a partial
        // overlap reads from a copy.
        // SAFETY: per this function's contract.
        let (_copy, src) = unsafe { self.source.read_beside(&self.target) };
        // SAFETY: per this function's contract; the target has the room
        // OpenSSL needs (checked above).
        let r = unsafe {
            self.cipher.crypt(
                self.encrypt,
                self.key.ptr,
                self.iv.ptr,
                src,
                self.source.len,
                self.target.ptr,
            )
        };
        match r {
            Ok(n) => n as i32,
            Err(0) => E_INIT,
            Err(1) => E_UPDATE,
            Err(_) => E_FINAL,
        }
    }
}

/// What 1.0.2 checks of a cipher name: `[keyLength, ivLength, blockSize]`,
/// or `null` when Node's OpenSSL knows no such cipher (or there is none).
#[napi(catch_unwind)]
pub fn evp_cipher_info(name: String) -> Option<Vec<u32>> {
    let c = Named::find(&name)?;
    Some(vec![c.key_len as u32, c.iv_len as u32, c.block_size as u32])
}
