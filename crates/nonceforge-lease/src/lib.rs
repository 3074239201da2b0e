//! Machine-id leases for nonceforge generators, kept in PostgreSQL, Redis or etcd.
//!
//! A nonce is unique only while no two live generators share a machine id. A
//! [`Lease`] takes a free id (0..=511; 0..=65535 in the wide layout) from a store every process
//! trusts, renews it in the background, and holds the generators built on it to
//! a **local deadline**: the lease's expiry minus a margin, counted on the
//! monotonic clock from the moment the last successful renewal was *sent*. Past
//! the deadline every call returns [`nonceforge::Error::Disabled`] — whether the
//! renewals failed, the store is down, or the process was paused (SIGSTOP, a
//! frozen VM) and has not yet heard that it lost the lease. Nothing is issued
//! under an expired lease.
//!
//! ```no_run
//! use nonceforge_lease::{Lease, LeaseOptions};
//! let lease = Lease::acquire("postgres://app@db.internal/app", &LeaseOptions::default())?;
//! let generator = lease.generator()?;          // machine id from the lease, attached to it
//! let nonce: [u8; 12] = generator.counter_96()?;
//! lease.release()?;                            // on clean shutdown: the id is free at once
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Timestamps across holders
//!
//! The store keeps, per id, the highest timestamp its holders may have issued
//! (the *floor*). Each renewal raises it to the holder's deadline (on the
//! holder's clock) *before* the deadline moves, and a clean release lowers it to
//! the last timestamp actually issued. A new holder's generator starts strictly
//! above the floor ([`nonceforge::NonceGeneratorBuilder::not_before`]), so ids
//! stay unique across a restart onto a host whose clock is behind — it waits up
//! to [`LeaseOptions::max_clock_wait`] (default: the TTL plus twice the margin) for its clock to pass the floor, and
//! fails with [`nonceforge::Error::ClockBehind`] rather than issue below it.
//!
//! # What each store survives
//!
//! | failure | PostgreSQL | Redis | etcd (3 members) |
//! |---|---|---|---|
//! | holder killed (`kill -9`) | id free after the TTL | id free after the TTL | id free after the TTL |
//! | holder paused past the TTL | disabled at its deadline; on waking, stays disabled (lost) or resumes if nobody took the id | same | same |
//! | store restarts (down < TTL − margin − renewal period) | generators keep running; renewals resume | same, if Redis persists (AOF/RDB); without persistence it comes back empty (next row) | same |
//! | store down longer | generators stop at the deadline; resume when it is back if nobody took the id | same | same |
//! | store comes back empty (flushed, restarted without persistence, prefix wiped, tables dropped) | every old holder stops at its next renewal ([`LostReason::StoreLostData`]); new holders find no history and start the TTL and margin ahead | same | same |
//! | store goes back (an asynchronous replica that was behind promoted, a backup, dump or snapshot restored) | every holder the copy does not show stops at its next renewal ([`LostReason::StoreWentBack`], or `Taken` where another took the id since); every new grant starts the TTL and margin ahead of its acquirer's clock, above all of them | same (Sentinel: `redis+sentinel://…`) | same (snapshot restores; Raft failovers never go back) |
//! | a store member lost | a standby promoted: the row above (multi-host URLs with `target_session_attrs=read-write` follow it) | a replica promoted: the row above | **yes**: a minority of members can fail; a new leader extends leases, never shortens them |
//!
//! # Start-up: the TTL and margin, or a fast start
//!
//! Because a store may come back with an older copy of its data, every new
//! grant's generators start above this host's clock plus the TTL and margin
//! (11 s with the defaults; [`Lease::wait_for_start`] waits it out). Hold one
//! lease across jobs to pay it once, or set [`LeaseOptions::fast_start`] where
//! the store cannot go back: [`FastStart::Verify`] checks it (PostgreSQL
//! synchronous standbys, Redis replicas acknowledging each write with `WAIT`,
//! etcd), [`FastStart::Declared`] takes the operator's word.
//!
//! # A store that loses its data, or is shared with others
//!
//! Every grant has a random 128-bit id and carries the store's *incarnation*
//! (drawn by whoever creates the namespace's record): a holder whose grant the
//! store no longer has stops at its next renewal and says why
//! ([`Lease::lost_reason`], [`LeaseEvent::Lost`]). An id the store has no
//! record of ([`Lease::has_history`] false) starts the TTL and margin ahead of
//! this host's clock, above anything an earlier holder may still issue while
//! the hosts' clocks agree within twice the margin. In PostgreSQL the lease
//! tables live in a schema of the store role's own ([`LeaseOptions::pg_schema`]);
//! objects of other roles are refused, never run ([`LeaseError::Refused`]).
//! The protocol, its worst cases and their proofs: `docs/lease-protocol.md`.
//!
//! # Watching a lease
//!
//! [`Lease::subscribe`] (a channel) and [`Lease::on_event`] (a callback on the
//! lease's thread) hear each change as it is made — renewed, lapsed, resumed,
//! lost, released — so nothing needs to poll [`Lease::state`].
//!
//! # Choosing the TTL and margins
//!
//! * **TTL** bounds how long a crashed holder's id stays taken, and how long a
//!   store outage the generators ride out (TTL − margin − renewal period). 10 s
//!   suits most fleets; 2–5 s when ids are scarce and processes churn.
//! * **renewal period** ≤ (TTL − margin) / 2, so one failed renewal is retried
//!   before the deadline (enforced). Default TTL / 3.
//! * **margin** covers the difference between the local monotonic clock's rate
//!   and the store's (parts per million) and a late watchdog timer: the deadline
//!   is already counted from the *send* time, so network delay needs no margin.
//!   Default TTL / 10.
//! * etcd counts TTLs in whole seconds (rounded up here): the store may hold an
//!   id a little longer than asked, never shorter.
//!
//! # Running etcd with three members (loopback example)
//!
//! ```text
//! etcd --name m1 --data-dir /tmp/m1 \
//!   --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
//!   --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
//!   --initial-cluster m1=http://127.0.0.1:2380,m2=http://127.0.0.1:2382,m3=http://127.0.0.1:2384 \
//!   --initial-cluster-state new --initial-cluster-token nonceforge
//! # m2: client 2381, peer 2382; m3: client 2383, peer 2384 (same --initial-cluster)
//! nonceforge gen counter --lease etcd://127.0.0.1:2379,127.0.0.1:2381,127.0.0.1:2383 -n 10
//! ```
//!
//! Give every endpoint in the URL: the client fails over between them.
//!
//! # Holding a lease costs nothing per nonce
//!
//! The generator checks its deadline where it reads its clock anyway (every
//! sortable nonce, every new millisecond of 64-bit counters, every block of
//! ticks a per-thread handle reserves, every batch); a timer in the lease's
//! thread stops it at the deadline for the paths that read no clock. A paused
//! process that wakes past its deadline is refused at once on every path that
//! reads the clock (sortable nonces, batches, `nonceforge gen`); the paths that
//! do not (the rest of a per-thread handle's block of ticks, the shared 96/128-bit
//! counters) can issue until that timer runs, a moment after waking — at
//! timestamps at or below the floor the store recorded, which no later holder
//! issues at, so even those never collide.

