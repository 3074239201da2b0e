//! Errors as PostgreSQL ERRORs: a SQLSTATE, a message that names the argument
//! and the rule, a HINT where one helps — and nothing else. No Rust backtrace,
//! panic text or source path reaches a client:
//!
//! - every error this extension raises is built here, without a backtrace;
//! - [`quiet_backtraces`] turns off std's backtrace capture in the server
//!   process, so a `RUST_BACKTRACE=1` in the server's environment cannot put
//!   one into pgrx's DETAIL either;
//! - the error's LOCATION (the source file PostgreSQL reports) is the library's
//!   name, not a file of ours (see `src/nonceforge`).

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::{PgLogLevel, PgSqlErrorCode};

/// Raises an ERROR with `code`, `message` (prefixed "nonceforge: ") and an
/// optional hint.
pub(crate) fn fail(code: PgSqlErrorCode, message: impl Into<String>, hint: Option<&str>) -> ! {
    raise_report(code, format!("nonceforge: {}", message.into()), None, hint)
}

include!("nonceforge");

/// Raises an ERROR worded exactly as PostgreSQL's own built-in of the same name
/// does (message and detail, no prefix): for the functions that stand in for
/// one, so that code written against the built-in sees the same error.
pub(crate) fn fail_as_builtin(code: PgSqlErrorCode, message: &str, detail: &str) -> ! {
    raise_report(code, message.to_owned(), Some(detail), None)
}

/// Raises `error` as an ERROR: malformed text is 22P02 (invalid text
/// representation), anything else the caller passed is 22023 (invalid parameter
/// value), a stopped generator 55000.
pub(crate) fn raise(error: nonceforge_core::Error) -> ! {
    let code = match error {
        nonceforge_core::Error::ParseId { .. } | nonceforge_core::Error::WrongIdType { .. } => {
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION
        }
        nonceforge_core::Error::Disabled => {
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
        }
        _ => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
    };
    fail(code, error.to_string(), None);
}

/// Raises 22023 (invalid parameter value) with a message.
pub(crate) fn invalid(message: String) -> ! {
    fail(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        message,
        None,
    );
}

/// Raises 22008 (datetime field overflow): a time outside a type's range.
pub(crate) fn out_of_range(message: String) -> ! {
    fail(
        PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        message,
        None,
    );
}

/// The hint of a call that needs the library preloaded and a key file (the
/// settings and the keys both give it).
pub(crate) const PRELOAD_HINT: &str = "As a superuser: add nonceforge to shared_preload_libraries in postgresql.conf, set the key's file (see the README, \"Keys\"), and restart the server.";

/// Raises 55000 (object not in prerequisite state): the server is not set up
/// for this call; the hint says how to set it up.
pub(crate) fn not_configured(message: String, hint: &str) -> ! {
    fail(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
        Some(hint),
    );
}

/// Turns off std's backtrace capture for this process (see the module docs).
/// Called from `_PG_init`, while the process runs one thread.
pub(crate) fn quiet_backtraces() {
    // SAFETY: _PG_init runs in the postmaster (shared_preload_libraries) or in
    // a backend, both single-threaded processes, so no other thread reads or
    // writes the environment while this runs.
    unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
}

/// 2000-01-01 (PostgreSQL's epoch) in Unix microseconds.
pub(crate) const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// Unix microseconds → PostgreSQL's timestamptz (µs since 2000-01-01).
pub(crate) fn tz_from_unix_us(unix_us: i64) -> TimestampWithTimeZone {
    // PostgreSQL's range: 4714-11-24 BC up to (not including) 294277-01-01.
    const MIN_PG_US: i64 = -211_813_488_000_000_000;
    const END_PG_US: i64 = 9_223_371_331_200_000_000;
    let pg_us = unix_us.saturating_sub(PG_EPOCH_US);
    if !(MIN_PG_US..END_PG_US).contains(&pg_us) {
        out_of_range(format!(
            "{unix_us} µs since 1970 is out of timestamptz range"
        ));
    }
    TimestampWithTimeZone::try_from(pg_us).unwrap_or_else(|_| {
        out_of_range(format!(
            "{unix_us} µs since 1970 is out of timestamptz range"
        ))
    })
}

/// PostgreSQL's timestamptz → Unix microseconds; `argument` names it in errors.
pub(crate) fn unix_us_from_tz(tz: TimestampWithTimeZone, argument: &str) -> i64 {
    if !tz.is_finite() {
        invalid(format!("{argument} must be a finite time, not infinity"));
    }
    i64::from(tz).checked_add(PG_EPOCH_US).unwrap_or_else(|| {
        out_of_range(format!("{argument} is past the range of Unix microseconds"))
    })
}
