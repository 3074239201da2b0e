//! The bit layout of every nonce, compatible with NoNoncense.
//!
//! Nonces are big-endian: byte 0 holds the most significant bits, so sorting the
//! bytes sorts by timestamp first.
//!
//! ```text
//!  64 bits   0                                        42        51            64
//!            +----------------------------------------+---------+-------------+
//!            | timestamp: ms since the epoch (42)     | machine | counter (13)|
//!            |                                        | id (9)  |             |
//!            +----------------------------------------+---------+-------------+
//!
//!  96 bits   0                                        42        51                        96
//!            +----------------------------------------+---------+-------------------------+
//!            | timestamp (42)                         | machine | counter (45)            |
//!            +----------------------------------------+---------+-------------------------+
//!
//! 128 bits   0                                        42        51       64                          128
//!            +----------------------------------------+---------+--------+---------------------------+
//!            | timestamp (42)                         | machine | 0 (13) | counter (64)              |
//!            +----------------------------------------+---------+--------+---------------------------+
//! ```
//!
//! The timestamp counts milliseconds since the generator's epoch (by default
//! 2025-01-01T00:00:00Z); 42 bits last 139.4 years, until 2164-05-15 with the
//! default epoch.
//!
//! What the timestamp means depends on the kind:
//! - **counter**: the generator's start time. In 64- and 96-bit counter nonces the
//!   counter carries into the timestamp when it overflows (the machine id bits are
//!   skipped), and the generator never lets that timestamp pass the clock.
//! - **sortable**: the millisecond the nonce was made; the counter restarts at 0
//!   every millisecond.
//! - **encrypted**: a counter nonce, encrypted; [`decompose`] works on the decrypted one.

use crate::error::{Error, Result};

/// Bits of the millisecond timestamp.
pub const TIMESTAMP_BITS: u32 = 42;
/// Bits of the machine id.
pub const MACHINE_ID_BITS: u32 = 9;
/// The first millisecond (since the epoch) that does not fit the timestamp.
pub const TIMESTAMP_END: u64 = 1 << TIMESTAMP_BITS;
/// The default epoch: 2025-01-01T00:00:00Z in milliseconds since 1970.
pub const DEFAULT_EPOCH_UNIX_MS: u64 = 1_735_689_600_000;

/// The size of a nonce: 64, 96 or 128 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bits {
    /// 8 bytes.
    B64 = 0,
    /// 12 bytes (the nonce size of AES-GCM and ChaCha20-Poly1305).
    B96 = 1,
    /// 16 bytes.
    B128 = 2,
}

impl Bits {
    /// All sizes, smallest first.
    pub const ALL: [Bits; 3] = [Bits::B64, Bits::B96, Bits::B128];

    /// The size for a number of bits; fails unless it is 64, 96 or 128.
    pub fn new(bits: u64) -> Result<Self> {
        match bits {
            64 => Ok(Bits::B64),
            96 => Ok(Bits::B96),
            128 => Ok(Bits::B128),
            value => Err(Error::InvalidSize { value }),
        }
    }

    /// The number of bits.
    pub const fn bits(self) -> u32 {
        match self {
            Bits::B64 => 64,
            Bits::B96 => 96,
            Bits::B128 => 128,
        }
    }

    /// The number of bytes.
    pub const fn bytes(self) -> usize {
        self.bits() as usize / 8
    }

    /// Bits of the counter field (64 for 128-bit nonces; 13 zero bits precede it).
    pub const fn counter_bits(self) -> u32 {
        match self {
            Bits::B64 => 13,
            Bits::B96 => 45,
            Bits::B128 => 64,
        }
    }
}

impl std::fmt::Display for Bits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.bits().fmt(f)
    }
}

/// The three fields of a plain (not encrypted) nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NonceParts {
    /// Milliseconds since the epoch.
    pub timestamp_ms: u64,
    /// Milliseconds since 1970 (the epoch added).
    pub unix_ms: u64,
    /// The machine id.
    pub machine_id: u16,
    /// The counter field.
    pub counter: u64,
}

/// Puts the three fields together into the nonce's value (big-endian integer).
///
/// Fields wider than their slot are cut to it; callers validate first.
#[inline(always)]
pub const fn compose(bits: Bits, timestamp_ms: u64, machine_id: u16, counter: u64) -> u128 {
    let ts = (timestamp_ms & (TIMESTAMP_END - 1)) as u128;
    let m = (machine_id & 0x1ff) as u128;
    match bits {
        Bits::B64 => (ts << 22) | (m << 13) | (counter & 0x1fff) as u128,
        Bits::B96 => (ts << 54) | (m << 45) | (counter & ((1 << 45) - 1)) as u128,
        Bits::B128 => (ts << 86) | (m << 77) | counter as u128,
    }
}

