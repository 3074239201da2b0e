//! `nonceforge.machine_id = 'lease'`: the server leases its machine id from the
//! fleet's store (PostgreSQL, Redis or etcd), as every other face does, so a
//! clone, a restored backup or a promoted standby gets its own id instead of
//! sharing its origin's, and a server that may have lost its lease stops.
//!
//! **The keeper.** A background worker (`nonceforge lease keeper`, started with
//! the server) takes the lowest free id through the lease crate
//! (docs/lease-protocol.md: the same table or keys, namespace and floors as the
//! Rust, Go, Node and Elixir faces) and renews it. It attaches one generator on
//! the server's clock to the lease, so the lease crate's rules hold the whole
//! server: it publishes into shared memory the id, the previous holders' floor
//! and the last millisecond values may carry (`valid until`, moved by each
//! renewal, 0 once lapsed, lost or released).
//!
//! **The backends** wait (at most [`GRANT_WAIT_MS`] and the grant's start) for the first grant, start
//! their nonces above the previous holders' floor, and check every value
//! against `valid until` *after* making it (its millisecond is at most the
//! server's clock then): a value is returned only if the clock has not passed
//! what the store recorded. So values stop when renewals fail (lapsed: they
//! resume when one succeeds), for good when another holder took the id (lost:
//! restart the server to lease a new one), and at shutdown, before the id is
//! released with the server's clock as its floor.
//!
//! The id never changes during a run of shared memory: a keeper that fails and
//! is restarted does not lease again (nonces stop until the server restarts);
//! a crash restart reinitializes shared memory and starts a new keeper, which
//! leases a new id above its floor.

use crate::errors::fail;
use crate::server::lease_state::{BROKEN, HELD, LAPSED, LOST, STOPPED, WAITING};
use crate::server::{self, ServerClock, SharedState};
use crate::settings;
use nonceforge_lease::{Lease, LeaseError, LeaseEvent, LeaseOptions};
use pgrx::bgworkers::{BackgroundWorker, SignalWakeFlags};
use pgrx::prelude::*;
use pgrx::{PgSqlErrorCode, pg_sys};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long a first call waits for the keeper's first grant.
pub(crate) const GRANT_WAIT_MS: u64 = 8_000;

/// How long a first call waits for the first grant: [`GRANT_WAIT_MS`] to
/// reach the store, plus the start every grant waits out (the TTL and the
/// margin: docs/lease-protocol.md, rule 3).
fn grant_wait_ms() -> u64 {
    let options = LeaseOptions {
        ttl: Duration::from_millis(crate::settings::lease_ttl_ms()),
        ..LeaseOptions::default()
    };
    GRANT_WAIT_MS + options.start_delay().map_or(0, |d| d.as_millis() as u64)
}

/// How often the keeper wakes to pass the lease thread's log lines to the
/// server log. The lease's state is not polled: the lease thread publishes
/// each change into shared memory as it makes it (`Lease::on_event`).
const LOG_EVERY: Duration = Duration::from_millis(100);

fn state_name(state: u64) -> &'static str {
    match state {
        WAITING => "waiting",
        HELD => "held",
        LAPSED => "lapsed",
        LOST => "lost",
        STOPPED => "released",
        _ => "broken",
    }
}

/// The leased id and the previous holders' floor, waiting for the first grant;
/// an error with a hint when there is none.
pub(crate) fn granted(s: &SharedState, function: &str) -> (u64, u64) {
    let give_up = s.ms_since_start() + grant_wait_ms();
    loop {
        match s.lease_state.load(Ordering::Acquire) {
            HELD | LAPSED => {
                return (
                    s.lease_machine_id.load(Ordering::Acquire),
                    s.lease_floor_ms.load(Ordering::Acquire),
                );
            }
            WAITING if s.ms_since_start() < give_up => {
                pgrx::check_for_interrupts!();
                // SAFETY: a plain sleep of 10 ms.
                unsafe { pg_sys::pg_usleep(10_000) };
            }
            other => refuse(function, other),
        }
    }
}

