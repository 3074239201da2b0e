//! UUIDv7 and v4 like PostgreSQL 18's, and min/max over uuid (PostgreSQL 15 has none).
//!
//! Their names and signatures are exactly PostgreSQL 18's built-ins' (checked
//! by the SQL tests against PostgreSQL 18's catalog entries), so after an
//! upgrade to 18 an unqualified call resolves to the built-in in `pg_catalog`
//! (searched first) and is never ambiguous; see the README, "Upgrading to
//! PostgreSQL 18".

use crate::errors::{fail_as_builtin, invalid, tz_from_unix_us, unix_us_from_tz};
use nonceforge_core::uuid as ids;
use pgrx::PgSqlErrorCode;
use pgrx::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// One generator per backend: ids are monotonic within a backend.
    static V7: RefCell<ids::UuidV7Generator> = RefCell::new(ids::UuidV7Generator::new());
}

/// Runs `f` on this backend's generator (the series share it with `uuidv7()`:
/// one monotonic sequence per backend).
pub(crate) fn with_backend_v7<T>(f: impl FnOnce(&mut ids::UuidV7Generator) -> T) -> T {
    V7.with(|g| f(&mut g.borrow_mut()))
}

/// A new UUIDv7 (shifted by `shift_us` microseconds): monotonic within this backend, or
/// across the whole server with `nonceforge.server_order = on`.
pub(crate) fn next_v7(function: &str, shift_us: i64) -> [u8; 16] {
    if crate::settings::server_order(function) {
        let t = ids::v7::shift_tick_us(crate::order::next_tick(function), shift_us);
        ids::v7::from_tick(t, ids::rng::u64())
    } else {
        V7.with(|g| g.borrow_mut().generate_shifted_us(shift_us))
    }
}

unsafe extern "C-unwind" {
    /// PostgreSQL's `palloc`, called directly rather than through pgrx's
    /// guarded binding (a `sigsetjmp` a call): it returns the memory or raises
    /// out-of-memory by `longjmp`, so its callers here hold nothing to drop.
    #[link_name = "palloc"]
    fn palloc_direct(size: usize) -> *mut std::ffi::c_void;
}

/// Declares the C entry point of a new-UUIDv7 function with no arguments (and
/// its version-1 record), written against fmgr directly where pgrx's
/// generated wrapper spent about a third of the function's own cost on its
/// guarded `palloc`, the boxing of the return value and its checks
/// (bench/RESULTS.md, "The measurements behind the code"). The symbols are
/// those pgrx gave them, named in every installed catalog; the SQL is
/// declared by hand below.
macro_rules! v7_entry {
    ($symbol:ident, $finfo:ident, $function:literal) => {
        #[unsafe(no_mangle)]
        #[doc = concat!("The C entry point of `", $function, "`.")]
        pub unsafe extern "C-unwind" fn $symbol(
            _fcinfo: pg_sys::FunctionCallInfo,
        ) -> pg_sys::Datum {
            /// Writes the next UUIDv7 to `out`. Guarded: an ERROR (server
            /// order's refusals) or a panic leaves through pgrx's error
            /// reporting.
            ///
            /// # Safety
            /// `out` is valid for a 16-byte write.
            #[pg_guard]
            unsafe extern "C-unwind" fn fill(out: *mut [u8; 16]) {
                // SAFETY: the caller gives 16 writable bytes.
                unsafe { out.write(next_v7($function, 0)) }
            }
            // SAFETY: palloc returns 16 bytes of the current memory context
            // (the result's, as fmgr wants) or raises out-of-memory by
            // longjmp, which this frame, holding nothing to drop, allows;
            // fill writes them, raising its own errors through pgrx.
            unsafe {
                let out = palloc_direct(16).cast::<[u8; 16]>();
                fill(out);
                pg_sys::Datum::from(out)
            }
        }

        #[unsafe(no_mangle)]
        #[doc = concat!("Version 1 of the function-call interface, for `", $function, "`.")]
        pub extern "C-unwind" fn $finfo() -> *const pg_sys::Pg_finfo_record {
            static V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
            &V1
        }
    };
}

// A new UUIDv7, monotonic within this backend (across the server with
// `nonceforge.server_order = on`); `uuid_generate_v7()` is pg_uuidv7's name.
v7_entry!(uuidv7_wrapper, pg_finfo_uuidv7_wrapper, "uuidv7()");
v7_entry!(
    uuid_generate_v7_wrapper,
    pg_finfo_uuid_generate_v7_wrapper,
    "uuid_generate_v7()"
);