#![deny(missing_docs)]

mod error;
mod keeper;
mod metrics;
#[cfg(feature = "metrics")]
mod metrics_export;
mod options;
mod pod;
mod pool;
mod secrets;
mod spec;
mod store;
mod syntax;
#[cfg(test)]
mod vectors;

pub use error::{LeaseError, Result};
pub use metrics::{
    LEASE_METRICS, LOST_REASONS, LeaseMetrics, NotReady, RenewalFailures, STATE_NAMES, state_name,
};
#[cfg(feature = "metrics")]
pub use metrics_export::describe as describe_metrics;
pub use options::{DEFAULT_PG_SCHEMA, FastStart, LeaseOptions, MillisOptions};
pub use pod::{POD_INDEX_LABEL, PodIndex};
pub use pool::LeasePool;
pub use secrets::{redact_url, url_has_secret};
pub use store::{LostReason, Record, StoreInfo};
pub use syntax::{parse_duration, parse_ids, parse_ids_in};

use keeper::{Cmd, Gate, Shared};
use nonceforge::clock::Clock;
use nonceforge::{MachineId, NonceGenerator, NonceGeneratorBuilder};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a lease stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseState {
    /// Held; the generators issue until the deadline, this far ahead.
    Held {
        /// Time left until the local deadline.
        deadline_in: Duration,
    },
    /// The local deadline passed without a renewal: the generators are stopped;
    /// renewals go on, and resume them if the store still has the id for us.
    Lapsed,
    /// Another holder took the id: the generators are stopped for good.
    Lost,
    /// Released.
    Released,
}