/// Returns if a value made just now may leave under the lease: the server's
/// clock has not passed the last millisecond the store recorded.
#[inline]
pub(crate) fn admits(s: &SharedState, function: &str) {
    let until = s.lease_until_ms.load(Ordering::SeqCst);
    if s.now_ms() > until {
        refuse(function, s.lease_state.load(Ordering::Acquire));
    }
}

fn refuse(function: &str, state: u64) -> ! {
    crate::metrics::refused(match state {
        HELD | LAPSED | LOST | STOPPED => crate::metrics::Refusal::Deadline,
        _ => crate::metrics::Refusal::Disabled,
    });
    let (message, hint) = match state {
        WAITING => (
            "no machine id leased yet: the lease keeper has not reached the store",
            "The server log says why (nonceforge.lease_url unreachable, or every id taken). Nonces start once it holds one.",
        ),
        HELD | LAPSED => (
            "the machine-id lease may have lapsed (no renewal reached the store in time): nonces stop until a renewal succeeds",
            "Check that the lease store (nonceforge.lease_url) is up and reachable; the server log shows the renewals.",
        ),
        LOST => (
            "the machine-id lease was lost (another holder took the id): nonces stop until the server restarts and leases a new one",
            "Another process was given this server's id (it was evicted, or the store lost its data or went back to an older copy). Restart the server.",
        ),
        STOPPED => (
            "the machine-id lease was released: the server is shutting down",
            "Connect again once the server has restarted.",
        ),
        _ => (
            "the lease keeper cannot hold a machine id",
            "The server log says why (nonceforge.lease_* settings); fix them and restart the server.",
        ),
    };
    fail(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("{function}: {message}"),
        Some(hint),
    )
}

/// Where this server's machine id comes from, and where it stands.
#[pg_extern(volatile, parallel_safe)]
fn machine_id_status() -> TableIterator<
    'static,
    (
        name!(machine_id, Option<i32>),
        name!(source, String),
        name!(state, String),
        name!(valid_until, Option<pgrx::datum::TimestampWithTimeZone>),
    ),
> {
    let function = "machine_id_status()";
    let row = if settings::lease_mode() {
        let s = server::state(function);
        let state = s.lease_state.load(Ordering::Acquire);
        let held = matches!(state, HELD | LAPSED | LOST | STOPPED);
        let id = held.then(|| s.lease_machine_id.load(Ordering::Acquire) as i32);
        let until = s.lease_until_ms.load(Ordering::SeqCst);
        let until = (held && until > 0)
            .then(|| crate::errors::tz_from_unix_us((until.min(1 << 48) * 1_000) as i64));
        let shown = if state == HELD && s.now_ms() > s.lease_until_ms.load(Ordering::SeqCst) {
            "lapsed"
        } else {
            state_name(state)
        };
        (id, "lease".to_owned(), shown.to_owned(), until)
    } else {
        match settings::fixed_machine_id() {
            Some(id) => (Some(id as i32), "setting".into(), "set".into(), None),
            None => (None, "setting".into(), "not set".into(), None),
        }
    };
    TableIterator::once(row)
}

/// Registers the keeper (in the postmaster, while it preloads the library).
pub(crate) fn register_keeper() {
    pgrx::bgworkers::BackgroundWorkerBuilder::new("nonceforge lease keeper")
        .set_type("nonceforge lease keeper")
        .set_library("nonceforge")
        .set_function("nonceforge_lease_keeper")
        .enable_shmem_access(None)
        .set_start_time(pgrx::bgworkers::BgWorkerStartTime::PostmasterStart)
        .set_restart_time(Some(Duration::from_secs(5)))
        .load();
}

/// What the lease crate logs, from its own thread, for the keeper's main
/// thread to write to the server log (PostgreSQL's log is not thread-safe).
static PENDING_LOG: Mutex<Vec<(log::Level, String)>> = Mutex::new(Vec::new());

