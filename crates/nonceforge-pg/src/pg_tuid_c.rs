//! pg_tuid's C extension (`CREATE EXTENSION tuid`): `tuid_generate()` and
//! `stuid_generate()`, under those names, with the same layouts, sort order and
//! types, so column defaults written for it keep working.
//!
//! `tuid_generate()` is a uuid, laid out as pg_tuid's `pg_c/tuid.c` lays it out:
//!
//! ```text
//! bytes 0..5   Unix microseconds, bits 63..16
//! byte  6..7   0100 (the version nibble, 4) | microseconds, bits 15..4
//! byte  8      10 (the RFC 4122 variant) | microseconds, bits 3..0 | seq, bits 7..6
//! byte  9      seq, bits 5..0 | 2 random bits
//! bytes 10..15 48 random bits
//! ```
//!
//! All 64 bits of the microseconds are kept, as pg_tuid's `tuid.c` keeps them
//! (its byte 8 holds the low 4 bits after the variant), so ids sort by their
//! microsecond exactly and read back to the microsecond with
//! [`tuid_generate_tz`]. Where pg_tuid put an 8-bit node id after the sequence
//! (0 unless `tuid.node_id` was set, and OR-ed over random bits), 50 bits here
//! come from the operating system's CSPRNG: no setting to forget, no constant.
//!
//! **Unique under the server-wide rules.** The (microsecond, seq) pair is one
//! word in shared memory, taken with an atomic compare-and-swap by every backend
//! of the server: it never repeats, and strictly increases, across backends,
//! restarts, crashes and clock steps back (the run starts above the floor in
//! the data directory, and every microsecond is admitted under it, like
//! server-ordered ids). 256 ids a microsecond before the word runs ahead of the
//! clock. pg_tuid's C version needs `shared_preload_libraries` for its shared
//! state too; without it these functions refuse with a hint.
//!
//! `stuid_generate()` is a 32-byte bytea: 8 bytes of Unix microseconds (from the
//! same server-wide word, so it never goes back either), then 24 CSPRNG bytes —
//! the layout of `stuid()`, pg_tuid's `stuid_generate` in its C version.

use crate::errors::tz_from_unix_us;
use crate::server;
use nonceforge_core::uuid as ids;
use pgrx::prelude::*;
use std::sync::atomic::Ordering;

/// The next (microsecond << 8 | seq) of the server, for `function`.
fn next_word(function: &str) -> u64 {
    let s = server::state(function);
    let start_us = s.run_start(function) * 1_000;
    loop {
        let last = s.tuid_word.load(Ordering::Acquire);
        let t = (server::wall_us().max(start_us) << 8).max(last + 1);
        s.admit(function, (t >> 8) / 1_000);
        if s.tuid_word
            .compare_exchange_weak(last, t, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return t;
        }
    }
}

/// The tuid of a (microsecond << 8 | seq) word and 64 random bits (50 kept).
pub(crate) fn compose_tuid(word: u64, rand: u64) -> [u8; 16] {
    let us = word >> 8;
    let seq = word & 0xff;
    let hi = (us & !0xffff) | 0x4000 | ((us >> 4) & 0x0fff);
    let lo = (0b10 << 62) | ((us & 0xf) << 58) | (seq << 50) | (rand & ((1 << 50) - 1));
    (((hi as u128) << 64) | lo as u128).to_be_bytes()
}

/// The Unix microseconds of a tuid made by [`compose_tuid`].
pub(crate) fn tuid_unix_us(id: &[u8; 16]) -> u64 {
    let v = u128::from_be_bytes(*id);
    let hi = (v >> 64) as u64;
    let lo = v as u64;
    (hi & !0xffff) | ((hi & 0x0fff) << 4) | ((lo >> 58) & 0xf)
}

/// A new TUID (pg_tuid's C extension): 64-bit Unix microseconds with the UUIDv4
/// version and variant bits among them, an 8-bit sequence, 50 random bits;
/// strictly increasing across the server. Needs the library preloaded.
#[pg_extern(volatile, parallel_unsafe)]
fn tuid_generate() -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(compose_tuid(next_word("tuid_generate()"), ids::rng::u64()))
}

/// The time in a `tuid_generate()` id, to the microsecond.
#[pg_extern(immutable, strict, parallel_safe)]
fn tuid_generate_tz(id: pgrx::Uuid) -> TimestampWithTimeZone {
    let us = tuid_unix_us(id.as_bytes());
    tz_from_unix_us(i64::try_from(us).unwrap_or(i64::MAX))
}

/// A new STUID (pg_tuid's C extension): 8 bytes of Unix microseconds, never
/// going back across the server, then 24 random bytes. Needs the library
/// preloaded.
#[pg_extern(volatile, parallel_unsafe)]
fn stuid_generate() -> Vec<u8> {
    let us = next_word("stuid_generate()") >> 8;
    let mut out = vec![0u8; 32];
    out[..8].copy_from_slice(&us.to_be_bytes());
    ids::rng::fill(&mut out[8..]);
    out
}

#[cfg(test)]
mod layout_tests {
    use super::*;

    #[test]
    fn pg_tuid_layout() {
        // 2022-09-28 18:57:31.515123 UTC, seq 0x5a, random all ones.
        let us: u64 = 1_664_391_451_515_123;
        let id = compose_tuid(us << 8 | 0x5a, u64::MAX);
        assert_eq!(id[6] >> 4, 4, "version nibble");
        assert_eq!(id[8] >> 6, 0b10, "variant");
        assert_eq!(&id[..6], &us.to_be_bytes()[..6]);
        assert_eq!(
            u16::from_be_bytes([id[6], id[7]]) & 0x0fff,
            ((us >> 4) & 0xfff) as u16
        );
        assert_eq!((id[8] >> 2) & 0xf, (us & 0xf) as u8);
        assert_eq!(((id[8] & 0b11) << 6) | (id[9] >> 2), 0x5a, "seq");
        assert_eq!(tuid_unix_us(&id), us);
        // Byte order is (microsecond, seq) order.
        let mut prev = compose_tuid(us << 8, 0);
        for w in [
            us << 8 | 1,
            us << 8 | 0xff,
            (us + 1) << 8,
            (us + 16) << 8,
            (us + 65_536) << 8,
        ] {
            let next = compose_tuid(w, u64::MAX);
            assert!(next > prev, "{w:x}");
            prev = compose_tuid(w, 0);
        }
    }
}
