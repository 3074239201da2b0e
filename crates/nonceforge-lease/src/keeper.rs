//! The background side of a lease: one thread with a current-thread tokio
//! runtime renews the lease (a pooled lease: a task on its pool's runtime),
//! and a watchdog task stops the generators at the local deadline if no
//! renewal has moved it.

use crate::error::{LeaseError, Result};
use crate::options::{FastStart, LeaseOptions, Settled};
use crate::spec::Backend;
use crate::store::{Ask, Grant, LostReason, Renewal, Store};
use crate::{LeaseEvent, LeaseState};
use nonceforge::clock::Clock;
use nonceforge::{MachineId, NonceGenerator};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;

mod start;
use start::timed_out;
pub(crate) use start::{Cmd, Conn, Control, local_error, runtime, start, start_pooled};

/// What the lease needs of a generator (any clock).
pub(crate) trait Gate: Send + Sync {
    fn clock_unix_ms(&self) -> u64;
    fn set_valid_until(&self, until: Option<u64>);
}

impl<C: Clock> Gate for NonceGenerator<C> {
    fn clock_unix_ms(&self) -> u64 {
        self.issued_up_to_unix_ms()
    }
    fn set_valid_until(&self, until: Option<u64>) {
        NonceGenerator::set_valid_until(self, until)
    }
}

/// Stopped for good: before every timestamp.
const STOP: Option<u64> = Some(0);

pub(crate) struct Shared {
    pub(crate) backend: Backend,
    pub(crate) settled: Settled,
    pub(crate) machine_id: MachineId,
    /// Where generators start above: the store's floor, or, for an id without
    /// history, the acquirer's clock plus the TTL and margin.
    pub(crate) floor_unix_ms: u64,
    /// How much further than `max_clock_wait` a generator may wait at its start
    /// (an id without history: the TTL and margin).
    pub(crate) start_wait: Duration,
    /// Whether the store had a record of the id.
    pub(crate) history: bool,
    /// Whether the grant started right above the store's floor, or why not.
    pub(crate) fast_start: std::result::Result<(), String>,
    pub(crate) acquired_in: Duration,
    inner: Mutex<Inner>,
    /// Who is told of each change (a lock of its own: told after `inner` is
    /// let go, so a subscriber may look at the lease).
    subscribers: Mutex<Vec<Subscriber>>,
}

/// A party told of every change of a lease's state.
pub(crate) enum Subscriber {
    Channel(std::sync::mpsc::Sender<LeaseEvent>),
    Callback(Box<dyn Fn(&LeaseEvent) + Send + Sync>),
}

struct Inner {
    grant: Grant,
    gens: Vec<Box<dyn Gate>>,
    /// The local deadline (monotonic).
    deadline: Instant,
    /// The floor the last successful request wrote: no generator issues past it.
    cap_unix_ms: u64,
    lapsed: bool,
    lost: Option<LostReason>,
    released: bool,
    ok: u64,
    failed: u64,
    /// Failed renewals by kind (`FAILURE_KINDS`).
    failed_by: [u64; 3],
    /// Times the deadline passed without a renewal.
    lapses: u64,
    /// Every successful renewal's round trip added up, and the longest.
    rtt_sum: Duration,
    rtt_max: Duration,
    last_error: Option<String>,
    /// Round trips of the latest successful renewals (at most RTT_KEPT).
    rtts: std::collections::VecDeque<Duration>,
}

/// How many renewal round trips are kept for [`Shared::renewal_rtts`].
const RTT_KEPT: usize = 256;

/// The kinds a failed renewal is counted under: the store did not answer
/// (`unreachable`), did not answer in time (`timeout`), or answered with an
/// error (`store`).
pub(crate) const FAILURE_KINDS: [&str; 3] = ["unreachable", "timeout", "store"];

fn failure_kind(e: &LeaseError) -> usize {
    match e {
        LeaseError::Unreachable { .. } => 0,
        LeaseError::Timeout { .. } => 1,
        _ => 2,
    }
}

