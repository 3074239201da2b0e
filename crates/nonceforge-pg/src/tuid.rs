//! tuid6, with pg_tuid's names and behaviour.

use crate::errors::{raise, tz_from_unix_us, unix_us_from_tz};
use nonceforge_core::uuid::{self as ids, tuid};
use pgrx::prelude::*;

/// A new tuid6: 48-bit Unix milliseconds + 80 random bits. With
/// `nonceforge.server_order = on` the 12 bits after the milliseconds are the
/// server-wide clock's fraction of the millisecond (68 random bits follow), so
/// tuid6s strictly increase across every backend of the server.
#[pg_extern(volatile, parallel_safe)]
fn tuid6() -> pgrx::Uuid {
    if crate::settings::server_order("tuid6()") {
        let t = crate::order::next_tick("tuid6()");
        let mut r = [0u8; 16];
        ids::rng::fill(&mut r[7..]); // 72 random bits, 68 kept
        let random68 = u128::from_be_bytes(r) & ((1 << 68) - 1);
        return pgrx::Uuid::from_bytes((((t as u128) << 68) | random68).to_be_bytes());
    }
    pgrx::Uuid::from_bytes(ids::tuid6())
}

/// A new tuid6 for the given time (random tail); the time is truncated to ms.
#[pg_extern(volatile, strict, parallel_safe)]
fn tuid6_from_tz(tz: TimestampWithTimeZone) -> pgrx::Uuid {
    let unix_ms = unix_us_from_tz(tz, "tuid6_from_tz(time)").div_euclid(1000);
    if !(0..1 << 48).contains(&unix_ms) {
        crate::errors::out_of_range(format!(
            "tuid6_from_tz: the time must lie between 1970 and the year 10889 (48-bit milliseconds), got {unix_ms} ms"
        ));
    }
    let mut r = [0u8; 16];
    ids::rng::fill(&mut r);
    pgrx::Uuid::from_bytes(tuid::compose(unix_ms as u64, u128::from_be_bytes(r)))
}

/// The time in a tuid6 (its first 48 bits, as Unix milliseconds).
#[pg_extern(immutable, strict, parallel_safe)]
fn tuid6_tz(id: pgrx::Uuid) -> TimestampWithTimeZone {
    tz_from_unix_us(ids::unix_ms(id.as_bytes()) as i64 * 1000)
}

/// The 22-character compact form (base64url, no padding).
#[pg_extern(immutable, strict, parallel_safe)]
fn tuid6_to_compact(id: pgrx::Uuid) -> String {
    ids::to_compact(id.as_bytes())
}

/// Parses the 22-character compact form.
#[pg_extern(immutable, strict, parallel_safe)]
fn tuid6_from_compact(compact: &str) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(ids::from_compact::<16>(compact).unwrap_or_else(|e| raise(e)))
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn pg_tuid_documented_examples() {
        assert_eq!(
            Spi::get_one::<String>("SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg')::text")
                .unwrap(),
            Some("01838576-137b-af9c-a637-be6b8d32af6e".into())
        );
        assert_eq!(
            Spi::get_one::<String>(
                "SELECT to_char(tuid6_tz(tuid6_from_compact('AYOFdhN7r5ymN75rjTKvbg')) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
            )
            .unwrap(),
            Some("2022-09-28 18:57:31.515".into())
        );
        assert_eq!(
            Spi::get_one::<String>(
                "SELECT tuid6_to_compact('01838576-137b-af9c-a637-be6b8d32af6e')"
            )
            .unwrap(),
            Some("AYOFdhN7r5ymN75rjTKvbg".into())
        );
    }

    #[pg_test]
    fn generation_sorts_by_time() {
        let ok = Spi::get_one::<bool>(
            "SELECT tuid6_tz(tuid6()) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 minute'",
        );
        assert_eq!(ok.unwrap(), Some(true));
        let ok = Spi::get_one::<bool>(
            "SELECT tuid6_from_tz('2020-01-01 00:00:00+00') < tuid6_from_tz('2020-01-01 00:00:00.001+00')",
        );
        assert_eq!(ok.unwrap(), Some(true));
        let n =
            Spi::get_one::<i64>("SELECT count(DISTINCT tuid6()) FROM generate_series(1, 10000)");
        assert_eq!(n.unwrap(), Some(10000));
    }

    #[pg_test(
        error = "nonceforge: not an id in compact (22 characters) form: character 21: the length is wrong for this id: base64url without padding"
    )]
    fn malformed_compact_text() {
        Spi::run("SELECT tuid6_from_compact('AYOFdhN7r5ymN75rjTKvb')").unwrap();
    }
}
