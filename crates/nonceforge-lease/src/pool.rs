//! Many leases of one namespace over a few shared store connections.

use crate::Lease;
use crate::error::{LeaseError, Result};
use crate::keeper::{self, local_error};
use crate::options::{LeaseOptions, Settled};
use crate::spec::{self, Backend};
use crate::store::Store;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Semaphore, oneshot};

/// Leases of one namespace that share a few store connections and one
/// background thread.
///
/// A process that takes thousands of machine ids (one per worker, tenant or
/// shard) would otherwise open a connection and a thread per lease — more
/// connections than a PostgreSQL server allows. A pooled [`Lease`] is a
/// lease like any other: its own deadline, renewals on its own schedule,
/// its generators stopped the moment it may have lapsed, released when
/// dropped. Its requests wait for a free connection of the pool, and that
/// wait counts against the request timeout, so a pool too small for its
/// leases shows as renewal failures ([`Lease::renewals`]), never as a lease
/// held past its deadline. A connection the store cut is opened again for
/// the next request.
///
/// ```no_run
/// use nonceforge_lease::{LeaseOptions, LeasePool};
/// let options = LeaseOptions::for_layout(nonceforge::Layout::Wide);
/// let pool = LeasePool::connect("postgres://app@db.internal/app", &options, 8)?;
/// let leases = (0..1000).map(|_| pool.acquire()).collect::<Result<Vec<_>, _>>()?;
/// let generator = leases[0].generator()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Dropping the pool keeps its leases renewing: each holds the pool's
/// thread and connections until it is released.
pub struct LeasePool {
    core: Arc<PoolCore>,
}

impl std::fmt::Debug for LeasePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeasePool")
            .field("backend", &self.core.backend)
            .field("conns", &self.core.slots.conns)
            .finish()
    }
}

/// What a pool's leases share: the thread with its runtime, the connections.
pub(crate) struct PoolCore {
    backend: Backend,
    settled: Settled,
    slots: Arc<Slots>,
    handle: tokio::runtime::Handle,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Drop for PoolCore {
    fn drop(&mut self) {
        // The last lease and the pool are gone: the thread ends its runtime.
        if let Some(stop) = self.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = thread.join();
        }
    }
}

/// The rule a pool's `conns` breaks (its numbers are
/// [`LeasePool::MAX_CONNS`] and [`LeasePool::DEFAULT_CONNS`]; a test ties them).
const CONNS_RULE: &str = "the pool's store connections: 1..=256, or 0 for 8";

impl LeasePool {
    /// Store connections a pool keeps when [`connect`](Self::connect) is given 0.
    pub const DEFAULT_CONNS: usize = 8;
    /// The most store connections a pool keeps.
    pub const MAX_CONNS: usize = 256;

