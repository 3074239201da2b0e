//! Server-wide order for `uuidv7()` and `tuid6()` (`nonceforge.server_order =
//! on`, with the library preloaded).
//!
//! pg_tuid's README notes that only a central generator makes time-prefixed ids
//! strictly increase across connections; PostgreSQL 18's `uuidv7()` is
//! monotonic within a backend only. Here the central generator is one word in
//! shared memory, the last *tick* issued: Unix milliseconds << 12 | a 12-bit
//! fraction of the millisecond (UUIDv7's `rand_a`, RFC 9562 §6.2 method 3).
//! Each id takes max(clock, last + 1) with one compare-and-swap, so every id is
//! greater than every id any backend of the server returned before it.
//!
//! **Across restarts**, also when the clock went back meanwhile: a floor is
//! kept in the data directory (`nonceforge_floor`). No id carries a millisecond
//! at or past the floor on disk; when ids come within 5 s of it, one backend
//! moves it 10 s ahead (written to a temporary file, fsynced, renamed, the
//! directory fsynced) before any id passes it. At start the word begins at the
//! floor, so the first id after a restart or crash is greater than any id
//! issued before, whatever the clock says. One fsync every ~5 s of ids.

use crate::errors::fail;
use nonceforge_core::uuid::v7::{self, LAST_TICK};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::{PgAtomic, PgSqlErrorCode, pg_shmem_init};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The floor is moved this far past the newest id's millisecond…
const RESERVE_AHEAD_MS: u64 = 10_000;
/// …when ids come this close to it.
const REFRESH_WITHIN_MS: u64 = 5_000;
const FLOOR_FILE: &str = "nonceforge_floor";
const FLOOR_HEADER: &str = "nonceforge floor v1";

/// The shared state.
pub(crate) struct ServerClock {
    /// The last tick issued.
    last: AtomicU64,
    /// Ids carry milliseconds below this (the floor on disk).
    reserved_ms: AtomicU64,
    /// A backend is moving the floor.
    writing: AtomicBool,
    /// The floor file could not be read at start: ids are refused.
    broken: AtomicBool,
}

// SAFETY: atomics only, no pointers: valid in every process that maps it.
unsafe impl PGRXSharedMemory for ServerClock {}

static CLOCK: PgAtomic<ServerClock> =
    // SAFETY: the name is this extension's own; nothing else registers it.
    unsafe { PgAtomic::new(c"nonceforge_server_clock") };

/// Asks for the shared word; only while shared_preload_libraries loads us. Its
/// initial value is computed in the postmaster's shared-memory startup (again
/// after a crash restart), from the floor file.
pub(crate) fn request_shared_memory() {
    pg_shmem_init!(CLOCK = startup_state());
}

fn floor_path() -> std::path::PathBuf {
    // SAFETY: DataDir is set (and absolute) before any library is preloaded.
    let dir = unsafe { std::ffi::CStr::from_ptr(pg_sys::DataDir) };
    std::path::Path::new(&*dir.to_string_lossy()).join(FLOOR_FILE)
}

fn now_tick() -> u64 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    v7::tick_of_ns(ns.min(u64::MAX as u128) as u64)
}

/// Parses the floor file's text: the header line, then Unix milliseconds.
fn parse_floor(text: &str) -> Option<u64> {
    let mut lines = text.lines();
    (lines.next()? == FLOOR_HEADER).then_some(())?;
    let ms: u64 = lines.next()?.trim().parse().ok()?;
    (ms < 1 << 48).then_some(ms)
}