extension_sql!(
    r#"
-- uuidv7() and pg_uuidv7's uuid_generate_v7() (uuidv7.rs), declared by hand:
-- their C entry points are written against fmgr directly.
CREATE FUNCTION @extschema@.uuidv7() RETURNS pg_catalog.uuid
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuidv7_wrapper';
CREATE FUNCTION @extschema@.uuid_generate_v7() RETURNS pg_catalog.uuid
STRICT VOLATILE PARALLEL SAFE LANGUAGE c AS 'MODULE_PATHNAME', 'uuid_generate_v7_wrapper';
"#,
    name = "uuidv7_entries"
);

/// A new UUIDv7 whose timestamp is shifted by `shift` (calendar-aware, as
/// `now() + shift`). Results and errors are PostgreSQL 18's (18.6 and later):
/// an infinite interval and a shifted time outside 1970-01-01 … 10889-08-02
/// (48-bit Unix milliseconds) are refused with 18's messages; a shift that
/// leaves timestamptz's range fails in `timestamptz + interval`, as in 18.
#[pg_extern(volatile, strict, parallel_safe, name = "uuidv7")]
fn uuidv7_shifted(shift: Interval) -> pgrx::Uuid {
    if !interval_is_finite(&shift) {
        fail_as_builtin(
            PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
            "interval out of range for UUID version 7",
            "UUID version 7 does not support infinite intervals.",
        );
    }
    // SAFETY: GetCurrentTimestamp reads the clock; no arguments, no state.
    let now =
        pgrx::datum::TimestampWithTimeZone::try_from(unsafe { pg_sys::GetCurrentTimestamp() })
            .unwrap_or_else(|_| invalid("the clock is out of timestamptz range".into()));
    // SAFETY: timestamptz_pl_interval takes a timestamptz and an interval, both
    // non-null here, and returns a timestamptz (or raises 22008 itself).
    let then: TimestampWithTimeZone = unsafe {
        pgrx::direct_function_call(
            pg_sys::timestamptz_pl_interval,
            &[now.into_datum(), shift.into_datum()],
        )
    }
    .unwrap_or_else(|| invalid("uuidv7(shift): now() + shift is null".into()));
    let then_us = unix_us_from_tz(then, "uuidv7(shift): now() + shift");
    if !(0..(1i64 << 48) * 1000).contains(&then_us) {
        fail_as_builtin(
            PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
            "timestamp out of range for UUID version 7",
            "UUID version 7 supports timestamps from 1970-01-01 to approximately year 10889.",
        );
    }
    // Both ends lie within ±2^48 ms here: the difference fits an i64 of µs.
    let shift_us = then_us - unix_us_from_tz(now, "now()");
    pgrx::Uuid::from_bytes(next_v7("uuidv7(shift)", shift_us))
}

/// Whether an interval is finite: PostgreSQL 17 added `'infinity'` and
/// `'-infinity'` intervals, every field at its maximum or its minimum.
fn interval_is_finite(i: &Interval) -> bool {
    let (m, d, us) = (i.months(), i.days(), i.micros());
    !((m, d, us) == (i32::MAX, i32::MAX, i64::MAX) || (m, d, us) == (i32::MIN, i32::MIN, i64::MIN))
}

/// A new random UUID, version 4.
#[pg_extern(volatile, parallel_safe)]
fn uuidv4() -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(ids::uuidv4())
}

/// The creation time of a version 1 or 7 UUID; NULL for other versions.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_extract_timestamp(id: pgrx::Uuid) -> Option<TimestampWithTimeZone> {
    ids::extract_unix_ms(id.as_bytes()).map(|ms| tz_from_unix_us(ms * 1000))
}

/// The version of an RFC 9562 UUID; NULL when its variant is not RFC 9562's.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_extract_version(id: pgrx::Uuid) -> Option<i16> {
    ids::version(id.as_bytes()).map(i16::from)
}

/// The smaller of two uuids (byte order, as the uuid type sorts).
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_smaller(a: pgrx::Uuid, b: pgrx::Uuid) -> pgrx::Uuid {
    if a.as_bytes() <= b.as_bytes() { a } else { b }
}

/// The larger of two uuids.
#[pg_extern(immutable, strict, parallel_safe)]
fn uuid_larger(a: pgrx::Uuid, b: pgrx::Uuid) -> pgrx::Uuid {
    if a.as_bytes() >= b.as_bytes() { a } else { b }
}