pub(crate) fn wall_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere cannot leave Inner half-updated in a way that
        // matters more than stopping would: keep going with its contents.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn ask(&self) -> Ask<'_> {
        Ask {
            namespace: &self.settled.namespace,
            holder: &self.settled.holder,
            ttl: self.settled.ttl,
            layout: self.settled.layout,
        }
    }

    /// How long the generators may issue after a request sent now succeeds.
    fn hold(&self) -> Duration {
        self.settled.ttl - self.settled.margin
    }

    pub(crate) fn token(&self) -> u64 {
        self.lock().grant.token
    }

    pub(crate) fn attach(&self, gate: Box<dyn Gate>) {
        let mut inner = self.lock();
        let now = Instant::now();
        let until =
            if inner.lost.is_some() || inner.released || inner.lapsed || now >= inner.deadline {
                STOP
            } else {
                let left = ms(inner.deadline - now);
                Some((gate.clock_unix_ms() + left).min(inner.cap_unix_ms))
            };
        gate.set_valid_until(until);
        inner.gens.push(gate);
    }

    pub(crate) fn state(&self, now: Instant) -> LeaseState {
        let inner = self.lock();
        if inner.released {
            LeaseState::Released
        } else if inner.lost.is_some() {
            LeaseState::Lost
        } else if inner.lapsed || now >= inner.deadline {
            LeaseState::Lapsed
        } else {
            LeaseState::Held {
                deadline_in: inner.deadline - now,
            }
        }
    }

    pub(crate) fn renewals(&self) -> (u64, u64) {
        let inner = self.lock();
        (inner.ok, inner.failed)
    }

    pub(crate) fn last_error(&self) -> Option<String> {
        self.lock().last_error.clone()
    }

    pub(crate) fn lost_reason(&self) -> Option<LostReason> {
        self.lock().lost
    }

    /// The counts behind [`crate::LeaseMetrics`].
    pub(crate) fn counts(&self) -> crate::metrics::KeeperCounts {
        let inner = self.lock();
        crate::metrics::KeeperCounts {
            token: inner.grant.token,
            renewals: inner.ok,
            renewal_failures: inner.failed_by,
            lapses: inner.lapses,
            rtt_sum: inner.rtt_sum,
            rtt_max: inner.rtt_max,
            rtt_last: inner.rtts.back().copied(),
            lost: inner.lost,
        }
    }

    pub(crate) fn renewal_rtts(&self) -> Vec<Duration> {
        self.lock().rtts.iter().copied().collect()
    }

    fn stop_all(inner: &Inner) {
        for g in &inner.gens {
            g.set_valid_until(STOP);
        }
    }

    /// Past the deadline without a renewal.
    fn lapse(&self) {
        let mut inner = self.lock();
        if !inner.lapsed {
            Self::stop_all(&inner);
            inner.lapsed = true;
            inner.lapses += 1;
            log::warn!(
                "nonceforge-lease: machine id {} lapsed: no renewal reached the {} store before the deadline; generators stopped",
                self.machine_id.get(),
                self.backend.name()
            );
            drop(inner);
            self.emit(LeaseEvent::Lapsed);
        }
    }

    /// Runs one request on the lease's connection: its own (made again when
    /// the last request lost it) or one of its pool's.
    async fn request<T>(
        &self,
        conn: &mut Conn,
        f: impl AsyncFnOnce(&mut Store) -> Result<T>,
    ) -> Result<T> {
        let s = &self.settled;
        match conn {
            Conn::Pooled(slots) => slots.run(&self.backend, s, s.request_timeout, f).await,
            Conn::Own(store) => {
                if store.is_none() {
                    *store = Some(Box::new(
                        Store::connect(
                            &self.backend,
                            &s.namespace,
                            &s.pg_schema,
                            s.request_timeout,
                            s.fast_start,
                            s.request_timeout,
                        )
                        .await?,
                    ));
                }
                f(store.as_mut().expect("connected above")).await
            }
        }
    }

    pub(crate) fn subscribe(&self, s: Subscriber) {
        self.subscribers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(s);
    }

    /// Tells every subscriber (on the lease's thread; never under `inner`'s
    /// lock). A channel whose receiver is gone is dropped.
    fn emit(&self, event: LeaseEvent) {
        let mut subs = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        subs.retain(|s| match s {
            Subscriber::Channel(tx) => tx.send(event.clone()).is_ok(),
            Subscriber::Callback(f) => {
                f(&event);
                true
            }
        });
    }
}

