//! The one error type of the crate.

/// An error from a bulk operation. Its `Display` is OpenSSL's word for it
/// where @ronomon/crypto-async passes one on (`corrupt`, `initialization failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BulkError {
    /// The tag did not match: the message was forged or damaged. Nothing was written.
    #[error("corrupt")]
    Corrupt,
    /// The key has the wrong length for the algorithm.
    #[error("keySize invalid: the key must be {expected} bytes, got {got}")]
    KeySize {
        /// What the algorithm needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The IV has the wrong length for the algorithm.
    #[error("ivSize invalid: the IV must be {expected} bytes, got {got}")]
    IvSize {
        /// What the algorithm needs.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// The tag length is not allowed for the algorithm (or a tag or AAD was given
    /// to a cipher that has none).
    #[error("tagSize invalid: {got} bytes")]
    TagSize {
        /// What was given.
        got: usize,
    },
    /// Associated data was given to a cipher that is not an AEAD.
    #[error("aadSize invalid: the cipher is not an AEAD")]
    AadNotAllowed,
    /// The target is shorter than the source, or the digest's output.
    #[error("target too short: {needed} bytes needed, {got} given")]
    TargetTooShort {
        /// Bytes needed.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
    /// HMAC over an extendable-output function (SHAKE), which OpenSSL refuses.
    #[error("initialization failed")]
    InitializationFailed,
    /// The keystream would run past the cipher's counter (more than 256 GiB under
    /// one ChaCha20-Poly1305 nonce).
    #[error("update failed: message too long for the cipher")]
    TooLong,
}