extension_sql!(
    r#"
CREATE AGGREGATE @extschema@.min(pg_catalog.uuid) (
    SFUNC = @extschema@.uuid_smaller, STYPE = pg_catalog.uuid, COMBINEFUNC = @extschema@.uuid_smaller,
    SORTOP = OPERATOR(pg_catalog.<), PARALLEL = SAFE
);
CREATE AGGREGATE @extschema@.max(pg_catalog.uuid) (
    SFUNC = @extschema@.uuid_larger, STYPE = pg_catalog.uuid, COMBINEFUNC = @extschema@.uuid_larger,
    SORTOP = OPERATOR(pg_catalog.>), PARALLEL = SAFE
);
"#,
    name = "uuid_min_max",
    requires = [uuid_smaller, uuid_larger]
);

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// The query with our functions named by the extension's schema: from PostgreSQL 17 on
    /// (`uuid_extract_*`) and 18 (`uuidv7`, `uuidv4`) an unqualified call finds the built-in
    /// first, as `pg_catalog` leads the path — and 17's `uuid_extract_timestamp` reads version 1
    /// only.
    fn ours(query: &str) -> String {
        let schema = Spi::get_one::<String>(
            "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e \
             JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'nonceforge'",
        )
        .unwrap()
        .expect("the extension is installed");
        [
            "uuidv7(",
            "uuidv4(",
            "uuid_extract_timestamp(",
            "uuid_extract_version(",
        ]
        .iter()
        .fold(query.to_string(), |q, f| {
            q.replace(f, &format!("{schema}.{f}"))
        })
    }

    #[pg_test]
    fn v7_is_monotonic_and_extractable() {
        let ok = Spi::get_one::<bool>(&ours(
            "WITH g AS (SELECT uuidv7() AS id, n FROM generate_series(1, 20000) n)
             SELECT bool_and(id > prev) FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM g) s WHERE prev IS NOT NULL",
        ));
        assert_eq!(ok.unwrap(), Some(true));
        assert_eq!(
            Spi::get_one::<i16>(&ours("SELECT uuid_extract_version(uuidv7())")).unwrap(),
            Some(7)
        );
        assert_eq!(
            Spi::get_one::<i16>(&ours("SELECT uuid_extract_version(uuidv4())")).unwrap(),
            Some(4)
        );
        assert_eq!(
            Spi::get_one::<i16>(&ours(
                "SELECT uuid_extract_version('00000000-0000-0000-0000-000000000000')"
            ))
            .unwrap(),
            None
        );
        let ok = Spi::get_one::<bool>(&ours(
            "SELECT uuid_extract_timestamp(uuidv7()) BETWEEN now() - interval '1 minute' AND clock_timestamp() + interval '1 minute'",
        ));
        assert_eq!(ok.unwrap(), Some(true));
        assert_eq!(
            Spi::get_one::<TimestampWithTimeZone>(&ours("SELECT uuid_extract_timestamp(uuidv4())"))
                .unwrap(),
            None
        );
        // RFC 9562 Appendix A.1: a version 1 UUID from 2022-02-22 19:22:22 UTC.
        assert_eq!(
            Spi::get_one::<String>(&ours(
                "SELECT to_char(uuid_extract_timestamp('c232ab00-9414-11ec-b3c8-9f6bdeced846') AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
            ))
            .unwrap(),
            Some("2022-02-22 19:22:22".into())
        );
    }

    #[pg_test]
    fn shifted() {
        let ok = Spi::get_one::<bool>(&ours(
            "SELECT uuid_extract_timestamp(uuidv7(interval '-1 day')) BETWEEN now() - interval '1 day 1 minute' AND now() - interval '23 hours'",
        ));
        assert_eq!(ok.unwrap(), Some(true));
    }

    #[pg_test]
    fn min_max() {
        let row = Spi::get_one::<bool>(
            "SELECT min(u) = '00000000-0000-0000-0000-000000000001' AND max(u) = 'ffffffff-0000-0000-0000-000000000000'
             FROM (VALUES ('00000000-0000-0000-0000-000000000001'::uuid), ('ffffffff-0000-0000-0000-000000000000'), (NULL), ('12345678-0000-0000-0000-000000000000')) v(u)",
        );
        assert_eq!(row.unwrap(), Some(true));
    }
}
