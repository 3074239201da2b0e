//! Starting a lease: its thread (or a task on its pool's runtime), the
//! connection its requests go on, and the acquire within the connect timeout.

use super::{Inner, Shared, keep, ms, start_floor, wall_unix_ms};
use crate::error::{LeaseError, Result};
use crate::options::{FastStart, Settled};
use crate::pool::Slots;
use crate::spec::Backend;
use crate::store::{Ask, Store};
use nonceforge::MachineId;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// The thread and how to talk to it.
pub(crate) struct Control {
    tx: mpsc::UnboundedSender<Cmd>,
    done: std::sync::mpsc::Receiver<Result<()>>,
    /// The lease's own thread; none for a pooled lease (a task on its pool's).
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The connection a lease's requests go on.
pub(crate) enum Conn {
    /// Its own (boxed: a store is large, a pool's handle small): none after
    /// a request lost it.
    Own(Option<Box<Store>>),
    /// One of its pool's, for each request.
    Pooled(Arc<Slots>),
}

impl Conn {
    /// A request failed with `e`: an own connection it may have left unusable
    /// is dropped (a pool's are dropped by the pool).
    pub(super) fn failed(&mut self, e: &LeaseError) {
        if let Conn::Own(store) = self
            && matches!(
                e,
                LeaseError::Unreachable { .. } | LeaseError::Timeout { .. }
            )
        {
            *store = None;
        }
    }
}

pub(crate) enum Cmd {
    Release,
}

impl Control {
    pub(crate) fn stop(self, cmd: Cmd) -> Result<()> {
        let _ = self.tx.send(cmd);
        let result = self.done.recv().unwrap_or(Ok(()));
        if let Some(thread) = self.thread {
            let _ = thread.join();
        }
        result
    }
}

/// An error of this process, not of the store (a thread or runtime that
/// would not start).
pub(crate) fn local_error(detail: String) -> LeaseError {
    LeaseError::Store {
        backend: "local",
        target: "this process".into(),
        detail,
    }
}

/// A current-thread runtime for a lease's (or a pool's) thread.
pub(crate) fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| local_error(format!("cannot start the I/O runtime: {e}")))
}

pub(super) fn timed_out(backend: &Backend, after: Duration) -> LeaseError {
    LeaseError::Timeout {
        backend: backend.name(),
        target: backend.shown.clone(),
        after,
    }
}

/// Starts the lease's thread, which connects, acquires, and then renews. All of
/// it runs on that thread, in its own runtime: the caller may be inside a
/// tokio runtime of its own (where starting another would panic).
pub(crate) fn start(backend: Backend, settled: Settled) -> Result<(Arc<Shared>, Control)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (done_tx, done) = std::sync::mpsc::channel();
    let (ready_tx, ready) = std::sync::mpsc::sync_channel(1);
    let thread = std::thread::Builder::new()
        .name("nonceforge-lease".into())
        .spawn(move || {
            let rt = match runtime() {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            rt.block_on(run(backend, settled, None, ready_tx, rx, done_tx));
        })
        .map_err(|e| local_error(format!("cannot start the lease thread: {e}")))?;
    started(ready, tx, done, Some(thread), "the lease thread")
}

/// Waits for a just-started lease's outcome: its control when it holds an id;
/// otherwise its error, once its thread (if it has one) has ended.
fn started(
    ready: std::sync::mpsc::Receiver<Result<Arc<Shared>>>,
    tx: mpsc::UnboundedSender<Cmd>,
    done: std::sync::mpsc::Receiver<Result<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    runner: &str,
) -> Result<(Arc<Shared>, Control)> {
    let outcome = ready
        .recv()
        .unwrap_or_else(|_| Err(local_error(format!("{runner} stopped before acquiring"))));
    match outcome {
        Ok(shared) => Ok((shared, Control { tx, done, thread })),
        Err(e) => {
            if let Some(thread) = thread {
                let _ = thread.join();
            }
            Err(e)
        }
    }
}

type Ready = std::sync::mpsc::SyncSender<Result<Arc<Shared>>>;

/// A lease's whole life on its runtime: acquires (the outcome to `ready`),
/// renews until told to release, releases (the outcome to `done`).
async fn run(
    backend: Backend,
    settled: Settled,
    slots: Option<Arc<Slots>>,
    ready: Ready,
    rx: mpsc::UnboundedReceiver<Cmd>,
    done: std::sync::mpsc::Sender<Result<()>>,
) {
    match acquire(backend, settled, slots).await {
        Err(e) => {
            let _ = ready.send(Err(e));
        }
        Ok((shared, conn)) => {
            let _ = ready.send(Ok(Arc::clone(&shared)));
            let _ = done.send(keep(shared, conn, rx).await);
        }
    }
}