/// Takes a nonce value apart, with `epoch_unix_ms` to give `unix_ms`.
pub const fn decompose_value(bits: Bits, value: u128, epoch_unix_ms: u64) -> NonceParts {
    let (ts, m, counter) = match bits {
        Bits::B64 => (value >> 22, (value >> 13) & 0x1ff, value & 0x1fff),
        Bits::B96 => (value >> 54, (value >> 45) & 0x1ff, value & ((1 << 45) - 1)),
        Bits::B128 => (
            value >> 86,
            (value >> 77) & 0x1ff,
            value & (u64::MAX as u128),
        ),
    };
    let timestamp_ms = (ts as u64) & (TIMESTAMP_END - 1);
    NonceParts {
        timestamp_ms,
        // Wrapping: an epoch before 1970 is a negative number in two's complement.
        unix_ms: timestamp_ms.wrapping_add(epoch_unix_ms),
        machine_id: m as u16,
        counter: counter as u64,
    }
}

/// Reads the nonce in `bytes` (8, 12 or 16 bytes, big-endian) as an integer.
pub fn value_from_bytes(argument: &'static str, bytes: &[u8]) -> Result<(Bits, u128)> {
    let bits = match bytes.len() {
        8 => Bits::B64,
        12 => Bits::B96,
        16 => Bits::B128,
        len => {
            return Err(Error::NonceLength { argument, len });
        }
    };
    let mut buf = [0u8; 16];
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok((bits, u128::from_be_bytes(buf)))
}

/// Takes apart the plain nonce in `bytes` (its size from its length).
///
/// ```
/// use nonceforge::{decompose, layout::DEFAULT_EPOCH_UNIX_MS};
/// let parts = decompose(&[0, 0, 0, 0, 0, 0x40, 0x20, 0x05], DEFAULT_EPOCH_UNIX_MS).unwrap();
/// assert_eq!((parts.timestamp_ms, parts.machine_id, parts.counter), (1, 1, 5));
/// ```
pub fn decompose(bytes: &[u8], epoch_unix_ms: u64) -> Result<NonceParts> {
    let (bits, v) = value_from_bytes("nonce", bytes)?;
    if bits == Bits::B128 && (v >> 64) & 0x1fff != 0 {
        // 13 bits that a plain 128-bit nonce always has clear.
        return Err(Error::NotPlainNonce { argument: "nonce" });
    }
    Ok(decompose_value(bits, v, epoch_unix_ms))
}

/// The low `N` bytes of `value`, big-endian.
#[inline(always)]
pub(crate) fn to_bytes<const N: usize>(value: u128) -> [u8; N] {
    let all = value.to_be_bytes();
    let mut out = [0u8; N];
    out.copy_from_slice(&all[16 - N..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn compose_decompose_round_trip(ts in 0..TIMESTAMP_END, m in 0u16..512, c: u64, b in 0usize..3) {
            let bits = Bits::ALL[b];
            let c = match bits { Bits::B128 => c, _ => c & ((1u64 << bits.counter_bits()) - 1) };
            let v = compose(bits, ts, m, c);
            prop_assert!(bits == Bits::B128 || v >> bits.bits() == 0);
            let p = decompose_value(bits, v, 10);
            prop_assert_eq!((p.timestamp_ms, p.machine_id, p.counter, p.unix_ms), (ts, m, c, ts + 10));
            let bytes = v.to_be_bytes();
            let p2 = decompose(&bytes[16 - bits.bytes()..], 10).unwrap();
            prop_assert_eq!(p, p2);
        }

        #[test]
        fn order_of_bytes_is_order_of_fields(a in 0..TIMESTAMP_END, b in 0..TIMESTAMP_END, m in 0u16..512, c1 in 0u64..8192, c2 in 0u64..8192) {
            let x = to_bytes::<8>(compose(Bits::B64, a, m, c1));
            let y = to_bytes::<8>(compose(Bits::B64, b, m, c2));
            prop_assert_eq!(x.cmp(&y), (a, c1).cmp(&(b, c2)));
        }
    }

    #[test]
    fn edges() {
        let max = compose(Bits::B64, TIMESTAMP_END - 1, 511, 8191);
        assert_eq!(max, u64::MAX as u128);
        assert_eq!(
            compose(Bits::B96, TIMESTAMP_END - 1, 511, (1 << 45) - 1),
            (1u128 << 96) - 1
        );
        assert_eq!(compose(Bits::B128, 0, 0, u64::MAX), u64::MAX as u128);
        assert_eq!(compose(Bits::B128, 1, 0, 0), 1u128 << 86);
        assert!(decompose(&[0u8; 7], 0).is_err());
        assert!(decompose(&[0u8; 17], 0).is_err());
        let mut with_middle = [0u8; 16];
        with_middle[7] = 1;
        assert_eq!(
            decompose(&with_middle, 0),
            Err(Error::NotPlainNonce { argument: "nonce" })
        );
        let e = decompose(&[0u8; 7], 0).unwrap_err().to_string();
        assert!(e.contains("8, 12 or 16") && e.contains("got 7"), "{e}");
        assert_eq!(Bits::new(96).unwrap(), Bits::B96);
        assert_eq!(Bits::new(32), Err(Error::InvalidSize { value: 32 }));
    }
}