/// A change of a lease's state, pushed by the lease's thread to its
/// subscribers ([`Lease::subscribe`], [`Lease::on_event`]) as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeaseEvent {
    /// A renewal succeeded: the generators issue until the new local
    /// deadline, this far ahead.
    Renewed {
        /// Time left until the new deadline, when the event was sent.
        deadline_in: Duration,
    },
    /// The local deadline passed without a renewal: the generators stopped;
    /// renewals go on.
    Lapsed,
    /// A renewal after lapsing found the id still ours: the generators resumed
    /// (a [`Renewed`](Self::Renewed) follows).
    Resumed,
    /// The grant is gone for good, and why.
    Lost(LostReason),
    /// Released: the generators stopped for good. The last event.
    Released,
}

/// A machine id leased from a store, kept alive by a background thread.
///
/// Dropping it releases the id (as [`release`](Self::release) does, ignoring errors).
pub struct Lease {
    shared: Arc<Shared>,
    control: Option<keeper::Control>,
    /// A pooled lease's pool: its thread and connections live while it does
    /// (dropped after the release, Drop's first step).
    _pool: Option<Arc<pool::PoolCore>>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("backend", &self.shared.backend)
            .field("machine_id", &self.shared.machine_id)
            .field("state", &self.state())
            .finish()
    }
}

impl Lease {
    /// Connects to the store at `url` (`postgres://…`, `redis://…`,
    /// `etcd://host:port[,host:port…]`), takes a free machine id in
    /// `options.ids`, and starts renewing it in the background.
    ///
    /// Fails with [`LeaseError::BadUrl`], [`LeaseError::BadOption`],
    /// [`LeaseError::Unreachable`], [`LeaseError::Timeout`] or
    /// [`LeaseError::AllTaken`]; nothing is held after an error.
    pub fn acquire(url: &str, options: &LeaseOptions) -> Result<Lease> {
        let settled = options.settle()?;
        let backend = spec::parse(url)?;
        let (shared, control) = keeper::start(backend, settled)?;
        Ok(Lease {
            shared,
            control: Some(control),
            _pool: None,
        })
    }

    pub(crate) fn pooled(
        shared: Arc<Shared>,
        control: keeper::Control,
        pool: Arc<pool::PoolCore>,
    ) -> Lease {
        Lease {
            shared,
            control: Some(control),
            _pool: Some(pool),
        }
    }

    /// The leased machine id.
    pub fn machine_id(&self) -> MachineId {
        self.shared.machine_id
    }

    /// The fencing token of this grant: greater than every earlier grant's in
    /// this store. Pass it to systems that can reject a stale holder's writes.
    pub fn token(&self) -> u64 {
        self.shared.token()
    }

    /// The timestamp (Unix ms) generators of this lease start above: the
    /// highest an earlier holder of this id may have issued. Unless the grant
    /// [started fast](Self::started_fast) it lies the TTL and margin ahead of
    /// this host's clock when the acquire was answered (above any holder a
    /// store that went back no longer shows).
    pub fn floor_unix_ms(&self) -> u64 {
        self.shared.floor_unix_ms
    }

    /// Whether the store had a record of the id. Without one (a new namespace,
    /// or a store that lost its data) nothing shows that an earlier holder has
    /// stopped, so generators start the TTL and margin ahead (logged at
    /// warning level).
    pub fn has_history(&self) -> bool {
        self.shared.history
    }

    /// Whether this grant's generators start right above the store's floor
    /// ([`LeaseOptions::fast_start`] verified or declared, and the id has
    /// history), rather than the TTL and margin ahead of this host's clock.
    pub fn started_fast(&self) -> bool {
        self.shared.history && self.shared.fast_start.is_ok()
    }

    /// Why this grant did not start fast (`None` when it did): the option is
    /// off, the check found the store may go back (and why), or the id has no
    /// history.
    pub fn slow_start_reason(&self) -> Option<String> {
        if !self.shared.history {
            Some("the id has no history in the store".into())
        } else {
            self.shared.fast_start.clone().err()
        }
    }