struct Relay;
impl log::Log for Relay {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info && metadata.target().starts_with("nonceforge")
    }
    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata())
            && let Ok(mut pending) = PENDING_LOG.lock()
            && pending.len() < 1_000
        {
            pending.push((record.level(), record.args().to_string()));
        }
    }
    fn flush(&self) {}
}
static RELAY: Relay = Relay;

fn flush_log() {
    let pending = match PENDING_LOG.lock() {
        Ok(mut p) => std::mem::take(&mut *p),
        Err(_) => return,
    };
    for (level, line) in pending {
        if level <= log::Level::Warn {
            pgrx::warning!("{line}");
        } else {
            pgrx::log!("{line}");
        }
    }
}

/// Runs `f` with every signal blocked in this thread, so the threads it
/// starts (the lease crate's) inherit the mask: PostgreSQL's signal handlers
/// must run in the main thread.
fn signals_blocked<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: sigfillset/pthread_sigmask on sets owned here; the old mask is
    // restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let out = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        out
    }
}

/// Waits for SIGTERM (or the postmaster's death).
fn idle() {
    while BackgroundWorker::wait_latch(Some(Duration::from_secs(1))) {}
}

fn holder() -> String {
    let mut host = [0u8; 256];
    // SAFETY: a buffer of its stated length; gethostname NUL-terminates within it.
    let host = if unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) } == 0 {
        let end = host.iter().position(|&b| b == 0).unwrap_or(host.len());
        String::from_utf8_lossy(&host[..end]).into_owned()
    } else {
        "unknown-host".into()
    };
    // SAFETY: set by the postmaster before any worker starts.
    let port = unsafe { pg_sys::PostPortNumber };
    format!("postgresql/{host}:{port}/{}", std::process::id())
}

/// The keeper's entry point.
#[pg_guard]
#[unsafe(no_mangle)]
pub extern "C-unwind" fn nonceforge_lease_keeper(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    let _ = log::set_logger(&RELAY);
    log::set_max_level(log::LevelFilter::Info);
    let s = server::shared_state();
    if s.lease_state.load(Ordering::Acquire) != WAITING {
        // This shared memory saw a keeper before, which failed: its id may still
        // be held in the store, and backends may have values under it. Leasing
        // a new id in the same run could mix the two; wait for a restart.
        s.lease_until_ms.store(0, Ordering::SeqCst);
        s.lease_state.store(BROKEN, Ordering::Release);
        pgrx::warning!(
            "nonceforge: the lease keeper restarted after a failure; nonces stay stopped until the server restarts"
        );
        return idle();
    }
    let settings = match settings::lease_settings() {
        Ok(settings) => settings,
        Err(why) => {
            s.lease_state.store(BROKEN, Ordering::Release);
            pgrx::warning!("nonceforge: the lease keeper cannot start: {why}");
            return idle();
        }
    };
    // The layout at the keeper's start is the lease's for this run: the
    // namespace records it, and backends refuse while the setting differs.
    let layout = crate::settings::layout();
    s.lease_layout.store(layout as u64, Ordering::Release);
    let options = LeaseOptions {
        ttl: settings.ttl,
        namespace: settings.namespace.clone(),
        holder: Some(holder()),
        fast_start: settings.fast_start,
        ..LeaseOptions::for_layout(layout)
    };
    let Some((lease, generator)) = acquire(s, &settings.url, &options) else {
        return;
    };
    drop(settings);
    s.lease_machine_id
        .store(u64::from(lease.machine_id().get()), Ordering::Release);
    s.lease_floor_ms
        .store(lease.floor_unix_ms(), Ordering::Release);
    s.lease_until_ms
        .store(generator.valid_until().unwrap_or(0), Ordering::SeqCst);
    s.lease_state.store(HELD, Ordering::Release);
    // Every change from here on is pushed by the lease's thread, right after
    // it moves the generator's deadline: shared memory sees it at once. The
    // published `valid until` is a millisecond the store has recorded, never
    // a timer.
    let published = generator.clone();
    lease.on_event(move |event| {
        let (state, until) = match event {
            LeaseEvent::Renewed { .. } | LeaseEvent::Resumed => {
                (HELD, published.valid_until().unwrap_or(0))
            }
            LeaseEvent::Lapsed => (LAPSED, published.valid_until().unwrap_or(0)),
            LeaseEvent::Lost(_) => (LOST, 0),
            LeaseEvent::Released => (STOPPED, 0),
            _ => return,
        };
        s.lease_until_ms.store(until, Ordering::SeqCst);
        s.lease_state.store(state, Ordering::Release);
    });
    pgrx::log!(
        "nonceforge: machine id {} leased from {} as {} (token {}, previous holders' floor {})",
        lease.machine_id().get(),
        lease.backend(),
        lease.holder(),
        lease.token(),
        lease.floor_unix_ms()
    );
    publish_metrics(s, &lease);
    while BackgroundWorker::wait_latch(Some(LOG_EVERY)) {
        flush_log();
        publish_metrics(s, &lease);
    }
    // Shutdown: stop every backend first, then release with the server's clock
    // (at or past every value's millisecond) as the id's floor.
    s.lease_until_ms.store(0, Ordering::SeqCst);
    s.lease_state.store(STOPPED, Ordering::Release);
    let id = lease.machine_id().get();
    publish_metrics(s, &lease);
    match signals_blocked(|| lease.release()) {
        Ok(()) => pgrx::log!("nonceforge: machine id {id} released"),
        Err(e) => pgrx::warning!("nonceforge: releasing machine id {id}: {e}"),
    }
    flush_log();
}