fn startup_state() -> ServerClock {
    let (floor_ms, broken) = match std::fs::read_to_string(floor_path()) {
        Ok(text) => match parse_floor(&text) {
            Some(ms) => (ms, false),
            None => {
                pgrx::warning!(
                    "nonceforge: {FLOOR_FILE} in the data directory is not a floor this version wrote; uuidv7() and tuid6() are refused while nonceforge.server_order = on. Remove the file only once the clock is surely past every id issued before."
                );
                (0, true)
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0, false),
        Err(e) => {
            pgrx::warning!(
                "nonceforge: cannot read {FLOOR_FILE} in the data directory ({e}); uuidv7() and tuid6() are refused while nonceforge.server_order = on"
            );
            (0, true)
        }
    };
    ServerClock {
        // The first id is at or past the floor: above every id issued before.
        last: AtomicU64::new(((floor_ms << 12).saturating_sub(1)).min(LAST_TICK)),
        reserved_ms: AtomicU64::new(floor_ms),
        writing: AtomicBool::new(false),
        broken: AtomicBool::new(broken),
    }
}

/// Writes `ms` as the floor, durably.
fn persist(ms: u64) -> std::io::Result<()> {
    let path = floor_path();
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::File::create(&tmp)?;
        writeln!(f, "{FLOOR_HEADER}\n{ms}")?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(path.parent().unwrap_or(std::path::Path::new(".")))?.sync_all()
}

/// Clears `writing` however the writer leaves (an ERROR unwinds through it).
struct Writing<'a>(&'a AtomicBool);
impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Moves the floor past `ms` if no other backend is doing it; true if this
/// call did (or tried).
fn try_extend(c: &ServerClock, ms: u64) -> bool {
    if c.writing
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return false;
    }
    let _guard = Writing(&c.writing);
    let current = c.reserved_ms.load(Ordering::Acquire);
    if ms + REFRESH_WITHIN_MS < current {
        return true; // someone else just moved it
    }
    let target = (ms.max(now_tick() >> 12) + RESERVE_AHEAD_MS).min(1 << 48);
    if let Err(e) = persist(target) {
        fail(
            PgSqlErrorCode::ERRCODE_IO_ERROR,
            format!("cannot move the server-order floor ({FLOOR_FILE} in the data directory): {e}"),
            Some(
                "No id is issued past the floor on disk; free space or fix the data directory's permissions.",
            ),
        );
    }
    c.reserved_ms.store(target, Ordering::Release);
    true
}

/// The next server-wide tick (ms << 12 | fraction). `function` names the SQL
/// function in errors.
pub(crate) fn next_tick(function: &str) -> u64 {
    let c = CLOCK.get();
    if c.broken.load(Ordering::Relaxed) {
        fail(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("{function}: the server-order floor could not be read at server start"),
            Some(
                "The server log says why; a superuser decides when the clock is past every id issued before.",
            ),
        );
    }
    let mut spins = 0u32;
    loop {
        let last = c.last.load(Ordering::Acquire);
        let t = now_tick().max(last + 1).min(LAST_TICK);
        if t == last {
            fail(
                PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
                format!("{function}: the 48-bit millisecond range of a UUIDv7 is used up"),
                None,
            );
        }
        let ms = t >> 12;
        let reserved = c.reserved_ms.load(Ordering::Acquire);
        if ms + REFRESH_WITHIN_MS >= reserved && !try_extend(c, ms) && ms >= reserved {
            // Another backend is moving the floor and this id would pass it:
            // wait for the write (a few ms at most).
            spins += 1;
            if spins.is_multiple_of(64) {
                pgrx::check_for_interrupts!();
                // SAFETY: a plain sleep of 100 µs.
                unsafe { pg_sys::pg_usleep(100) };
            } else {
                std::hint::spin_loop();
            }
            continue;
        }
        if ms >= c.reserved_ms.load(Ordering::Acquire) {
            continue; // the write failed in another backend, or raced: look again
        }
        if c.last
            .compare_exchange_weak(last, t, Ordering::AcqRel, Ordering::Relaxed)
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
    fn floor_text() {
        assert_eq!(
            parse_floor("nonceforge floor v1\n1790000000000\n"),
            Some(1_790_000_000_000)
        );
        assert_eq!(parse_floor("nonceforge floor v2\n1\n"), None);
        assert_eq!(parse_floor("nonceforge floor v1\n-1\n"), None);
        assert_eq!(parse_floor("nonceforge floor v1\n281474976710656\n"), None);
        assert_eq!(parse_floor(""), None);
    }
}