/// Starts a lease as a task on a pool's runtime (`handle`), its requests on
/// the pool's connections, and waits until it holds an id.
pub(crate) fn start_pooled(
    handle: &tokio::runtime::Handle,
    slots: Arc<Slots>,
    backend: Backend,
    settled: Settled,
) -> Result<(Arc<Shared>, Control)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (done_tx, done) = std::sync::mpsc::channel();
    let (ready_tx, ready) = std::sync::mpsc::sync_channel(1);
    handle.spawn(run(backend, settled, Some(slots), ready_tx, rx, done_tx));
    started(ready, tx, done, None, "the lease pool")
}

/// Connects (or takes one of the pool's connections) and takes an id,
/// within the connect timeout.
async fn acquire(
    backend: Backend,
    settled: Settled,
    slots: Option<Arc<Slots>>,
) -> Result<(Arc<Shared>, Conn)> {
    let t0 = Instant::now();
    let hold = settled.ttl - settled.margin;
    let ask = Ask {
        namespace: &settled.namespace,
        holder: &settled.holder,
        ttl: settled.ttl,
        layout: settled.layout,
    };
    // An unreachable store is tried again until the connect timeout: a
    // failover (a sentinel naming no primary for a moment, a standby being
    // promoted) is over in seconds. Each try counts its own send and cap.
    let give_up = t0 + settled.connect_timeout;
    let (conn, grant, durable, send, cap) = loop {
        let send = Instant::now();
        let cap = wall_unix_ms() + ms(hold);
        let left = give_up.saturating_duration_since(send);
        let take = async |store: &mut Store| {
            let grant = store
                .acquire(&backend, &ask, settled.ids.clone(), cap)
                .await?;
            Ok::<_, LeaseError>((grant, store.durable()))
        };
        let tried = tokio::time::timeout(left, async {
            match &slots {
                Some(slots) => {
                    let (grant, durable) = slots.run(&backend, &settled, left, take).await?;
                    Ok((Conn::Pooled(Arc::clone(slots)), grant, durable))
                }
                None => {
                    let mut store = Store::connect(
                        &backend,
                        &settled.namespace,
                        &settled.pg_schema,
                        left,
                        settled.fast_start,
                        settled.request_timeout,
                    )
                    .await?;
                    let (grant, durable) = take(&mut store).await?;
                    Ok::<_, LeaseError>((Conn::Own(Some(Box::new(store))), grant, durable))
                }
            }
        })
        .await;
        match tried {
            Ok(Ok((conn, grant, durable))) => break (conn, grant, durable, send, cap),
            Ok(Err(e @ LeaseError::Unreachable { .. }))
                if Instant::now() + Duration::from_millis(100) < give_up =>
            {
                log::debug!("nonceforge-lease: acquiring: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(timed_out(&backend, settled.connect_timeout)),
        }
    };
    let acquired_in = t0.elapsed();
    let machine_id = MachineId::new_in(settled.layout, grant.machine_id as u64)?;
    let fast = match settled.fast_start {
        FastStart::Off => Err("fast_start is off".to_owned()),
        FastStart::Declared => Ok(()),
        FastStart::Verify => durable,
    };
    let (floor, start_wait) = start_floor(
        &grant,
        wall_unix_ms(),
        settled.ttl + settled.margin,
        fast.is_ok(),
    );
    if !grant.history {
        log::warn!(
            "nonceforge-lease: machine id {} from {} has no history in the store (never leased in this namespace, or the store lost its data): its generators start above {} ms, the TTL and margin ahead of this clock, above anything an earlier holder may still issue (token {})",
            grant.machine_id,
            backend.shown,
            floor,
            grant.token
        );
    } else if let Err(why) = &fast {
        log::info!(
            "nonceforge-lease: machine id {} from {} in {:?} (token {}): its generators start above {} ms, the TTL and margin ahead of this clock, above any holder a store that went back may no longer show ({why})",
            grant.machine_id,
            backend.shown,
            acquired_in,
            grant.token,
            floor
        );
    } else {
        log::info!(
            "nonceforge-lease: machine id {} from {} in {:?} (token {}, floor {}, fast start: {})",
            grant.machine_id,
            backend.shown,
            acquired_in,
            grant.token,
            floor,
            settled.fast_start
        );
    }
    let shared = Arc::new(Shared {
        machine_id,
        fast_start: fast,
        floor_unix_ms: floor,
        start_wait,
        history: grant.history,
        acquired_in,
        inner: Mutex::new(Inner {
            grant,
            gens: Vec::new(),
            deadline: send + hold,
            cap_unix_ms: cap,
            lapsed: false,
            lost: None,
            released: false,
            ok: 0,
            failed: 0,
            failed_by: [0; 3],
            lapses: 0,
            rtt_sum: Duration::ZERO,
            rtt_max: Duration::ZERO,
            last_error: None,
            rtts: std::collections::VecDeque::new(),
        }),
        subscribers: Mutex::new(Vec::new()),
        backend,
        settled,
    });
    Ok((shared, conn))
}