/// Puts the lease's figures where `nonceforge_metrics()` reads them.
fn publish_metrics(s: &SharedState, lease: &Lease) {
    let ready = lease.readiness().is_ok();
    let text = crate::metrics::render_lease(&lease.metrics().samples(ready));
    s.stats.publish_lease(&text);
}

/// Leases an id and attaches a generator on the server's clock, retrying
/// until it works or the server stops (None then).
fn acquire(
    s: &'static SharedState,
    url: &str,
    options: &LeaseOptions,
) -> Option<(Lease, nonceforge_core::NonceGenerator<ServerClock>)> {
    let mut failures = 0u64;
    loop {
        if BackgroundWorker::sigterm_received() {
            s.lease_state.store(STOPPED, Ordering::Release);
            return None;
        }
        // The lease's thread is started with the server's signals blocked
        // (it inherits the mask); the generator is built after any wait an id
        // without history needs (the TTL and margin), which answers SIGTERM.
        let attempt = signals_blocked(|| Lease::acquire(url, options)).and_then(|lease| {
            loop {
                let left = lease.start_in();
                if left.is_zero() {
                    break;
                }
                if !BackgroundWorker::wait_latch(Some(left.min(Duration::from_millis(100)))) {
                    return Err(LeaseError::Generator {
                        rule: "the server is stopping",
                    });
                }
                flush_log();
            }
            let generator = lease.builder().clock(ServerClock::new(s)).build()?;
            lease.attach(&generator)?;
            Ok::<_, LeaseError>((lease, generator))
        });
        flush_log();
        match attempt {
            Ok(held) => return Some(held),
            Err(e @ (LeaseError::BadUrl { .. } | LeaseError::BadOption { .. })) => {
                s.lease_state.store(BROKEN, Ordering::Release);
                pgrx::warning!("nonceforge: the lease keeper cannot start: {e}");
                idle();
                return None;
            }
            Err(_) if BackgroundWorker::sigterm_received() => {
                s.lease_state.store(STOPPED, Ordering::Release);
                return None;
            }
            Err(e) => {
                // Every failure for the first ten, then one in thirty.
                if failures < 10 || failures.is_multiple_of(30) {
                    pgrx::warning!("nonceforge: cannot lease a machine id yet (retrying): {e}");
                }
                failures += 1;
                if !BackgroundWorker::wait_latch(Some(Duration::from_secs(1))) {
                    s.lease_state.store(STOPPED, Ordering::Release);
                    return None;
                }
            }
        }
    }
}
