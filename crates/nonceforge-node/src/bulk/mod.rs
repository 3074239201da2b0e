//! cipher / hash / HMAC over caller-owned buffers, sync and on the libuv pool
//! (node/lib/crypto-async.js, node/lib/bulk.js and node/lib/crypto-async-1.js
//! call these; see ../../README.md for the map).
//!
//! The JavaScript side validates every argument first (the checks and
//! messages of @ronomon/crypto-async, in its order); what reaches these
//! functions is in range. They still re-check what memory safety depends on
//! (ranges and algorithm ids) and return a negative code rather than throw:
//! the wrapper turns it into the Error the original would give.
//!
//! - [`span`]: a byte range of a JS buffer, and [`span::Arg`], the
//!   `(buffer, offset, size)` triple every call takes;
//! - [`job`]: one cipher or digest over spans, the same code for every path;
//! - [`sync`]: the calls that run on the calling thread;
//! - [`pool`]: the calls that run on the libuv pool, zero-copy where V8's
//!   backing store can be pinned ([`pin`]), else over copies ([`spare`]);
//! - [`evp`]: crypto-async 1.0.2's ciphers, any OpenSSL mode by name;
//! - [`stream`]: the streaming hash; [`names`]: the algorithm tables.

pub mod evp;
pub mod job;
pub mod names;
pub mod pin;
pub mod pool;
pub mod span;
pub mod spare;
pub mod stream;
pub mod sync;

pub(crate) use span::buffer_info;

use napi::bindgen_prelude::*;
use nonceforge_bulk::{BulkError, CipherAlg, DigestAlg};

/// Result codes below zero (the wrappers' tables map them to messages).
pub(crate) const E_CORRUPT: i32 = -1;
pub(crate) const E_INIT: i32 = -2;
pub(crate) const E_UPDATE: i32 = -3;
pub(crate) const E_ARGS: i32 = -4;
/// A pool job's target (or a seal's tag, or a digest's target) was detached,
/// transferred or shrunk before the job ended.
pub(crate) const E_TARGET_DETACHED: i32 = -5;
/// A pool job's source was detached, transferred or shrunk before the job
/// ended: what the job read may not be what was there at the call.
pub(crate) const E_SOURCE_DETACHED: i32 = -6;
/// crypto-async 1.0.2's cipher: `EVP_CipherFinal_ex` failed (bad padding).
pub(crate) const E_FINAL: i32 = -7;

pub(crate) fn code(e: BulkError) -> i32 {
    match e {
        BulkError::Corrupt => E_CORRUPT,
        BulkError::InitializationFailed => E_INIT,
        BulkError::TooLong => E_UPDATE,
        _ => E_ARGS,
    }
}

pub(crate) fn cipher_alg(id: u32) -> Result<CipherAlg> {
    CipherAlg::from_id(id)
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("algorithm id {id} unknown")))
}

pub(crate) fn digest_alg(id: u32) -> Result<DigestAlg> {
    DigestAlg::from_id(id)
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("algorithm id {id} unknown")))
}
