//! Mapping core errors to PostgreSQL errors.

use pgrx::PgSqlErrorCode;
use pgrx::prelude::*;

/// Raises `error` as an ERROR: malformed text is 22P02 (invalid text
/// representation), anything else the caller passed is 22023 (invalid parameter
/// value).
pub(crate) fn raise(error: nonceforge_core::Error) -> ! {
    let code = match error {
        nonceforge_core::Error::ParseId { .. } | nonceforge_core::Error::WrongIdType { .. } => {
            PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION
        }
        _ => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
    };
    ereport!(ERROR, code, format!("nonceforge: {error}"));
}

/// Raises 22023 with a message.
pub(crate) fn invalid(message: String) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("nonceforge: {message}")
    );
}

/// 2000-01-01 (PostgreSQL's epoch) in Unix microseconds.
const PG_EPOCH_US: i64 = 946_684_800_000_000;

/// Unix milliseconds → PostgreSQL's timestamptz (µs since 2000-01-01).
pub(crate) fn tz_from_unix_us(unix_us: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(unix_us - PG_EPOCH_US).unwrap_or_else(|_| {
        invalid(format!(
            "{unix_us} µs since 1970 is out of timestamptz range"
        ))
    })
}

/// PostgreSQL's timestamptz → Unix microseconds.
pub(crate) fn unix_us_from_tz(tz: TimestampWithTimeZone) -> i64 {
    if !tz.is_finite() {
        invalid("the timestamp must be finite, not infinity".into());
    }
    i64::from(tz) + PG_EPOCH_US
}
