//! pg_uuidv7's names, for its users: `uuid_generate_v7()`,
//! `uuid_v7_to_timestamptz(uuid)`, `uuid_timestamptz_to_v7(timestamptz, zero
//! boolean DEFAULT false)`, `uuid_v7_to_timestamp(uuid)` and
//! `uuid_timestamp_to_v7(timestamp, zero boolean DEFAULT false)`, with its
//! semantics:
//!
//! - the time in a UUID is its first 48 bits as Unix milliseconds, whatever
//!   its version (as pg_uuidv7 reads it);
//! - a UUID made from a time carries that time's millisecond (microseconds
//!   dropped), version 7 and the RFC variant; its other 74 bits are random, or
//!   zero with `zero => true` — the smallest UUIDv7 of that millisecond, for
//!   range queries (`id >= uuid_timestamptz_to_v7(t, true)`). STABLE, like
//!   pg_uuidv7's, so such a bound is computed once and an index can serve it.
//! - `timestamp` (without time zone) is taken as UTC.
//!
//! Differences, all on inputs pg_uuidv7 turns into garbage: a time before 1970
//! or past the 48-bit millisecond range (year 10889), or infinity, is an ERROR
//! naming the argument. `uuid_generate_v7()` is our `uuidv7()`: monotonic in a
//! backend (server-wide with `nonceforge.server_order = on`) and with a 12-bit
//! fraction of the millisecond where pg_uuidv7 has random bits — still a valid
//! UUIDv7 that sorts by time. The converters from a UUID are IMMUTABLE (pg_uuidv7:
//! STABLE), so they can be used in index expressions.

use crate::errors::{PG_EPOCH_US, invalid, out_of_range, tz_from_unix_us, unix_us_from_tz};
use nonceforge_core::uuid as ids;
use pgrx::datum::Timestamp;
use pgrx::prelude::*;

// `uuid_generate_v7()`, pg_uuidv7's name for `uuidv7()`: declared beside it
// in uuidv7.rs (one hand-written entry point for both).

/// The first 48 bits as Unix milliseconds.
fn unix_ms(id: &pgrx::Uuid) -> i64 {
    ids::unix_ms(id.as_bytes()) as i64
}

/// The time in a UUIDv7 (its first 48 bits, Unix milliseconds).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_v7_to_timestamptz(id: pgrx::Uuid) -> TimestampWithTimeZone {
    tz_from_unix_us(unix_ms(&id) * 1000)
}

/// The time in a UUIDv7 as a timestamp in UTC.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_v7_to_timestamp(id: pgrx::Uuid) -> Timestamp {
    Timestamp::try_from(unix_ms(&id) * 1000 - PG_EPOCH_US)
        .unwrap_or_else(|_| out_of_range("the UUID's time is out of timestamp range".into()))
}

/// A UUIDv7 for Unix microseconds `unix_us`; `function` names the call in errors.
fn v7_at(unix_us: i64, zero: bool, function: &str) -> pgrx::Uuid {
    let ms = unix_us.div_euclid(1000);
    if !(0..1 << 48).contains(&ms) {
        out_of_range(format!(
            "{function}: the time must lie between 1970-01-01 and 10889-08-02 (48-bit Unix milliseconds), got {ms} ms"
        ));
    }
    let id = if zero {
        ids::v7::compose(ms as u64, 0, 0)
    } else {
        let r = ids::rng::u64();
        ids::v7::compose(ms as u64, (ids::rng::u64() & 0xfff) as u16, r)
    };
    pgrx::Uuid::from_bytes(id)
}

/// A UUIDv7 carrying `ts`'s millisecond; random bits, or zeros with `zero`.
#[pg_extern(stable, strict, parallel_safe)]
fn uuid_timestamptz_to_v7(ts: TimestampWithTimeZone, zero: default!(bool, false)) -> pgrx::Uuid {
    v7_at(
        unix_us_from_tz(ts, "uuid_timestamptz_to_v7(ts)"),
        zero,
        "uuid_timestamptz_to_v7(ts)",
    )
}

/// A UUIDv7 carrying `ts`'s millisecond (`ts` in UTC).
#[pg_extern(stable, strict, parallel_safe)]
fn uuid_timestamp_to_v7(ts: Timestamp, zero: default!(bool, false)) -> pgrx::Uuid {
    if !ts.is_finite() {
        invalid("uuid_timestamp_to_v7(ts) must be a finite time, not infinity".into());
    }
    v7_at(
        i64::from(ts).checked_add(PG_EPOCH_US).unwrap_or_else(|| {
            out_of_range("uuid_timestamp_to_v7(ts) is past the range of Unix microseconds".into())
        }),
        zero,
        "uuid_timestamp_to_v7(ts)",
    )
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn pg_uuidv7_readme_examples() {
        let t = |q: &str| Spi::get_one::<bool>(q).unwrap();
        assert_eq!(
            t(
                "SELECT uuid_v7_to_timestamptz('018570bb-4a7d-7c7e-8df4-6d47afd8c8fc') = '2023-01-02 04:26:40.637+00'"
            ),
            Some(true)
        );
        assert_eq!(
            t(
                "SELECT uuid_timestamptz_to_v7('2023-01-02 04:26:40.637+00', true) = '018570bb-4a7d-7000-8000-000000000000'"
            ),
            Some(true)
        );
        assert_eq!(
            t(
                "SELECT uuid_timestamp_to_v7('2023-01-02 04:26:40.637') > '018570bb-4a7d-7000-8000-000000000000'"
            ),
            Some(true)
        );
    }
}