    /// Connects to the store at `url` (as [`Lease::acquire`] does: the URL, the
    /// store and the namespace's tables are checked now) and keeps up to
    /// `conns` connections (0: [`DEFAULT_CONNS`](Self::DEFAULT_CONNS)), opened
    /// as its leases need them. Every lease of the pool has `options`.
    ///
    /// Fails with [`LeaseError::BadOption`] (`conns` above
    /// [`MAX_CONNS`](Self::MAX_CONNS), or an option), [`LeaseError::BadUrl`],
    /// [`LeaseError::Unreachable`] or [`LeaseError::Timeout`].
    pub fn connect(url: &str, options: &LeaseOptions, conns: usize) -> Result<LeasePool> {
        let conns = match conns {
            0 => Self::DEFAULT_CONNS,
            n if n <= Self::MAX_CONNS => n,
            n => {
                return Err(LeaseError::BadOption {
                    option: "conns",
                    value: n.to_string(),
                    rule: CONNS_RULE,
                });
            }
        };
        let settled = options.settle()?;
        let backend = spec::parse(url)?;
        let rt = keeper::runtime()?;
        let handle = rt.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("nonceforge-lease-pool".into())
            .spawn(move || {
                let _ = rt.block_on(stopped);
            })
            .map_err(|e| local_error(format!("cannot start the lease pool's thread: {e}")))?;
        let slots = Arc::new(Slots {
            conns,
            permits: Semaphore::new(conns),
            idle: Mutex::new(Vec::new()),
        });
        let core = Arc::new(PoolCore {
            backend,
            settled,
            slots,
            handle,
            stop: Mutex::new(Some(stop)),
            thread: Mutex::new(Some(thread)),
        });
        // The first connection now: a bad store fails here, not at the first
        // acquire.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let c = Arc::clone(&core);
        core.handle.spawn(async move {
            let s = &c.settled;
            let first = tokio::time::timeout(
                s.connect_timeout,
                c.slots
                    .run(&c.backend, s, s.connect_timeout, async |_: &mut Store| {
                        Ok(())
                    }),
            )
            .await
            .unwrap_or_else(|_| {
                Err(LeaseError::Timeout {
                    backend: c.backend.name(),
                    target: c.backend.shown.clone(),
                    after: s.connect_timeout,
                })
            });
            drop(c);
            let _ = tx.send(first);
        });
        rx.recv()
            .unwrap_or_else(|_| Err(local_error("the lease pool's thread stopped".into())))?;
        Ok(LeasePool { core })
    }

    /// Takes a free machine id of the range and starts renewing it, as
    /// [`Lease::acquire`] does, on the pool's connections and thread.
    pub fn acquire(&self) -> Result<Lease> {
        let c = &self.core;
        let (shared, control) = keeper::start_pooled(
            &c.handle,
            Arc::clone(&c.slots),
            c.backend.clone(),
            c.settled.clone(),
        )?;
        Ok(Lease::pooled(shared, control, Arc::clone(c)))
    }

    /// The most store connections the pool keeps.
    pub fn conns(&self) -> usize {
        self.core.slots.conns
    }
}

/// A pool's connections: idle ones, and a permit for each that may be open.
pub(crate) struct Slots {
    conns: usize,
    permits: Semaphore,
    idle: Mutex<Vec<Store>>,
}

impl Slots {
    /// Runs `f` on a free connection (opened within `budget` when none is
    /// idle). A connection goes back to the idle ones unless the request
    /// lost it (unreachable, timed out) or was dropped half-way (the outer
    /// timeout): then it is closed, and the next request opens another.
    pub(crate) async fn run<T>(
        &self,
        backend: &Backend,
        s: &Settled,
        budget: Duration,
        f: impl AsyncFnOnce(&mut Store) -> Result<T>,
    ) -> Result<T> {
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let idle = self.idle.lock().expect("never poisoned").pop();
        let mut store = match idle {
            Some(store) => store,
            None => {
                Store::connect(
                    backend,
                    &s.namespace,
                    &s.pg_schema,
                    budget,
                    s.fast_start,
                    s.request_timeout,
                )
                .await?
            }
        };
        let result = f(&mut store).await;
        if !matches!(
            result,
            Err(LeaseError::Unreachable { .. } | LeaseError::Timeout { .. })
        ) {
            self.idle.lock().expect("never poisoned").push(store);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conns_are_checked_before_anything_starts() {
        assert_eq!(
            CONNS_RULE,
            format!(
                "the pool's store connections: 1..={}, or 0 for {}",
                LeasePool::MAX_CONNS,
                LeasePool::DEFAULT_CONNS
            )
        );
        let e = LeasePool::connect(
            "redis://127.0.0.1:1",
            &LeaseOptions::default(),
            LeasePool::MAX_CONNS + 1,
        )
        .unwrap_err();
        assert!(matches!(
            e,
            LeaseError::BadOption {
                option: "conns",
                ..
            }
        ));
        assert!(e.to_string().contains("257"), "{e}");
        let e = LeasePool::connect("nope://x", &LeaseOptions::default(), 2).unwrap_err();
        assert!(matches!(e, LeaseError::BadUrl { .. }), "{e}");
    }
}
