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
//!
//! # The wide layout
//!
//! [`Layout::Wide`], chosen explicitly, gives the machine id 16 bits (65,536
//! members) at 96 and 128 bits; the timestamp stays 42 bits, so wide and
//! standard nonces of one epoch end on the same day:
//!
//! ```text
//!  96 bits   0                                        42                58                   96
//!            +----------------------------------------+-----------------+--------------------+
//!            | timestamp (42)                         | machine id (16) | counter (38)       |
//!            +----------------------------------------+-----------------+--------------------+
//!
//! 128 bits   0                                        42                58     64                          128
//!            +----------------------------------------+-----------------+------+---------------------------+
//!            | timestamp (42)                         | machine id (16) | 0 (6)| counter (64)              |
//!            +----------------------------------------+-----------------+------+---------------------------+
//! ```
//!
//! The seven bits come out of the 96-bit counter (2^38 = 275 billion nonces
//! per start millisecond before it carries, against 2^45) and out of the
//! 128-bit nonce's zero bits (the 64-bit counter is whole). A 64-bit nonce has
//! no room: seven bits from its 13-bit counter would leave 64 nonces a
//! millisecond per member, and seven from its timestamp 1.1 years of range,
//! so the wide layout refuses 64 bits ([`Error::WideLayoutNo64`]).
//! docs/contracts.md gives the trade-off in full.

use crate::error::{Error, Result};

/// Bits of the millisecond timestamp.
pub const TIMESTAMP_BITS: u32 = 42;
/// Bits of the machine id (the standard layout).
pub const MACHINE_ID_BITS: u32 = 9;
/// Bits of the machine id in the wide layout ([`Layout::Wide`]).
pub const WIDE_MACHINE_ID_BITS: u32 = 16;
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

/// Where the machine id sits in a nonce, and how wide it is: NoNoncense's 9
/// bits (the default) or 16 bits at 96 and 128 bits. Every member of a fleet
/// uses one layout (a lease namespace records it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// NoNoncense's layout: a 9-bit machine id (0..=511), every size.
    #[default]
    Standard = 0,
    /// A 16-bit machine id (0..=65535), 96- and 128-bit nonces only.
    Wide = 1,
}

impl Layout {
    /// Both layouts, the default first.
    pub const ALL: [Layout; 2] = [Layout::Standard, Layout::Wide];

