//! The server-wide state: one block of shared memory for every backend of every
//! database, and the floor that carries it across restarts.
//!
//! Nothing here is reached through SQL. There is no table, sequence or catalog
//! read behind a nonce, so no `search_path`, operator or view of a caller's can
//! steer it, and no code ever runs under another identity (see SECURITY.md).
//!
//! **The run.** Nonces, `sortable_nonce(64)` and the server-wide order of
//! `uuidv7()`/`tuid6()` all take their time from this server's *run*: it starts
//! at the first call after the server came up and left recovery, strictly
//! after the wall clock and at or above the floor, and lasts until the server
//! stops or crashes (the postmaster then initializes shared memory afresh).
//! Counter and encrypted nonces count ticks in shared memory from the run's
//! start; every backend reserves blocks of them with one atomic add.
//!
//! **The floor** (`nonceforge_floor` in the data directory) is a Unix
//! millisecond that no value of any kind has reached: no function returns a
//! value whose timestamp is at or past the floor on disk. When values come
//! within [`REFRESH_WITHIN_MS`] of it, one backend moves it
//! [`RESERVE_AHEAD_MS`] past the clock (temporary file, fsync, rename,
//! directory fsync) before any value passes it. So after a restart or crash,
//! even with the clock stepped back, the new run starts above every value
//! issued before. Counter nonces never carry a timestamp past the clock, and
//! the run starts after the clock, so a server restored from a backup or a
//! snapshot (whose floor is old) still starts above everything its lost future
//! issued, as long as its clock did not go back.
//!
//! **Recovery.** A server in recovery (a standby, or a server replaying WAL)
//! refuses: a standby shares the primary's machine id. On promotion the run
//! starts at the first call, after the clock — above every value the old
//! primary issued up to then.

use crate::errors::fail;
use nonceforge_core::Clock;
use nonceforge_core::uuid::v7::LAST_TICK;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::shmem::PGRXSharedMemory;
use pgrx::{PgAtomic, PgSqlErrorCode, pg_shmem_init};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The floor is moved this far past the newest value's millisecond…
pub(crate) const RESERVE_AHEAD_MS: u64 = 3_000;
/// …when values come this close to it (one fsync about every 1.5 s of values).
pub(crate) const REFRESH_WITHIN_MS: u64 = 1_500;
mod floor;
use floor::{FLOOR_FILE, floor_path, parse_floor, persist};

/// The replication origin whose progress carries the floor in the WAL (created
/// by the install and update scripts; see [`SharedState::wal_floor`]).
const ORIGIN_NAME: &std::ffi::CStr = c"nonceforge_floor";
/// No origin value is recorded beside the floor in the file.
const NO_MARK: u64 = u64::MAX;
/// The end of the 48-bit millisecond range every value here lives in.
const MS_END: u64 = 1 << 48;

/// The words of `SharedState::lease_state` (`nonceforge.machine_id = 'lease'`;
/// the keeper in `lease` writes them, the backends read them).
pub(crate) mod lease_state {
    /// No grant yet: the keeper is trying.
    pub(crate) const WAITING: u64 = 0;
    /// Held and renewed.
    pub(crate) const HELD: u64 = 1;
    /// No renewal reached the store before the deadline: stopped until one does.
    pub(crate) const LAPSED: u64 = 2;
    /// Another holder took the id: stopped until the server restarts.
    pub(crate) const LOST: u64 = 3;
    /// Released at shutdown.
    pub(crate) const STOPPED: u64 = 4;
    /// The keeper cannot run (settings, or it failed once): the log says why.
    pub(crate) const BROKEN: u64 = 5;
}