/// Renews until told to release; returns the release's result.
async fn keep(
    shared: Arc<Shared>,
    mut conn: Conn,
    mut rx: mpsc::UnboundedReceiver<Cmd>,
) -> Result<()> {
    let s = &shared.settled;
    let watchdog = tokio::spawn(watchdog(Arc::clone(&shared)));
    let retry = (s.renew_every / 4).max(Duration::from_millis(10));
    let far = Duration::from_secs(86_400 * 365);
    let mut next = Instant::now() + s.renew_every;
    loop {
        tokio::select! {
            biased;
            _ = rx.recv() => break,
            _ = tokio::time::sleep_until(next.into()) => {}
        }
        let send = Instant::now();
        // Read every generator's clock at the send: each may issue up to its
        // reading plus the hold once this renewal succeeds, and never above
        // this host's wall clock plus the hold (the cap, written as the floor).
        // Bounding the cap by the wall clock, not by the generators' readings,
        // keeps every holder within the hold of its host's clock: what lets a
        // holder that finds no history start safely above its own clock
        // (start_floor) when the store lost the floor.
        let (mut grant, readings, cap) = {
            let inner = shared.lock();
            let readings: Vec<u64> = inner.gens.iter().map(|g| g.clock_unix_ms()).collect();
            (
                inner.grant.clone(),
                readings,
                wall_unix_ms() + ms(shared.hold()),
            )
        };
        let ask = shared.ask();
        let answer = tokio::time::timeout(
            s.request_timeout,
            shared.request(&mut conn, async |store: &mut Store| {
                store.renew(&shared.backend, &ask, &mut grant, cap).await
            }),
        )
        .await
        .unwrap_or_else(|_| Err(timed_out(&shared.backend, s.request_timeout)));
        let mut inner = shared.lock();
        match answer {
            Ok(Renewal::Held) => {
                let hold = ms(shared.hold());
                for (g, at) in inner.gens.iter().zip(&readings) {
                    g.set_valid_until(Some((at + hold).min(cap)));
                }
                // Attached while the request was out: from their clock now,
                // within the floor just written.
                let left = ms((send + shared.hold()).saturating_duration_since(Instant::now()));
                for g in inner.gens.iter().skip(readings.len()) {
                    g.set_valid_until(Some((g.clock_unix_ms() + left).min(cap)));
                }
                let resumed = inner.lapsed;
                if resumed {
                    log::warn!(
                        "nonceforge-lease: machine id {} renewed after lapsing (nobody took it): generators resumed",
                        shared.machine_id.get()
                    );
                }
                inner.grant = grant;
                inner.deadline = send + shared.hold();
                inner.cap_unix_ms = cap;
                inner.lapsed = false;
                inner.ok += 1;
                inner.last_error = None;
                if inner.rtts.len() == RTT_KEPT {
                    inner.rtts.pop_front();
                }
                let rtt = send.elapsed();
                inner.rtts.push_back(rtt);
                inner.rtt_sum += rtt;
                inner.rtt_max = inner.rtt_max.max(rtt);
                next = send + s.renew_every;
                let deadline_in = inner.deadline.saturating_duration_since(Instant::now());
                drop(inner);
                if resumed {
                    shared.emit(LeaseEvent::Resumed);
                }
                shared.emit(LeaseEvent::Renewed { deadline_in });
            }
            Ok(Renewal::Lost(reason)) => {
                Shared::stop_all(&inner);
                inner.lost = Some(reason);
                log::error!(
                    "nonceforge-lease: machine id {} lost: {reason}; generators stopped for good",
                    shared.machine_id.get()
                );
                next = Instant::now() + far;
                drop(inner);
                shared.emit(LeaseEvent::Lost(reason));
            }
            Err(e) => {
                conn.failed(&e);
                log::warn!("nonceforge-lease: renewal failed (retrying): {e}");
                inner.failed += 1;
                inner.failed_by[failure_kind(&e)] += 1;
                inner.last_error = Some(e.to_string());
                next = Instant::now() + retry;
            }
        }
    }
    watchdog.abort();
    release(&shared, conn).await
}

