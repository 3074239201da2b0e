//! The calls that run on the calling thread (sync calls, and async calls
//! below `INLINE_MAX`): over the caller's buffers in place, no copy.

use super::job::{CipherJob, DigestJob};
use super::span::{Arg, CipherArgs, DigestArgs};
use super::{cipher_alg, digest_alg};
use napi::bindgen_prelude::*;
use napi::{Env, Unknown};
use napi_derive::napi;
use nonceforge_bulk::DigestAlg;

/// Synchronous cipher: the bytes written, or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn cipher_sync(
    env: Env,
    alg: u32,
    encrypt: u32,
    key: Unknown<'_>,
    key_offset: u32,
    key_size: u32,
    iv: Unknown<'_>,
    iv_offset: u32,
    iv_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
    aad: Unknown<'_>,
    aad_offset: u32,
    aad_size: u32,
    tag: Unknown<'_>,
    tag_offset: u32,
    tag_size: u32,
) -> Result<i32> {
    let args = CipherArgs {
        key: Arg::new(&key, key_offset, key_size, "key"),
        iv: Arg::new(&iv, iv_offset, iv_size, "iv"),
        source: Arg::new(&source, source_offset, source_size, "source"),
        target: Arg::new(&target, target_offset, source_size, "target"),
        aad: Arg::new(&aad, aad_offset, aad_size, "aad"),
        tag: Arg::new(&tag, tag_offset, tag_size, "tag"),
    };
    let job = CipherJob::now(&env, cipher_alg(alg)?, encrypt == 1, &args)?;
    // SAFETY: the spans are in range of live JS buffers, and JS is blocked in this call.
    Ok(unsafe { job.run() })
}

/// A hash or HMAC on this thread: the digest's length, or a negative code.
fn digest_now(env: &Env, alg: DigestAlg, args: &DigestArgs<'_, '_>) -> Result<i32> {
    let job = DigestJob::now(env, alg, args)?;
    // SAFETY: as in cipher_sync.
    Ok(unsafe { job.run() })
}

/// Synchronous hash: the digest's length, or a negative code.
#[napi(catch_unwind)]
pub fn hash_sync(
    env: Env,
    alg: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<i32> {
    let alg = digest_alg(alg)?;
    let n = alg.output_len() as u32;
    let args = DigestArgs {
        key: None,
        source: Arg::new(&source, source_offset, source_size, "source"),
        target: Arg::new(&target, target_offset, n, "target"),
    };
    digest_now(&env, alg, &args)
}

/// Synchronous HMAC: the MAC's length, or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn hmac_sync(
    env: Env,
    alg: u32,
    key: Unknown<'_>,
    key_offset: u32,
    key_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<i32> {
    let alg = digest_alg(alg)?;
    let n = alg.output_len() as u32;
    let args = DigestArgs {
        key: Some(Arg::new(&key, key_offset, key_size, "key")),
        source: Arg::new(&source, source_offset, source_size, "source"),
        target: Arg::new(&target, target_offset, n, "target"),
    };
    digest_now(&env, alg, &args)
}