    /// The layout named `name`: `standard` or `wide`.
    ///
    /// ```
    /// use nonceforge::layout::Layout;
    /// assert_eq!(Layout::parse("wide").unwrap(), Layout::Wide);
    /// assert!(Layout::parse("16").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "standard" => Ok(Layout::Standard),
            "wide" => Ok(Layout::Wide),
            _ => Err(Error::InvalidLayout {
                value: name.chars().take(40).collect(),
            }),
        }
    }

    /// The layout's name, as [`parse`](Self::parse) reads it.
    pub const fn name(self) -> &'static str {
        match self {
            Layout::Standard => "standard",
            Layout::Wide => "wide",
        }
    }

    /// Bits of the machine id: 9 or 16.
    pub const fn machine_id_bits(self) -> u32 {
        match self {
            Layout::Standard => MACHINE_ID_BITS,
            Layout::Wide => WIDE_MACHINE_ID_BITS,
        }
    }

    /// The largest machine id: 511 or 65535.
    pub const fn max_machine_id(self) -> u16 {
        ((1u32 << self.machine_id_bits()) - 1) as u16
    }

    /// Whether the layout has nonces of `bits` (the wide one has no 64-bit nonces).
    pub const fn has(self, bits: Bits) -> bool {
        !matches!((self, bits), (Layout::Wide, Bits::B64))
    }

    /// Fails with [`Error::WideLayoutNo64`] unless the layout has nonces of `bits`.
    pub fn check(self, bits: Bits) -> Result<()> {
        if self.has(bits) {
            Ok(())
        } else {
            Err(Error::WideLayoutNo64)
        }
    }

    /// Where the machine id starts, counted from the least significant bit:
    /// below it lies the counter field (and, at 128 bits, the zero bits).
    #[inline(always)]
    pub const fn machine_shift(self, bits: Bits) -> u32 {
        bits.bits() - TIMESTAMP_BITS - self.machine_id_bits()
    }

    /// Bits of the counter field: 13, 45 and 64 (standard); 38 and 64 (wide;
    /// 64-bit nonces: 13, unused).
    #[inline(always)]
    pub const fn counter_bits(self, bits: Bits) -> u32 {
        match (self, bits) {
            (Layout::Wide, Bits::B96) => 38,
            _ => bits.counter_bits(),
        }
    }

    /// Puts the three fields together into the nonce's value (big-endian
    /// integer). Fields wider than their slot are cut to it; callers validate
    /// first.
    #[inline(always)]
    pub const fn compose(
        self,
        bits: Bits,
        timestamp_ms: u64,
        machine_id: u16,
        counter: u64,
    ) -> u128 {
        let ts = (timestamp_ms & (TIMESTAMP_END - 1)) as u128;
        let m = (machine_id as u128) & ((1 << self.machine_id_bits()) - 1);
        let k = self.counter_bits(bits);
        let c = if k == 64 {
            counter as u128
        } else {
            (counter & ((1 << k) - 1)) as u128
        };
        let shift = self.machine_shift(bits);
        (ts << (shift + self.machine_id_bits())) | (m << shift) | c
    }

    /// Takes a nonce value apart, with `epoch_unix_ms` to give `unix_ms`.
    pub const fn decompose_value(self, bits: Bits, value: u128, epoch_unix_ms: u64) -> NonceParts {
        let shift = self.machine_shift(bits);
        let k = self.counter_bits(bits);
        let ts = (value >> (shift + self.machine_id_bits())) as u64 & (TIMESTAMP_END - 1);
        let m = (value >> shift) as u64 & ((1 << self.machine_id_bits()) - 1);
        let counter = if k == 64 {
            value as u64
        } else {
            value as u64 & ((1 << k) - 1)
        };
        NonceParts {
            timestamp_ms: ts,
            // Wrapping: an epoch before 1970 is a negative number in two's complement.
            unix_ms: ts.wrapping_add(epoch_unix_ms),
            machine_id: m as u16,
            counter,
        }
    }

    /// Takes apart the plain nonce in `bytes` (its size from its length) in
    /// this layout.
    ///
    /// ```
    /// use nonceforge::layout::{Layout, DEFAULT_EPOCH_UNIX_MS};
    /// let hex = "000000000070d4000000002a"; // 96 bits: ms 1, machine 50,000, counter 42
    /// let bytes: Vec<u8> = (0..12).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
    /// let parts = Layout::Wide.decompose(&bytes, DEFAULT_EPOCH_UNIX_MS).unwrap();
    /// assert_eq!((parts.timestamp_ms, parts.machine_id, parts.counter), (1, 50_000, 42));
    /// assert!(Layout::Wide.decompose(&[0u8; 8], 0).is_err()); // no 64-bit nonces
    /// ```
    pub fn decompose(self, bytes: &[u8], epoch_unix_ms: u64) -> Result<NonceParts> {
        let (bits, v) = value_from_bytes("nonce", bytes)?;
        self.check(bits)?;
        if bits == Bits::B128 {
            // The bits between the machine id and the counter, always clear in
            // a plain 128-bit nonce.
            let gap = self.machine_shift(bits) - 64;
            if (v >> 64) & ((1 << gap) - 1) != 0 {
                return Err(Error::NotPlainNonce { argument: "nonce" });
            }
        }
        Ok(self.decompose_value(bits, v, epoch_unix_ms))
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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

/// Puts the three fields together into the nonce's value (big-endian integer),
/// in the standard layout ([`Layout::compose`] for either).
///
/// Fields wider than their slot are cut to it; callers validate first.
#[inline(always)]
pub const fn compose(bits: Bits, timestamp_ms: u64, machine_id: u16, counter: u64) -> u128 {
    Layout::Standard.compose(bits, timestamp_ms, machine_id, counter)
}

/// Takes a nonce value apart in the standard layout, with `epoch_unix_ms` to
/// give `unix_ms` ([`Layout::decompose_value`] for either).
pub const fn decompose_value(bits: Bits, value: u128, epoch_unix_ms: u64) -> NonceParts {
    Layout::Standard.decompose_value(bits, value, epoch_unix_ms)
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

/// Takes apart the plain nonce in `bytes` (its size from its length), in the
/// standard layout ([`Layout::decompose`] for either).
///
/// ```
/// use nonceforge::{decompose, layout::DEFAULT_EPOCH_UNIX_MS};
/// let parts = decompose(&[0, 0, 0, 0, 0, 0x40, 0x20, 0x05], DEFAULT_EPOCH_UNIX_MS).unwrap();
/// assert_eq!((parts.timestamp_ms, parts.machine_id, parts.counter), (1, 1, 5));
/// ```
pub fn decompose(bytes: &[u8], epoch_unix_ms: u64) -> Result<NonceParts> {
    Layout::Standard.decompose(bytes, epoch_unix_ms)
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
        fn wide_compose_decompose_round_trip(ts in 0..TIMESTAMP_END, m: u16, c: u64, wide96: bool) {
            let bits = if wide96 { Bits::B96 } else { Bits::B128 };
            let k = Layout::Wide.counter_bits(bits);
            let c = if k == 64 { c } else { c & ((1u64 << k) - 1) };
            let v = Layout::Wide.compose(bits, ts, m, c);
            prop_assert!(bits == Bits::B128 || v >> 96 == 0);
            let bytes = v.to_be_bytes();
            let p = Layout::Wide.decompose(&bytes[16 - bits.bytes()..], 10).unwrap();
            prop_assert_eq!((p.timestamp_ms, p.machine_id, p.counter, p.unix_ms), (ts, m, c, ts + 10));
            // The standard layout's fields are the same value read another way,
            // the timestamp included: both layouts sort by time first.
            prop_assert_eq!(decompose_value(bits, v, 0).timestamp_ms, ts);
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
        assert_eq!(
            Layout::Wide.compose(Bits::B96, TIMESTAMP_END - 1, u16::MAX, (1 << 38) - 1),
            (1u128 << 96) - 1
        );
        assert_eq!(Layout::Wide.compose(Bits::B128, 0, 1, 0), 1u128 << 70);
        let mut gap = [0u8; 16];
        gap[7] = 1; // bit 64: one of the wide layout's six zero bits
        assert_eq!(
            Layout::Wide.decompose(&gap, 0),
            Err(Error::NotPlainNonce { argument: "nonce" })
        );
        gap[7] = 0x40; // bit 70: the machine id's lowest
        assert_eq!(Layout::Wide.decompose(&gap, 0).unwrap().machine_id, 1);
        assert_eq!(
            Layout::Wide.decompose(&[0u8; 8], 0),
            Err(Error::WideLayoutNo64)
        );
        assert_eq!(Layout::Standard.max_machine_id(), 511);
        assert_eq!(Layout::Wide.max_machine_id(), 65535);
        assert_eq!(Bits::new(96).unwrap(), Bits::B96);
        assert_eq!(Bits::new(32), Err(Error::InvalidSize { value: 32 }));
    }
}
