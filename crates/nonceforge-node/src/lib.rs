//! The Rust side of the `nonceforge` npm package: thin napi-rs bindings over
//! the core crate, one module per capability (nonces, time-prefixed ids,
//! external ids, the sanitizer, leases, the crypto-async drop-in's bulk jobs
//! and OpenSSL names). The JavaScript in node/ validates arguments, shapes the
//! API and owns the documentation; see node/README.md.
//!
//! Every exported function catches panics (`catch_unwind`), so none crosses
//! into Node: a bug surfaces as a thrown Error, never an abort.

pub mod bulk;
pub mod extid;
pub mod lease;
pub mod nonce;
pub mod openssl;
pub mod sanitizer;
pub mod uuid;

use napi::bindgen_prelude::*;

pub(crate) fn invalid(msg: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, msg.into())
}

/// A core error: a bad argument (napi's InvalidArg; node/lib/errors.js names the
/// argument), or one with a Node error code before its message, which
/// node/lib/errors.js turns into the `code` property.
pub(crate) fn core_err(e: nonceforge::Error) -> Error {
    match e {
        nonceforge::Error::Disabled => coded("ERR_NONCEFORGE_DISABLED", e),
        nonceforge::Error::NonceReuse(_) => coded("ERR_NONCE_REUSE", e),
        nonceforge::Error::ClockBehind { .. } => coded("ERR_NONCEFORGE_CLOCK_BEHIND", e),
        // In Node's words (the core's say `.key(...)`, the Rust builder's).
        nonceforge::Error::NoKey => Error::new(
            Status::InvalidArg,
            "encrypted nonces need a base key: pass options.key (a Buffer of at least 32 bytes) to new NonceGenerator",
        ),
        _ => Error::new(Status::InvalidArg, e.to_string()),
    }
}

pub(crate) fn coded(code: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, format!("{code}: {message}"))
}