/// Every counter the backends share.
pub(crate) struct SharedState {
    /// Values carry milliseconds below this (the floor on disk).
    reserved_ms: AtomicU64,
    /// The floor as read at server start (raised at the run's start to the
    /// floor in the WAL, when that is higher: see [`SharedState::run_start`]).
    floor_at_start_ms: AtomicU64,
    /// The floor origin's value the file recorded beside its floor ([`NO_MARK`]: none).
    file_origin_mark: AtomicU64,
    /// The highest floor origin value read or written in this run (0: none).
    origin_ms: AtomicU64,
    /// The server log was told the floor cannot go into the WAL.
    origin_warned: AtomicBool,
    /// The floor in the WAL was read in this run ([`SharedState::floor_from_wal`]).
    wal_floor_read: AtomicBool,
    /// A backend is moving the floor.
    writing: AtomicBool,
    /// The floor file could not be read at start: every function here refuses.
    broken: AtomicBool,
    /// The run's start, Unix ms; 0 until the first call after recovery.
    run_start_ms: AtomicU64,
    /// Counter ticks per size (64, 96, 128), from the run's start.
    pub(crate) ticks: [AtomicU64; 3],
    /// The 64-bit sortable sequence (`unix_ms << 13 | counter`).
    pub(crate) sortable_64: AtomicU64,
    /// The last (Unix µs << 8 | seq) of `tuid_generate()`/`stuid_generate()`.
    pub(crate) tuid_word: AtomicU64,
    /// The newest millisecond any backend's clock has shown (never goes back).
    clock_ms: AtomicU64,
    /// The last server-order tick issued (`order`).
    pub(crate) order_last: AtomicU64,
    /// CLOCK_MONOTONIC (system-wide) at server start, ms.
    started_monotonic_ms: AtomicU64,
    /// `nonceforge.machine_id = 'lease'` (see `lease`): the keeper's state…
    pub(crate) lease_state: AtomicU64,
    /// …the leased id…
    pub(crate) lease_machine_id: AtomicU64,
    /// …the layout it was leased in (`Layout as u64`, read by the keeper at
    /// its start; the namespace records it)…
    pub(crate) lease_layout: AtomicU64,
    /// …the highest millisecond its previous holders may have issued…
    pub(crate) lease_floor_ms: AtomicU64,
    /// …and the last millisecond values may carry under it (0: none).
    pub(crate) lease_until_ms: AtomicU64,
    /// What `nonceforge_metrics()` reports (`metrics`).
    pub(crate) stats: crate::metrics::Stats,
}

// SAFETY: atomics only, no pointers: valid in every process that maps it.
unsafe impl PGRXSharedMemory for SharedState {}

static STATE: PgAtomic<SharedState> =
    // SAFETY: the name is this extension's own; nothing else registers it.
    unsafe { PgAtomic::new(c"nonceforge_server_state") };

/// Whether STATE was requested (set in the postmaster, inherited by every
/// backend it forks).
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// Asks for the shared state; only while shared_preload_libraries loads us.
/// Its initial value is computed in the postmaster's shared-memory startup
/// (again after a crash restart), from the floor file.
pub(crate) fn request_shared_memory() {
    pg_shmem_init!(STATE = startup_state());
    PRELOADED.store(true, Ordering::Relaxed);
}

/// The shared state, or an error with a hint when the library is not
/// preloaded; `function` names the SQL function.
pub(crate) fn state(function: &str) -> &'static SharedState {
    if !PRELOADED.load(Ordering::Relaxed) {
        fail(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!(
                "{function} needs the library in shared_preload_libraries (its state is shared by every backend of the server)"
            ),
            Some(
                "As a superuser: add nonceforge to shared_preload_libraries in postgresql.conf and restart the server.",
            ),
        );
    }
    let s = STATE.get();
    if s.broken.load(Ordering::Relaxed) {
        fail(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!(
                "{function}: the floor could not be read at server start ({FLOOR_FILE} in the data directory)"
            ),
            Some(
                "The server log says why; a superuser decides when the clock is surely past every value issued before, then removes the file and restarts.",
            ),
        );
    }
    s
}

/// The shared state if the library was preloaded (whatever its floor), for
/// counting refusals.
pub(crate) fn preloaded_state() -> Option<&'static SharedState> {
    PRELOADED.load(Ordering::Relaxed).then(|| STATE.get())
}

/// The shared state without the checks of [`state`], for the lease keeper
/// (started only when the library is preloaded).
pub(crate) fn shared_state() -> &'static SharedState {
    STATE.get()
}

