//! The one error type of the crate.

use core::fmt;

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
