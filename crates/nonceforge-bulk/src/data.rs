//! What a cipher runs over, and the AEAD tag.

use core::fmt;

use crate::BulkError;

/// The data a cipher runs over: in place, or from a source into a target of the
/// same length (the two must not overlap; Rust's borrows see to that).
#[derive(Debug)]
pub enum Data<'a> {
    /// Encrypt or decrypt these bytes where they are.
    InPlace(&'a mut [u8]),
    /// Read the source, write the target. `target.len()` must be at least
    /// `source.len()`; only the first `source.len()` bytes are written.
    Copy(&'a [u8], &'a mut [u8]),
}

/// An AEAD tag of 0–16 bytes: read on decryption, written on encryption.
#[derive(Clone, PartialEq, Eq)]
pub struct Tag {
    pub(crate) bytes: [u8; 16],
    pub(crate) len: usize,
}

impl Tag {
    /// A zeroed tag of `len` bytes (0 for stream ciphers).
    pub fn new(len: usize) -> Result<Self, BulkError> {
        if len > 16 {
            return Err(BulkError::TagSize { got: len });
        }
        Ok(Self {
            bytes: [0; 16],
            len,
        })
    }

    /// A tag holding these bytes (to check on decryption).
    pub fn from_slice(bytes: &[u8]) -> Result<Self, BulkError> {
        let mut t = Self::new(bytes.len())?;
        t.bytes[..bytes.len()].copy_from_slice(bytes);
        Ok(t)
    }

    /// The tag's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (a stream cipher's).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({} bytes)", self.len)
    }
}