    /// Blocks until this host's clock has passed [`floor_unix_ms`](Self::floor_unix_ms)
    /// (for an id without history, about the TTL and margin; otherwise at
    /// most the clock's lag behind the previous holder's), so that building a
    /// generator then does not wait. For callers that must not block where
    /// they build (an event loop): call it where blocking is fine. Returns
    /// early when the wait would pass `max_clock_wait` and the start's own
    /// wait (building then fails with [`nonceforge::Error::ClockBehind`]).
    pub fn wait_for_start(&self) {
        let limit = Instant::now() + self.shared.settled.max_clock_wait + self.shared.start_wait;
        loop {
            let (left, now) = (self.start_in(), Instant::now());
            if left.is_zero() || now >= limit {
                return;
            }
            std::thread::sleep(left.min(limit - now));
        }
    }

    /// How long until this host's clock has passed
    /// [`floor_unix_ms`](Self::floor_unix_ms) (zero once it has): what
    /// [`wait_for_start`](Self::wait_for_start) waits out, for callers that
    /// wait their own way (answering signals, say).
    pub fn start_in(&self) -> Duration {
        let now_ms = keeper::wall_unix_ms();
        Duration::from_millis((self.shared.floor_unix_ms + 1).saturating_sub(now_ms))
    }

    /// Why the lease was lost, once it is.
    pub fn lost_reason(&self) -> Option<LostReason> {
        self.shared.lost_reason()
    }

    /// The layout of this lease's namespace, which every generator on it has.
    pub fn layout(&self) -> nonceforge::Layout {
        self.shared.settled.layout
    }

    /// The TTL the lease is kept with.
    pub fn ttl(&self) -> Duration {
        self.shared.settled.ttl
    }

    /// How long before the store's expiry the generators stop (the margin).
    pub fn margin(&self) -> Duration {
        self.shared.settled.margin
    }

    /// Who holds it, as the store shows it.
    pub fn holder(&self) -> &str {
        &self.shared.settled.holder
    }

    /// The store's URL, without its password.
    pub fn backend(&self) -> &str {
        &self.shared.backend.shown
    }

    /// How long acquiring took (connecting included).
    pub fn acquired_in(&self) -> Duration {
        self.shared.acquired_in
    }

    /// A builder for a generator on this lease: its machine id, and a start
    /// above the previous holder's last timestamp. Attach what it builds with
    /// [`attach`](Self::attach) (or use [`generator`](Self::generator)).
    pub fn builder(&self) -> NonceGeneratorBuilder {
        NonceGenerator::builder(self.shared.machine_id)
            .layout(self.shared.settled.layout)
            .not_before(self.shared.floor_unix_ms)
            .max_wait(self.shared.settled.max_clock_wait + self.shared.start_wait)
    }

    /// A generator with default settings on this lease, attached.
    pub fn generator(&self) -> Result<NonceGenerator> {
        let generator = self.builder().build()?;
        self.attach(&generator)?;
        Ok(generator)
    }

    /// Holds `generator` to this lease: it issues only until the lease's local
    /// deadline, which each renewal moves, and stops for good if the lease is
    /// lost or released. The generator must have this lease's machine id and
    /// have started above the previous holder's floor (build it from
    /// [`builder`](Self::builder)).
    pub fn attach<C: Clock>(&self, generator: &NonceGenerator<C>) -> Result<()> {
        if generator.machine_id() != self.shared.machine_id {
            return Err(LeaseError::Generator {
                rule: "its machine id is not the leased one: build it with Lease::builder",
            });
        }
        if generator.started_unix_ms() <= self.shared.floor_unix_ms {
            return Err(LeaseError::Generator {
                rule: "it started at or below the previous holder's last timestamp: build it with Lease::builder",
            });
        }
        if generator.layout() != self.shared.settled.layout {
            // The namespace holds members of the lease's layout only: a
            // standard and a wide member's values can meet.
            return Err(LeaseError::Generator {
                rule: "its layout is not the lease's (LeaseOptions::layout, which the namespace records): build it with Lease::builder",
            });
        }
        self.shared
            .attach(Box::new(generator.clone()) as Box<dyn Gate>);
        Ok(())
    }

