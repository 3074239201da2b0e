//! Time-prefixed ids: tuid6 and stuid (pg_tuid's formats), and RFC 9562 UUIDv7.
//!
//! All three start with a big-endian Unix timestamp, so new ids sort after old
//! ones and land at the right-hand edge of a B-tree instead of all over it; the
//! rest is random, from a per-thread ChaCha12 generator seeded from the OS and
//! reseeded after `fork()` (see [`rng`]).
//!
//! | id | bytes | timestamp | random bits | version bits | file |
//! |---|---|---|---|---|---|
//! | tuid6 | 16 | Unix ms, 48 bits | 80 | none (pg_tuid) | [`tuid`] |
//! | UUIDv7 | 16 | Unix ms, 48 bits + 12-bit fraction | 62 | 7, variant 10 | [`v7`] |
//! | stuid | 32 | Unix µs, 64 bits | 192 | none | [`mod@stuid`] |
//!
//! Compact forms are base64url without padding (22 characters for 16 bytes, 43
//! for 32), as pg_tuid writes them.
//!
//! ```
//! use nonceforge::uuid::{from_compact, to_compact, tuid6, unix_ms};
//! let id: [u8; 16] = from_compact("AYOFdhN7r5ymN75rjTKvbg")?;  // pg_tuid's documented example
//! assert_eq!(unix_ms(&id), 1_664_391_451_515);              // 2022-09-28 18:57:31.515+00
//! assert_eq!(to_compact(&id), "AYOFdhN7r5ymN75rjTKvbg");
//! let fresh = tuid6();
//! # let _ = fresh;
//! # Ok::<(), nonceforge::Error>(())
//! ```

pub mod rng;
pub mod stuid;
pub mod tuid;
pub mod v7;

pub use stuid::{stuid, stuid_bounds, stuid_unix_us, stuid_with_clock};
pub use tuid::Tuid6Generator;
pub use v7::UuidV7Generator;

use crate::error::Result;
use base64::Engine;
use std::cell::RefCell;

thread_local! {
    static V7: RefCell<UuidV7Generator> = RefCell::new(UuidV7Generator::new());
    static TUID6: RefCell<Tuid6Generator> = RefCell::new(Tuid6Generator::new(false));
}

/// A new UUIDv7, monotonic within this thread.
pub fn uuidv7() -> [u8; 16] {
    V7.with(|g| g.borrow_mut().generate())
}

/// A new tuid6.
pub fn tuid6() -> [u8; 16] {
    TUID6.with(|g| g.borrow_mut().generate())
}

/// A new random UUID, version 4 (RFC 9562 §5.4), from the same generator.
pub fn uuidv4() -> [u8; 16] {
    let mut b = [0u8; 16];
    rng::fill(&mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

/// The Unix milliseconds in the first 48 bits of a tuid6 or UUIDv7.
pub fn unix_ms(id: &[u8; 16]) -> u64 {
    (u128::from_be_bytes(*id) >> 80) as u64
}

/// The version field of an RFC 9562 UUID (the 13th hex digit), or `None` when
/// its variant is not RFC 9562's (`10`).
pub fn version(id: &[u8; 16]) -> Option<u8> {
    (id[8] >> 6 == 0b10).then_some(id[6] >> 4)
}

/// The creation time of a UUID in Unix milliseconds, as PostgreSQL 18's
/// `uuid_extract_timestamp`: for version 7, the 48-bit timestamp; for version 1,
/// its 60-bit count of 100 ns since 1582-10-15, converted; otherwise `None`.
pub fn extract_unix_ms(id: &[u8; 16]) -> Option<i64> {
    match version(id)? {
        7 => Some(unix_ms(id) as i64),
        1 => {
            let v = u128::from_be_bytes(*id);
            let low = ((v >> 96) & 0xffff_ffff) as u64;
            let mid = ((v >> 80) & 0xffff) as u64;
            let high = ((v >> 64) & 0x0fff) as u64;
            let ticks = (high << 48) | (mid << 32) | low;
            // 100 ns ticks between 1582-10-15 and 1970-01-01.
            Some((ticks as i64 - 0x01b2_1dd2_1381_4000) / 10_000)
        }
        _ => None,
    }
}

/// Base64url without padding: 22 characters for 16 bytes, 43 for 32.
pub fn to_compact(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Parses the compact form of an `N`-byte id (16 or 32 bytes), strictly.
pub fn from_compact<const N: usize>(text: &str) -> Result<[u8; N]> {
    crate::extid::text::decode_base64url(
        text,
        if N == 16 {
            "compact (22 characters)"
        } else {
            "compact (43 characters)"
        },
        "the length is wrong for this id: base64url without padding",
        "the last character leaves spare bits set: not the encoding of any id",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn pg_tuid_documented_example() {
        let id: [u8; 16] = from_compact("AYOFdhN7r5ymN75rjTKvbg").unwrap();
        assert_eq!(
            ::uuid::Uuid::from_bytes(id).to_string(),
            "01838576-137b-af9c-a637-be6b8d32af6e"
        );
        assert_eq!(unix_ms(&id), 1_664_391_451_515);
    }

    #[test]
    fn compact_round_trips_and_refuses() {
        let t = tuid6();
        assert_eq!(from_compact::<16>(&to_compact(&t)).unwrap(), t);
        let s = stuid();
        let c = to_compact(&s);
        assert_eq!(c.len(), 43);
        assert_eq!(from_compact::<32>(&c).unwrap(), s);
        for (bad, pos) in [
            ("AYOFdhN7r5ymN75rjTKvb", 21),
            ("AYOFdhN7r5ymN75rjTKvbgA", 22),
            ("AYOFdhN7r5ymN75rjTK+bg", 19),
            ("AYOFdhN7r5ymN75rjTKvbh", 21),
        ] {
            match from_compact::<16>(bad) {
                Err(Error::ParseId { position, .. }) => assert_eq!(position, pos, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn versions_and_timestamps() {
        let v7 = uuidv7();
        assert_eq!(version(&v7), Some(7));
        let v4 = uuidv4();
        assert_eq!(version(&v4), Some(4));
        assert_eq!(::uuid::Uuid::from_bytes(v4).get_version_num(), 4);
        assert_eq!(extract_unix_ms(&v4), None);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!((extract_unix_ms(&v7).unwrap() - now).abs() < 5_000);
        // A version 1 UUID from RFC 9562 Appendix A.1: 2022-02-22 19:22:22 UTC.
        let v1: [u8; 16] = ::uuid::Uuid::parse_str("c232ab00-9414-11ec-b3c8-9f6bdeced846")
            .unwrap()
            .into_bytes();
        assert_eq!(extract_unix_ms(&v1), Some(1_645_557_742_000));
        assert_eq!(
            version(&[0u8; 16]),
            None,
            "the nil UUID has no RFC 9562 variant"
        );
    }
}
