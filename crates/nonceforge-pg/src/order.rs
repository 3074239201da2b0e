//! Server-wide order for `uuidv7()` and `tuid6()` (`nonceforge.server_order =
//! on`, with the library preloaded).
//!
//! pg_tuid's README notes that only a central generator makes time-prefixed ids
//! strictly increase across connections; PostgreSQL 18's `uuidv7()` is
//! monotonic within a backend only. Here the central generator is one word in
//! shared memory (`server`), the last *tick* issued: Unix milliseconds << 12 | a
//! 12-bit fraction of the millisecond (UUIDv7's `rand_a`, RFC 9562 §6.2 method
//! 3). Each id takes max(clock, last + 1) with one compare-and-swap, so every id
//! is greater than every id any backend of the server returned before it.
//!
//! **Across restarts**, also when the clock went back meanwhile: ids never
//! reach the floor on disk (`server`), and after a restart the word begins at
//! the floor, so the first id after a restart or crash is greater than any id
//! issued before, whatever the clock says.
//!
//! **The lead is capped.** More than 4,096 ids in a millisecond push the word
//! ahead of the clock; it may lead by at most [`MAX_LEAD_MS`], past that a call
//! waits for the clock. The clock here is the wall clock, or, after a restart
//! with the clock behind the floor, the floor plus the time since the server
//! started (ids go on at the pace of real time instead of stalling).

use crate::errors::fail;
use crate::server::{self, SharedState};
use nonceforge_core::uuid::v7::{self, LAST_TICK};
use pgrx::PgSqlErrorCode;
use pgrx::pg_sys;
use std::sync::atomic::Ordering;

/// How far (ms) the server-wide word may run ahead of the clock.
pub(crate) const MAX_LEAD_MS: u64 = 1_000;

fn now_tick() -> u64 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    v7::tick_of_ns(ns.min(u64::MAX as u128) as u64)
}

/// What a call does next.
#[derive(Debug, PartialEq, Eq)]
enum Choice {
    /// Issue this tick (if the compare-and-swap succeeds).
    Issue(u64),
    /// The word is [`MAX_LEAD_MS`] ahead of the clock: wait.
    Wait,
    /// The 48-bit millisecond range is used up.
    Exhausted,
}

/// The next tick after `last`, at the clock's tick `now`, with `clock_ms` the
/// clock the lead is measured against.
fn choose(last: u64, now: u64, clock_ms: u64) -> Choice {
    let t = now.max(last.saturating_add(1)).min(LAST_TICK);
    if t == last {
        Choice::Exhausted
    } else if t >> 12 > clock_ms.saturating_add(MAX_LEAD_MS) {
        Choice::Wait
    } else {
        Choice::Issue(t)
    }
}

/// The clock the lead is measured against: the wall clock, or the floor read
/// at start plus the time since the server started, whichever is later.
fn lead_clock_ms(s: &SharedState) -> u64 {
    s.now_ms()
        .max(s.floor_at_start_ms().saturating_add(s.ms_since_start()))
}

/// The next server-wide tick (ms << 12 | fraction). `function` names the SQL
/// function in errors.
pub(crate) fn next_tick(function: &str) -> u64 {
    next_ticks(function, 1)
}

/// The first of `n` (1..) consecutive server-wide ticks, taken with one
/// compare-and-swap: every one of them is greater than any tick issued before.
pub(crate) fn next_ticks(function: &str, n: u64) -> u64 {
    let s = server::state(function);
    // After a promotion, ticks start above the old primary's floor in the WAL.
    // SAFETY: reads a flag in shared memory (cached per backend once false).
    if s.wal_floor_unread() && !unsafe { pg_sys::RecoveryInProgress() } {
        s.floor_from_wal();
    }
    let mut waits = 0u32;
    loop {
        let last = s.order_last.load(Ordering::Acquire);
        let clock_ms = lead_clock_ms(s);
        let choice = match choose(last, now_tick(), clock_ms) {
            Choice::Issue(t) => match t.checked_add(n - 1).filter(|&end| end <= LAST_TICK) {
                None => Choice::Exhausted,
                Some(end) if end >> 12 > clock_ms.saturating_add(MAX_LEAD_MS) => Choice::Wait,
                Some(_) => Choice::Issue(t),
            },
            other => other,
        };
        let t = match choice {
            Choice::Issue(t) => t,
            Choice::Exhausted => fail(
                PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
                format!("{function}: the 48-bit millisecond range of a UUIDv7 is used up"),
                None,
            ),
            Choice::Wait => {
                waits += 1;
                if waits.is_multiple_of(16) {
                    pgrx::check_for_interrupts!();
                }
                // SAFETY: a plain sleep of 100 µs.
                unsafe { pg_sys::pg_usleep(100) };
                continue;
            }
        };
        let end = t + (n - 1);
        s.admit(function, end >> 12);
        if s.order_last
            .compare_exchange_weak(last, end, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_clock_and_never_repeats() {
        let ms = 1_790_000_000_000u64;
        assert_eq!(
            choose(ms << 12, (ms + 5) << 12, ms + 5),
            Choice::Issue((ms + 5) << 12)
        );
        assert_eq!(
            choose(ms << 12, ms << 12, ms),
            Choice::Issue((ms << 12) + 1)
        );
        assert_eq!(
            choose(ms << 12, (ms - 9) << 12, ms),
            Choice::Issue((ms << 12) + 1)
        );
    }

    #[test]
    fn lead_is_capped() {
        let ms = 1_790_000_000_000u64;
        let edge = ((ms + MAX_LEAD_MS) << 12) | 0xfff;
        assert_eq!(choose(edge - 1, ms << 12, ms), Choice::Issue(edge));
        assert_eq!(choose(edge, ms << 12, ms), Choice::Wait);
        // A clock behind the floor: the lead is measured from the later clock.
        assert_eq!(
            choose(edge, (ms - 3_600_000) << 12, ms + 1),
            Choice::Issue(edge + 1)
        );
    }

    #[test]
    fn end_of_range() {
        assert_eq!(
            choose(LAST_TICK, LAST_TICK, LAST_TICK >> 12),
            Choice::Exhausted
        );
        assert_eq!(
            choose(LAST_TICK - 1, 0, LAST_TICK >> 12),
            Choice::Issue(LAST_TICK)
        );
    }
}
