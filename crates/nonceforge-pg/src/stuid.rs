//! stuid, with pg_tuid's names and behaviour: 32 bytes in a bytea.

use crate::errors::{invalid, out_of_range, raise, tz_from_unix_us};
use nonceforge_core::uuid as ids;
use pgrx::prelude::*;

fn stuid_bytes(id: &[u8]) -> [u8; 32] {
    id.try_into()
        .unwrap_or_else(|_| invalid(format!("a stuid is 32 bytes, got {}", id.len())))
}

/// A new stuid: 64-bit Unix microseconds + 192 random bits.
#[pg_extern(volatile, parallel_safe)]
fn stuid() -> Vec<u8> {
    ids::stuid().to_vec()
}

/// The 43-character compact form (base64url, no padding).
#[pg_extern(immutable, strict, parallel_safe)]
fn stuid_to_compact(id: &[u8]) -> String {
    ids::to_compact(&stuid_bytes(id))
}

/// Parses the 43-character compact form.
#[pg_extern(immutable, strict, parallel_safe)]
fn stuid_from_compact(compact: &str) -> Vec<u8> {
    ids::from_compact::<32>(compact)
        .unwrap_or_else(|e| raise(e))
        .to_vec()
}

/// The time in a stuid (its first 8 bytes, as Unix microseconds).
#[pg_extern(immutable, strict, parallel_safe)]
fn stuid_tz(id: &[u8]) -> TimestampWithTimeZone {
    let us = ids::stuid_unix_us(&stuid_bytes(id));
    tz_from_unix_us(
        i64::try_from(us)
            .unwrap_or_else(|_| out_of_range(format!("stuid_tz: {us} µs is out of range"))),
    )
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn round_trips() {
        let ok = Spi::get_one::<bool>(
            "WITH s AS (SELECT stuid() AS id) SELECT length(id) = 32 AND stuid_from_compact(stuid_to_compact(id)) = id AND length(stuid_to_compact(id)) = 43 AND stuid_tz(id) BETWEEN now() - interval '1 minute' AND clock_timestamp() FROM s",
        );
        assert_eq!(ok.unwrap(), Some(true));
    }

    #[pg_test(error = "nonceforge: a stuid is 32 bytes, got 3")]
    fn wrong_length() {
        Spi::run("SELECT stuid_tz('\\x010203'::bytea)").unwrap();
    }
}