    /// A channel that receives every [`LeaseEvent`] from now on, in order, as
    /// the lease's thread makes the change: for watchers that would otherwise
    /// poll [`state`](Self::state). It disconnects when the lease is released
    /// or dropped (after [`LeaseEvent::Released`]).
    pub fn subscribe(&self) -> std::sync::mpsc::Receiver<LeaseEvent> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.shared.subscribe(keeper::Subscriber::Channel(tx));
        rx
    }

    /// Runs `f` on the lease's thread for every [`LeaseEvent`] from now on,
    /// right after the change is made to the generators. It must be quick and
    /// must not block (renewals wait for it); it may look at the lease.
    pub fn on_event(&self, f: impl Fn(&LeaseEvent) + Send + Sync + 'static) {
        self.shared
            .subscribe(keeper::Subscriber::Callback(Box::new(f)));
    }

    /// Where the lease stands now.
    pub fn state(&self) -> LeaseState {
        self.shared.state(Instant::now())
    }

    /// Renewals that succeeded, and that failed (a failure is retried).
    pub fn renewals(&self) -> (u64, u64) {
        self.shared.renewals()
    }

    /// How long the latest successful renewals took, send to answer (at most
    /// the last 256), oldest first.
    pub fn renewal_round_trips(&self) -> Vec<Duration> {
        self.shared.renewal_rtts()
    }

    /// The last renewal error, if the last renewal failed.
    pub fn last_error(&self) -> Option<String> {
        self.shared.last_error()
    }

    /// Stops the attached generators, records the last timestamp they issued as
    /// the id's floor, and frees the id in the store. Fails with
    /// [`LeaseError::Lost`] if the grant was gone.
    pub fn release(mut self) -> Result<()> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<()> {
        match self.control.take() {
            Some(control) => control.stop(Cmd::Release),
            None => Ok(()),
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Err(e) = self.release_inner() {
            log::warn!("nonceforge-lease: releasing on drop: {e}");
        }
    }
}

/// Every machine id the store has a record of in `options.ids`, held or not.
///
/// A member whose grant the store lost (restarted empty, flushed, wiped) is not
/// listed, though it may believe it holds its id until its next renewal
/// tells it otherwise (at most a renewal period and a request timeout after
/// the loss); what it issues meanwhile stays below where the next holder of
/// that id starts.
pub fn status(url: &str, options: &LeaseOptions) -> Result<Vec<Record>> {
    status_of_store(url, options).map(|(_, records)| records)
}

/// The namespace's own record (protocol, incarnation) and [`status`]'s records.
pub fn status_of_store(url: &str, options: &LeaseOptions) -> Result<(StoreInfo, Vec<Record>)> {
    options::check_ids(&options.ids, options.layout)?;
    options::check_namespace(&options.namespace)?;
    options::check_pg_schema(&options.pg_schema)?;
    let backend = spec::parse(url)?;
    keeper::one_shot(&backend, options, |store, backend| {
        let (ns, ids) = (options.namespace.clone(), options.ids.clone());
        Box::pin(async move { store.status(backend, &ns, ids).await })
    })
}

/// Frees `machine_id` whoever holds it (or only if `holder` does). Its floor
/// stays, so a later holder still starts above its last timestamps. For
/// operators cleaning up after a process known to be gone: a live holder keeps
/// issuing until its next renewal fails. Returns whether it was held.
pub fn evict(
    url: &str,
    options: &LeaseOptions,
    machine_id: u16,
    holder: Option<&str>,
) -> Result<bool> {
    options::check_namespace(&options.namespace)?;
    options::check_pg_schema(&options.pg_schema)?;
    MachineId::new_in(options.layout, machine_id as u64)?;
    let backend = spec::parse(url)?;
    let holder = holder.map(str::to_owned);
    keeper::one_shot(&backend, options, |store, backend| {
        let ns = options.namespace.clone();
        Box::pin(async move {
            store
                .evict(backend, &ns, machine_id, holder.as_deref())
                .await
        })
    })
}

/// The README's examples, compiled (and run where they can) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// docs/operations.md's Rust example (it uses the `metrics` feature), compiled
/// as a doctest.
#[cfg(all(doctest, feature = "metrics"))]
#[doc = include_str!("../../../docs/operations.md")]
pub struct OperationsDoctests;
