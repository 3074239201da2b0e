//! A nonce of a kind and size chosen at run time, and its kinds.

use super::layout::Bits;
use crate::error::{Error, Result};

/// The kind of a nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NonceKind {
    /// Unique and predictable; the fastest.
    Counter,
    /// Unique, strictly increasing per generator, carrying its creation millisecond.
    Sortable,
    /// Unique and unpredictable: a counter nonce through a block cipher.
    Encrypted,
}

impl NonceKind {
    /// The kind's name (`counter`, `sortable`, `encrypted`).
    pub const fn name(self) -> &'static str {
        match self {
            NonceKind::Counter => "counter",
            NonceKind::Sortable => "sortable",
            NonceKind::Encrypted => "encrypted",
        }
    }
}

/// A nonce of any size, for code that picks the size at run time.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Nonce {
    pub(super) bits: Bits,
    pub(super) value: u128,
}

impl Nonce {
    /// A nonce of `bits` from its big-endian integer value (higher bits are dropped).
    pub const fn from_value(bits: Bits, value: u128) -> Self {
        let value = match bits {
            Bits::B128 => value,
            _ => value & ((1u128 << bits.bits()) - 1),
        };
        Nonce { bits, value }
    }
    /// Its size.
    pub const fn bits(&self) -> Bits {
        self.bits
    }
    /// Its value as an unsigned big-endian integer.
    pub const fn to_u128(&self) -> u128 {
        self.value
    }
    /// Its bytes, big-endian (8, 12 or 16 of them).
    pub fn to_vec(&self) -> Vec<u8> {
        self.value.to_be_bytes()[16 - self.bits.bytes()..].to_vec()
    }
    /// Writes its bytes into `out`, which must be exactly as long as the nonce.
    pub fn write_to(&self, out: &mut [u8]) -> Result<()> {
        if out.len() != self.bits.bytes() {
            return Err(Error::OutputLength {
                argument: "out",
                expected: self.bits.bytes(),
                len: out.len(),
            });
        }
        out.copy_from_slice(&self.value.to_be_bytes()[16 - self.bits.bytes()..]);
        Ok(())
    }
}

impl std::fmt::Debug for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nonce{}({self})", self.bits.bits())
    }
}

/// Lower-case hex, zero-padded to the full width.
impl std::fmt::Display for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:0w$x}", self.value, w = self.bits.bytes() * 2)
    }
}