fn startup_state() -> SharedState {
    let (floor_ms, mark, broken) = match std::fs::read_to_string(floor_path()) {
        Ok(text) => match parse_floor(&text) {
            Some((ms, mark)) => (ms, mark, false),
            None => {
                pgrx::warning!(
                    "nonceforge: {FLOOR_FILE} in the data directory is not a floor this version wrote; nonces and server-ordered ids are refused. Remove the file only once the clock is surely past every value issued before."
                );
                (0, NO_MARK, true)
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (0, NO_MARK, false),
        Err(e) => {
            pgrx::warning!(
                "nonceforge: cannot read {FLOOR_FILE} in the data directory ({e}); nonces and server-ordered ids are refused"
            );
            (0, NO_MARK, true)
        }
    };
    // SAFETY: registered in the postmaster while it sets up shared memory;
    // children drop inherited exit callbacks when they start.
    unsafe { pg_sys::on_shmem_exit(Some(tighten_floor_at_exit), pg_sys::Datum::from(0)) };
    SharedState {
        reserved_ms: AtomicU64::new(floor_ms),
        floor_at_start_ms: AtomicU64::new(floor_ms),
        file_origin_mark: AtomicU64::new(mark),
        origin_ms: AtomicU64::new(0),
        origin_warned: AtomicBool::new(false),
        wal_floor_read: AtomicBool::new(false),
        writing: AtomicBool::new(false),
        broken: AtomicBool::new(broken),
        run_start_ms: AtomicU64::new(0),
        ticks: Default::default(),
        sortable_64: AtomicU64::new(0),
        tuid_word: AtomicU64::new(0),
        clock_ms: AtomicU64::new(0),
        // The first server-ordered id is at or past the floor.
        order_last: AtomicU64::new(((floor_ms << 12).saturating_sub(1)).min(LAST_TICK)),
        started_monotonic_ms: AtomicU64::new(monotonic_ms()),
        lease_state: AtomicU64::new(lease_state::WAITING),
        lease_machine_id: AtomicU64::new(0),
        lease_layout: AtomicU64::new(0),
        lease_floor_ms: AtomicU64::new(0),
        lease_until_ms: AtomicU64::new(0),
        stats: crate::metrics::Stats::new(),
    }
}

/// When the postmaster leaves shared memory (a clean stop, or a crash restart
/// once every backend has gone), the floor is lowered from its write-ahead to
/// just past the newest millisecond any value reached, so the next run starts
/// at the clock instead of up to [`RESERVE_AHEAD_MS`] ahead of it. Every value
/// carries a millisecond at most the server's clock (whose high-water mark is
/// kept in `clock_ms`) or, for server-ordered ids and `tuid_generate()`,
/// `order_last` and `tuid_word`. After an
/// immediate stop or a power loss nothing runs here and the write-ahead floor
/// stands.
#[pg_guard]
unsafe extern "C-unwind" fn tighten_floor_at_exit(_code: i32, _arg: pg_sys::Datum) {
    if !PRELOADED.load(Ordering::Relaxed) {
        return;
    }
    let s = STATE.get();
    if s.broken.load(Ordering::Relaxed) {
        return;
    }
    let tight = s
        .floor_at_start_ms()
        .max(s.clock_ms.load(Ordering::Acquire) + 1)
        .max((s.order_last.load(Ordering::Acquire) >> 12) + 1)
        .max((s.tuid_word.load(Ordering::Acquire) >> 8) / 1_000 + 1);
    // The origin keeps the written-ahead value: the mark says the file's lower
    // floor supersedes it (see `SharedState::run_start`).
    if tight < s.reserved_ms.load(Ordering::Acquire)
        && let Err(e) = persist(
            tight,
            Some(s.origin_ms.load(Ordering::Acquire)).filter(|&ms| ms != 0),
        )
    {
        pgrx::log!(
            "nonceforge: could not lower the floor at exit ({e}); the written-ahead floor stands"
        );
    }
}

/// Clears `writing` however the writer leaves (an ERROR unwinds through it).
struct Writing<'a>(&'a AtomicBool);
impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl SharedState {
    /// Whether a value of millisecond `ms` may leave now without moving the
    /// floor (the fast path: one load).
    #[inline]
    fn comfortably_below(&self, ms: u64) -> bool {
        ms + REFRESH_WITHIN_MS < self.reserved_ms.load(Ordering::Acquire)
    }

    /// Returns once the floor on disk is above `ms` (moving it if this backend
    /// is the one to), so that a value of millisecond `ms` may leave.
    pub(crate) fn admit(&self, function: &str, ms: u64) {
        if self.comfortably_below(ms) {
            return;
        }
        let mut spins = 0u32;
        loop {
            if self.try_extend(function, ms) || ms < self.reserved_ms.load(Ordering::Acquire) {
                if ms < self.reserved_ms.load(Ordering::Acquire) {
                    return;
                }
                continue; // raced with another writer: look again
            }
            // Another backend is moving the floor and this value would pass it:
            // wait for the write (a few ms at most).
            spins += 1;
            if spins.is_multiple_of(64) {
                pgrx::check_for_interrupts!();
                // SAFETY: a plain sleep of 100 µs.
                unsafe { pg_sys::pg_usleep(100) };
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Moves the floor past `ms` if no other backend is doing it; true if this
    /// call did (or found it already moved).
    fn try_extend(&self, function: &str, ms: u64) -> bool {
        if self
            .writing
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        let _guard = Writing(&self.writing);
        if self.comfortably_below(ms) {
            return true; // someone else just moved it
        }
        let target = (ms.max(wall_ms()) + RESERVE_AHEAD_MS).min(MS_END);
        // The WAL first: a crash between the two leaves the higher floor in the
        // WAL, which the next start takes (its mark differs from the file's).
        let mark = self.wal_floor(target).then_some(target);
        if let Err(e) = persist(target, mark) {
            fail(
                PgSqlErrorCode::ERRCODE_IO_ERROR,
                format!(
                    "{function}: cannot move the floor ({FLOOR_FILE} in the data directory): {e}"
                ),
                Some(
                    "No value is issued past the floor on disk; free space or fix the data directory's permissions.",
                ),
            );
        }
        self.reserved_ms.store(target, Ordering::Release);
        true
    }

    /// The floor origin's id, or `None` (with a warning in the server log,
    /// once a run) when the floor cannot go into the WAL: no origin (the
    /// extension was never created on this server), or no replication origin
    /// slots configured.
    fn floor_origin(&self) -> Option<pg_sys::RepOriginId> {
        #[cfg(not(feature = "pg18"))]
        // SAFETY: a GUC variable, read in the backend's own thread.
        let slots = unsafe { pg_sys::max_replication_slots };
        #[cfg(feature = "pg18")]
        // SAFETY: as above.
        let slots = unsafe { pg_sys::max_active_replication_origins };
        // SAFETY: a syscache lookup by name (pg_replication_origin is a shared
        // catalog: the same origin from every database), in the caller's
        // transaction; missing_ok, so no ERROR.
        let id = if slots > 0 {
            unsafe { pg_sys::replorigin_by_name(ORIGIN_NAME.as_ptr(), true) }
        } else {
            0
        };
        if id != 0 {
            return Some(id);
        }
        if !self.origin_warned.swap(true, Ordering::Relaxed) {
            pgrx::warning!(
                "nonceforge: the floor cannot go into the WAL ({}): a standby promoted after this server stops relies on its clock alone to start above this server's values",
                if slots > 0 {
                    "no replication origin nonceforge_floor: CREATE EXTENSION makes it, pg_upgrade does not carry it; a superuser makes it with SELECT pg_replication_origin_create('nonceforge_floor')"
                } else if cfg!(feature = "pg18") {
                    "max_active_replication_origins = 0"
                } else {
                    "max_replication_slots = 0"
                }
            );
        }
        None
    }

    /// Writes `ms` as the floor into the WAL, flushed (and, with synchronous
    /// replication, on the synchronous standbys) before any value passes it:
    /// the progress of the replication origin `nonceforge_floor`, an ordinary
    /// WAL record that every standby replays into its own shared memory, keeps
    /// across its restarts (checkpoints) and carries into promotion, on every
    /// major from 14 on, without the library loaded for replay. False when it
    /// cannot (see [`Self::floor_origin`]).
    fn wal_floor(&self, ms: u64) -> bool {
        // A standby writes no WAL (its server-ordered ids, the one thing it
        // issues, are covered by its own file: nothing of it is replicated).
        // SAFETY: reads a flag in shared memory.
        if unsafe { pg_sys::RecoveryInProgress() } {
            return false;
        }
        let Some(id) = self.floor_origin() else {
            return false;
        };
        // SAFETY: a valid origin id; the origin's progress only moves forward
        // (go_backward false). The record is flushed up to its end, then
        // waited for as a commit would be. Its end is XactLastRecEnd (what
        // XLogInsert leaves there, and what a commit flushes), not the insert
        // position: at a page boundary GetXLogInsertRecPtr() points past the
        // next page's header, and XLogFlush fails with "xlog flush request
        // ... is not satisfied" (caught by make test; tests/sql/run.sh puts a
        // floor record's end on a page boundary).
        unsafe {
            pg_sys::replorigin_advance(id, ms, 0, false, true);
            let lsn = pg_sys::XactLastRecEnd;
            pg_sys::XLogFlush(lsn);
            pg_sys::SyncRepWaitForLSN(lsn, false);
        }
        self.origin_ms.fetch_max(ms, Ordering::AcqRel);
        true
    }

    /// The floor the run starts at or above: the file's, or — when the floor
    /// in the WAL is not the one the file recorded beside its floor (this
    /// server replayed another's: a standby promoted, a backup restored with
    /// WAL) — the higher of the two. Raises the state that follows the floor.
    pub(crate) fn floor_from_wal(&self) -> u64 {
        let file = self.floor_at_start_ms();
        if self.wal_floor_read.load(Ordering::Acquire) {
            return file;
        }
        // SAFETY: the origin id is valid; reads its progress under its lock.
        let wal = match self.floor_origin() {
            Some(id) => unsafe { pg_sys::replorigin_get_progress(id, false) },
            None => {
                // No floor in the WAL to read (the warning said why): not
                // looked up again on every server-ordered id of the run.
                self.wal_floor_read.store(true, Ordering::Release);
                return file;
            }
        };
        self.origin_ms.fetch_max(wal, Ordering::AcqRel);
        if wal == self.file_origin_mark.load(Ordering::Relaxed) || wal <= file {
            self.wal_floor_read.store(true, Ordering::Release);
            return file;
        }
        pgrx::log!(
            "nonceforge: the floor in the WAL ({wal}) is above this data directory's {FLOOR_FILE} ({file}): values start above it"
        );
        self.floor_at_start_ms.fetch_max(wal, Ordering::AcqRel);
        self.order_last
            .fetch_max(((wal << 12) - 1).min(LAST_TICK), Ordering::AcqRel);
        self.wal_floor_read.store(true, Ordering::Release);
        wal
    }

    /// Whether the floor in the WAL still has to be read in this run (one load).
    #[inline]
    pub(crate) fn wal_floor_unread(&self) -> bool {
        !self.wal_floor_read.load(Ordering::Relaxed)
    }

    /// Milliseconds since the server started (CLOCK_MONOTONIC: the same in
    /// every process, unmoved by steps of the wall clock).
    pub(crate) fn ms_since_start(&self) -> u64 {
        monotonic_ms().saturating_sub(self.started_monotonic_ms.load(Ordering::Relaxed))
    }

    /// The floor as read at server start.
    pub(crate) fn floor_at_start_ms(&self) -> u64 {
        self.floor_at_start_ms.load(Ordering::Relaxed)
    }

    /// The run's start (Unix ms), beginning the run if this is its first call:
    /// strictly after the wall clock and at or above the floor read at start;
    /// waits (at most `nonceforge.max_clock_wait`) until the wall clock has
    /// reached it. Refuses in recovery.
    pub(crate) fn run_start(&self, function: &str) -> u64 {
        refuse_in_recovery(function);
        let start = match self.run_start_ms.load(Ordering::Acquire) {
            0 => {
                let floor = self.floor_from_wal();
                let proposed = (wall_ms() + 1).max(floor);
                match self.run_start_ms.compare_exchange(
                    0,
                    proposed,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => proposed,
                    Err(other) => other,
                }
            }
            s => s,
        };
        self.wait_for_clock(function, start);
        start
    }

    /// Returns once the server's clock reads `ms` or later (a caller that needs
    /// its values in a later millisecond than something else asks for one past
    /// it). Waits at most `nonceforge.max_clock_wait`: a wall clock further
    /// behind than that (after a restart with the clock back, or a step back
    /// while running) is refused at once with [`clock_behind`].
    pub(crate) fn wait_for_clock(&self, function: &str, ms: u64) {
        if self.now_ms() >= ms {
            return;
        }
        let behind = ms.saturating_sub(wall_ms());
        if behind > crate::settings::max_clock_wait_ms() {
            clock_behind(function, behind);
        }
        let from = wall_us();
        while self.now_ms() < ms {
            pgrx::check_for_interrupts!();
            // SAFETY: a plain sleep of 200 µs.
            unsafe { pg_sys::pg_usleep(200) };
        }
        self.stats.throttled(wall_us().saturating_sub(from));
    }

    /// The newest millisecond values of this run may carry: the server's
    /// clock as last seen, or the run's start (above the floor) — the wall
    /// clock is behind by what this exceeds it.
    pub(crate) fn newest_ms(&self) -> u64 {
        self.clock_ms
            .load(Ordering::Relaxed)
            .max(self.run_start_ms.load(Ordering::Relaxed))
    }

    /// The floor file could not be read at start (every function refuses).
    pub(crate) fn is_broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }

    /// The server's clock, Unix ms: the wall clock, never going back across
    /// backends (the newest millisecond any backend has seen).
    pub(crate) fn now_ms(&self) -> u64 {
        let wall = wall_ms();
        let seen = self.clock_ms.load(Ordering::Relaxed);
        if wall > seen {
            self.clock_ms.fetch_max(wall, Ordering::Relaxed);
            wall
        } else {
            seen
        }
    }
}

/// The wall clock, Unix ms.
pub(crate) fn wall_ms() -> u64 {
    wall_us() / 1_000
}

/// The wall clock, Unix µs.
pub(crate) fn wall_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// CLOCK_MONOTONIC in ms: one clock for every process of the machine.
fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: an out-parameter of the right type; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1_000 + (ts.tv_nsec as u64) / 1_000_000
}

/// Refuses a call that would have to wait `behind` ms for the wall clock,
/// more than `nonceforge.max_clock_wait` allows.
pub(crate) fn clock_behind(function: &str, behind: u64) -> ! {
    fail(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!(
            "{function}: the clock is {behind} ms behind the floor of earlier values ({FLOOR_FILE}) and the newest value issued; nonces resume when it has caught up"
        ),
        Some(&format!(
            "The server's clock went back (or the floor was moved by hand); calls wait at most nonceforge.max_clock_wait ({} ms) for it. Check the clock (NTP): values issued before are above it.",
            crate::settings::max_clock_wait_ms()
        )),
    );
}

/// Refuses while the server is in recovery (a standby, or replaying WAL).
pub(crate) fn refuse_in_recovery(function: &str) {
    // SAFETY: reads a flag in shared memory (cached per backend once false).
    if unsafe { pg_sys::RecoveryInProgress() } {
        fail(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            format!("{function} cannot run while the server is in recovery"),
            Some(
                "A standby shares its primary's machine id: call it on the primary. After promotion it issues values above every value the old primary issued.",
            ),
        );
    }
}

/// The server's clock as a core [`Clock`]: every backend's generator reads the
/// same timeline, which never goes back across backends.
#[derive(Clone, Copy)]
pub(crate) struct ServerClock(&'static SharedState);

impl ServerClock {
    pub(crate) fn new(state: &'static SharedState) -> Self {
        ServerClock(state)
    }
}

impl Clock for ServerClock {
    fn wall_ns(&self) -> u64 {
        self.0.now_ms() * 1_000_000
    }
    fn monotonic_ns(&self) -> u64 {
        self.0.now_ms() * 1_000_000
    }
    fn sleep(&self, duration: Duration) {
        // A generator waits for the next millisecond of the server's clock,
        // which stands still while the wall clock is behind it.
        let behind = self
            .0
            .clock_ms
            .load(Ordering::Relaxed)
            .saturating_sub(wall_ms());
        if behind > crate::settings::max_clock_wait_ms() {
            clock_behind("nonceforge", behind);
        }
        pgrx::check_for_interrupts!();
        let from = wall_us();
        // SAFETY: a plain sleep; at most 1 s at a time.
        unsafe { pg_sys::pg_usleep(duration.as_micros().min(1_000_000) as _) };
        self.0.stats.throttled(wall_us().saturating_sub(from));
    }
}

extension_sql!(
    r#"
-- The floor's copy in the WAL (see server.rs): a replication origin, one for the
-- whole server (pg_replication_origin is a shared catalog), made by the first
-- database's CREATE EXTENSION and kept by the others (and by DROP EXTENSION).
SELECT pg_catalog.pg_replication_origin_create('nonceforge_floor')
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_replication_origin
                    WHERE roname OPERATOR(pg_catalog.=) 'nonceforge_floor');
"#,
    name = "floor_origin"
);
