//! The streaming hash (`createHash`-like) behind node/lib/bulk.js.

use super::digest_alg;
use super::span::Arg;
use napi::bindgen_prelude::*;
use napi::{Env, Unknown};
use napi_derive::napi;
use nonceforge_bulk as bulk;

/// A streaming hash (`createHash`-like): update as data comes, digest once.
#[napi]
pub struct StreamingHash {
    inner: Option<bulk::Hasher>,
}

#[napi]
impl StreamingHash {
    /// A new state for the digest with this id.
    #[napi(constructor, catch_unwind)]
    pub fn new(alg: u32) -> Result<Self> {
        Ok(Self {
            inner: Some(bulk::Hasher::new(digest_alg(alg)?)),
        })
    }

    /// Feed `data[offset .. offset + size]`.
    #[napi(catch_unwind)]
    pub fn update(&mut self, env: Env, data: Unknown<'_>, offset: u32, size: u32) -> Result<()> {
        let h = self
            .inner
            .as_mut()
            .ok_or_else(|| Error::new(Status::GenericFailure, "digest already called"))?;
        let s = Arg::new(&data, offset, size, "data").span(&env)?;
        // SAFETY: in range of a live buffer; JS is blocked in this call.
        h.update(unsafe { s.slice() });
        Ok(())
    }

    /// Finish: the digest. The state cannot be used afterwards.
    #[napi(catch_unwind)]
    pub fn digest(&mut self) -> Result<Buffer> {
        let h = self
            .inner
            .take()
            .ok_or_else(|| Error::new(Status::GenericFailure, "digest already called"))?;
        let mut out = vec![0u8; h.alg().output_len()];
        h.finalize_into(&mut out)
            .map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(out.into())
    }
}