/// Stops the generators at the deadline when no renewal has moved it.
async fn watchdog(shared: Arc<Shared>) {
    loop {
        let (deadline, lapsed, over) = {
            let inner = shared.lock();
            (
                inner.deadline,
                inner.lapsed,
                inner.lost.is_some() || inner.released,
            )
        };
        if over {
            return;
        }
        if lapsed {
            tokio::time::sleep(Duration::from_millis(20)).await;
        } else if Instant::now() >= deadline {
            shared.lapse();
        } else {
            tokio::time::sleep_until(deadline.into()).await;
        }
    }
}

async fn release(shared: &Shared, mut conn: Conn) -> Result<()> {
    let (grant, floor, lost) = {
        let mut inner = shared.lock();
        Shared::stop_all(&inner);
        inner.released = true;
        // Every timestamp issued is at or below each generator's clock now (they
        // are stopped) and at or below the last floor written. With no
        // generator attached (`nonceforge lease acquire` handing the id to
        // something else), the wall clock stands in for theirs.
        let floor = inner
            .gens
            .iter()
            .map(|g| g.clock_unix_ms())
            .fold(wall_unix_ms(), u64::max)
            .min(inner.cap_unix_ms)
            .max(shared.floor_unix_ms);
        (inner.grant.clone(), floor, inner.lost)
    };
    shared.emit(LeaseEvent::Released);
    let id = shared.machine_id.get();
    if let Some(reason) = lost {
        return Err(LeaseError::Lost {
            machine_id: id,
            reason,
        });
    }
    let s = &shared.settled;
    let ask = shared.ask();
    let done = tokio::time::timeout(
        s.request_timeout,
        shared.request(&mut conn, async |store: &mut Store| {
            store.release(&shared.backend, &ask, &grant, floor).await
        }),
    )
    .await
    .unwrap_or_else(|_| Err(timed_out(&shared.backend, s.request_timeout)))?;
    if done {
        log::info!("nonceforge-lease: machine id {id} released (floor {floor})");
        Ok(())
    } else {
        Err(LeaseError::Lost {
            machine_id: id,
            reason: LostReason::Taken,
        })
    }
}

/// Where the generators of a new grant start above, and how much longer than
/// `max_clock_wait` they may wait to get there (docs/lease-protocol.md, "A
/// store that goes back").
///
/// The store's floor covers every earlier holder the store still shows. One
/// it no longer shows — its data lost (`grant.history` false), or an older
/// copy of it put back (a replica that was behind promoted, a backup
/// restored), which may show the id expired or released under a holder that
/// is still issuing — made its last successful request before the store
/// answered this acquire, so before `wall_after` (this host's clock when the
/// answer came) in real time, and issues nothing above its host's clock at
/// that request plus the hold (the cap). Starting above `wall_after + TTL +
/// margin` (= + hold + 2 × margin) stays above all of it while the two hosts'
/// clocks differ by less than twice the margin. Only where the store cannot
/// go back (`fast`: verified or declared) is its floor enough.
pub(crate) fn start_floor(
    grant: &Grant,
    wall_after: u64,
    pad: Duration,
    fast: bool,
) -> (u64, Duration) {
    if grant.history && fast {
        (grant.floor_unix_ms, Duration::ZERO)
    } else {
        (grant.floor_unix_ms.max(wall_after + ms(pad)), pad)
    }
}

type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + 'a>>;

/// Connects and runs one request (status, evict), all within the connect
/// timeout, on a thread of its own (the caller may be inside a tokio runtime).
pub(crate) fn one_shot<T: Send>(
    backend: &Backend,
    options: &LeaseOptions,
    f: impl for<'a> FnOnce(&'a mut Store, &'a Backend) -> StoreFuture<'a, T> + Send,
) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            runtime()?.block_on(async {
                tokio::time::timeout(options.connect_timeout, async {
                    let mut store = Store::connect(
                        backend,
                        &options.namespace,
                        &options.pg_schema,
                        options.connect_timeout,
                        FastStart::Off,
                        options.connect_timeout,
                    )
                    .await?;
                    f(&mut store, backend).await
                })
                .await
                .map_err(|_| timed_out(backend, options.connect_timeout))?
            })
        })
        .join()
        .unwrap_or_else(|_| {
            Err(LeaseError::Store {
                backend: backend.name(),
                target: backend.shown.clone(),
                detail: "the request's thread panicked".into(),
            })
        })
    })
}
