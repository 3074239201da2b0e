//! Machine ids leased through the Rust lease crate (the same stores, records
//! and rules as the CLI's `--lease`, the Elixir package and the Go module).
//!
//! Nothing of a lease runs on the event loop: acquiring and releasing run on
//! libuv's pool (`AsyncTask`), renewals on the lease crate's keeper thread,
//! and the core's deadline stops the attached generators the moment the lease
//! may have lapsed. A watcher thread reports state changes to JavaScript
//! through a weak threadsafe function (it never keeps the process alive):
//! node/lib/lease.js turns them into the generator's `'lapsed'`, `'resumed'` and
//! `'lost'` events.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use nonceforge_lease::{Lease, LeaseError, LeaseOptions, LeaseState, MillisOptions};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A lease error as a napi error whose reason starts with its Node error
/// code; node/lib/errors.js makes the JavaScript error from it.
pub(crate) fn lease_err(e: LeaseError) -> Error {
    let code = match &e {
        LeaseError::BadUrl { .. } | LeaseError::BadOption { .. } => "ERR_INVALID_ARG_VALUE",
        LeaseError::Unreachable { .. } => "ERR_NONCEFORGE_LEASE_UNREACHABLE",
        LeaseError::Timeout { .. } => "ERR_NONCEFORGE_LEASE_TIMEOUT",
        LeaseError::AllTaken { .. } => "ERR_NONCEFORGE_LEASE_ALL_TAKEN",
        LeaseError::Lost { .. } => "ERR_NONCEFORGE_LEASE_LOST",
        LeaseError::Refused { .. } => "ERR_NONCEFORGE_LEASE_REFUSED",
        LeaseError::Nonce(nonceforge::Error::ClockBehind { .. }) => "ERR_NONCEFORGE_CLOCK_BEHIND",
        _ => "ERR_NONCEFORGE_LEASE",
    };
    Error::new(Status::GenericFailure, format!("{code}: {e}"))
}

/// The lease options, checked by node/lib/lease.js (milliseconds); absent:
/// the lease crate's default.
#[napi(object)]
pub struct LeaseOpts {
    /// TTL in ms.
    pub ttl_ms: Option<u32>,
    /// Renewal period in ms.
    pub renew_every_ms: Option<u32>,
    /// Safety margin in ms.
    pub margin_ms: Option<u32>,
    /// Connect/acquire timeout in ms.
    pub connect_timeout_ms: Option<u32>,
    /// First id of the range.
    pub ids_first: Option<u32>,
    /// Last id of the range.
    pub ids_last: Option<u32>,
    /// Table/key prefix.
    pub namespace: Option<String>,
    /// This holder's name.
    pub holder: Option<String>,
    /// PostgreSQL: the schema of the lease tables.
    pub pg_schema: Option<String>,
    /// `'off'`, `'verify'` or `'declared'`.
    pub fast_start: Option<String>,
    /// `'standard'` or `'wide'`: the members' layout, which the namespace records.
    pub layout: Option<String>,
    /// A StatefulSet pod's index as the machine id: `env:VAR`, `file:PATH`
    /// or `hostname` (the lease crate's `PodIndex`), leased exactly.
    pub id_from: Option<String>,
    /// With `id_from`: how long to wait while another member holds the id
    /// (absent: as long as it takes; 0: not at all).
    pub id_wait_ms: Option<u32>,
}

/// `FIRST-LAST` or one id, read by the lease crate (the CLI's and every
/// face's one parser): `[first, last]`, or an error naming the rule.
#[napi(catch_unwind)]
pub fn parse_lease_ids(text: String, layout: Option<String>) -> Result<Vec<u32>> {
    let layout = nonceforge::Layout::parse(layout.as_deref().unwrap_or("standard"))
        .map_err(|e| Error::new(Status::InvalidArg, format!("ERR_INVALID_ARG_VALUE: {e}")))?;
    nonceforge_lease::parse_ids_in(&text, layout)
        .map(|r| vec![*r.start() as u32, *r.end() as u32])
        .map_err(|rule| Error::new(Status::InvalidArg, format!("ERR_INVALID_ARG_VALUE: {rule}")))
}

/// A duration text (`10s`, `250ms`, `2m`, `1h`, `1.5`) in milliseconds, read by
/// the lease crate.
#[napi(catch_unwind)]
pub fn parse_lease_duration(text: String) -> Result<f64> {
    nonceforge_lease::parse_duration(&text)
        .map(|d| d.as_secs_f64() * 1000.0)
        .map_err(|rule| Error::new(Status::InvalidArg, format!("ERR_INVALID_ARG_VALUE: {rule}")))
}

/// Where the id comes from: the lowest free one, or exactly a pod's index.
enum Pick {
    Lowest,
    Exact(nonceforge::MachineId, Option<Duration>),
}

/// The machine id a pod-index source (`env:VAR`, `file:PATH`, `hostname`)
/// reads now; an error names `options.idFrom` and the lease crate's rule.
fn read_pod_index(source: &str, layout: nonceforge::Layout) -> Result<nonceforge::MachineId> {
    let bad = |e: nonceforge_lease::LeaseError| {
        Error::new(
            Status::InvalidArg,
            format!("ERR_INVALID_ARG_VALUE: options.idFrom: {e}"),
        )
    };
    let source: nonceforge_lease::PodIndex = source.parse().map_err(bad)?;
    source.read_in(layout).map_err(bad)
}

/// `options.layout`, checked (None: the lease crate's default).
fn layout_of(layout: Option<&str>) -> Result<Option<nonceforge::Layout>> {
    layout
        .map(nonceforge::Layout::parse)
        .transpose()
        .map_err(|e| {
            Error::new(
                Status::InvalidArg,
                format!("ERR_INVALID_ARG_VALUE: options.layout: {e}"),
            )
        })
}

fn pick(o: &LeaseOpts) -> Result<Pick> {
    let Some(source) = &o.id_from else {
        return Ok(Pick::Lowest);
    };
    // The pod's index as an id of the members' layout (up to 65535 in the wide one).
    let layout = layout_of(o.layout.as_deref())?.unwrap_or_default();
    Ok(Pick::Exact(
        read_pod_index(source, layout)?,
        o.id_wait_ms.map(|ms| Duration::from_millis(u64::from(ms))),
    ))
}

fn options(o: LeaseOpts) -> Result<LeaseOptions> {
    let id = |v: u32, what: &str| {
        u16::try_from(v).map_err(|_| {
            Error::new(
                Status::GenericFailure,
                format!(
                    "ERR_OUT_OF_RANGE: {what} must be in 0..{}, got {v}",
                    nonceforge::MachineId::MAX_WIDE
                ),
            )
        })
    };
    let ids = match (o.ids_first, o.ids_last) {
        (Some(first), Some(last)) => Some((id(first, "ids[0]")?, id(last, "ids[1]")?)),
        _ => None,
    };
    let ms = |v: Option<u32>| v.map(u64::from);
    let layout = layout_of(o.layout.as_deref())?;
    Ok(MillisOptions {
        layout,
        ttl_ms: ms(o.ttl_ms),
        renew_every_ms: ms(o.renew_every_ms),
        margin_ms: ms(o.margin_ms),
        connect_timeout_ms: ms(o.connect_timeout_ms),
        ids,
        namespace: o.namespace,
        holder: o.holder,
        pg_schema: o.pg_schema,
        fast_start: o.fast_start.map(|f| f.parse()).transpose().map_err(|e| {
            Error::new(
                Status::InvalidArg,
                format!("ERR_INVALID_ARG_VALUE: options.fastStart: {e}"),
            )
        })?,
    }
    .into())
}

/// Acquiring, on libuv's pool: it talks to the store, with a connection of
/// its own or through a pool's.
pub struct Acquire {
    from: AcquireFrom,
}

enum AcquireFrom {
    Store {
        url: String,
        options: Box<LeaseOptions>,
        pick: Pick,
    },
    Pool(Arc<nonceforge_lease::LeasePool>),
}

impl Task for Acquire {
    type Output = Lease;
    type JsValue = LeaseHandle;

    fn compute(&mut self) -> Result<Lease> {
        // On libuv's pool: an id without history waits out the TTL and margin
        // here, not where the generator is built (on the event loop).
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let lease = match &self.from {
                AcquireFrom::Store {
                    url,
                    options,
                    pick: Pick::Lowest,
                } => Lease::acquire(url, options)?,
                AcquireFrom::Store {
                    url,
                    options,
                    pick: Pick::Exact(id, wait),
                } => Lease::acquire_exact(url, *id, options, *wait)?,
                AcquireFrom::Pool(pool) => pool.acquire()?,
            };
            lease.wait_for_start();
            Ok(lease)
        }))
        .map_err(|_| Error::from_reason("nonceforge: acquiring a lease panicked"))?
        .map_err(lease_err)
    }

    fn resolve(&mut self, _: Env, lease: Lease) -> Result<LeaseHandle> {
        Ok(LeaseHandle::held(lease))
    }
}

/// Connecting a lease pool, on libuv's pool.
pub struct PoolConnect {
    url: String,
    options: LeaseOptions,
    conns: u32,
}

impl Task for PoolConnect {
    type Output = nonceforge_lease::LeasePool;
    type JsValue = LeasePoolHandle;

    fn compute(&mut self) -> Result<nonceforge_lease::LeasePool> {
        std::panic::catch_unwind(|| {
            nonceforge_lease::LeasePool::connect(&self.url, &self.options, self.conns as usize)
        })
        .map_err(|_| Error::from_reason("nonceforge: connecting a lease pool panicked"))?
        .map_err(lease_err)
    }

    fn resolve(&mut self, _: Env, pool: nonceforge_lease::LeasePool) -> Result<LeasePoolHandle> {
        Ok(LeasePoolHandle {
            pool: Arc::new(pool),
        })
    }
}

/// Connects a pool of store connections for many leases of one namespace.
#[napi(catch_unwind)]
pub fn lease_pool_connect(
    url: String,
    opts: LeaseOpts,
    conns: u32,
) -> Result<AsyncTask<PoolConnect>> {
    if opts.id_from.is_some() {
        return Err(Error::new(
            Status::InvalidArg,
            "ERR_INVALID_ARG_VALUE: options.idFrom: a pool takes the lowest free ids (a pod's own index: NonceGenerator.lease)",
        ));
    }
    Ok(AsyncTask::new(PoolConnect {
        url,
        options: options(opts)?,
        conns,
    }))
}

/// Many leases of one namespace over a few shared store connections and one
/// thread (node/lib/nonce.js's `LeasePool` wraps it).
#[napi]
pub struct LeasePoolHandle {
    pool: Arc<nonceforge_lease::LeasePool>,
}

#[napi]
impl LeasePoolHandle {
    /// Takes the lowest free machine id through the pool.
    #[napi(catch_unwind)]
    pub fn acquire(&self) -> AsyncTask<Acquire> {
        AsyncTask::new(Acquire {
            from: AcquireFrom::Pool(Arc::clone(&self.pool)),
        })
    }

    /// The most store connections the pool keeps.
    #[napi(getter)]
    pub fn conns(&self) -> u32 {
        self.pool.conns() as u32
    }
}

/// Takes the lowest free machine id in the store at `url`.
#[napi(catch_unwind)]
pub fn lease_acquire(url: String, opts: LeaseOpts) -> Result<AsyncTask<Acquire>> {
    let pick = pick(&opts)?;
    Ok(AsyncTask::new(Acquire {
        from: AcquireFrom::Store {
            url,
            options: Box::new(options(opts)?),
            pick,
        },
    }))
}

/// The machine id a pod-index source (`env:VAR`, `file:PATH`, `hostname`)
/// reads now, for the waiting notice (lib/nonce.js).
#[napi(catch_unwind)]
pub fn pod_index(source: String, layout: Option<String>) -> Result<u32> {
    let layout = layout_of(layout.as_deref())?.unwrap_or_default();
    read_pod_index(&source, layout).map(|id| u32::from(id.get()))
}

/// A held lease.
#[napi]
pub struct LeaseHandle {
    lease: Arc<Mutex<Option<Lease>>>,
    stop: Arc<AtomicBool>,
    machine_id: u32,
    token: u64,
    floor_unix_ms: u64,
    history: bool,
    holder: String,
    backend: String,
}

impl LeaseHandle {
    fn held(lease: Lease) -> LeaseHandle {
        LeaseHandle {
            machine_id: lease.machine_id().get() as u32,
            token: lease.token(),
            floor_unix_ms: lease.floor_unix_ms(),
            history: lease.has_history(),
            holder: lease.holder().to_string(),
            backend: lease.backend().to_string(),
            lease: Arc::new(Mutex::new(Some(lease))),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Runs `f` on the lease; an error once it has been released.
    pub(crate) fn with<T>(&self, f: impl FnOnce(&Lease) -> Result<T>) -> Result<T> {
        match self
            .lease
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            Some(l) => f(l),
            None => Err(Error::new(
                Status::GenericFailure,
                "ERR_NONCEFORGE_DISABLED: the lease was released",
            )),
        }
    }

    fn take(&self) -> Option<Lease> {
        self.stop.store(true, Ordering::Release);
        self.lease.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// How long before the lease's local deadline the gate goes up. The watcher
/// thread may wake late on a loaded machine (tens of ms under CFS at worst);
/// renewals keep the deadline seconds ahead, so only failing renewals ever
/// bring the guard into play.
const GUARD: Duration = Duration::from_millis(50);

/// State codes given to JavaScript.
const HELD: u32 = 0;
const LAPSED: u32 = 1;
const LOST: u32 = 2;
const RELEASED: u32 = 3;

fn code(state: &LeaseState) -> (u32, f64) {
    match state {
        LeaseState::Held { deadline_in } => (HELD, deadline_in.as_secs_f64() * 1000.0),
        LeaseState::Lapsed => (LAPSED, 0.0),
        LeaseState::Lost => (LOST, 0.0),
        LeaseState::Released => (RELEASED, 0.0),
    }
}

/// Releasing, on libuv's pool.
pub struct Release {
    lease: Option<Lease>,
}

impl Task for Release {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<()> {
        match self.lease.take() {
            Some(l) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| l.release()))
                .map_err(|_| Error::from_reason("nonceforge: releasing a lease panicked"))?
                .map_err(lease_err),
            None => Ok(()),
        }
    }

    fn resolve(&mut self, _: Env, _: ()) -> Result<()> {
        Ok(())
    }
}

#[napi]
impl LeaseHandle {
    /// The leased machine id.
    #[napi(getter)]
    pub fn machine_id(&self) -> u32 {
        self.machine_id
    }

    /// The fencing token of this grant.
    #[napi(getter)]
    pub fn token(&self) -> BigInt {
        BigInt::from(self.token)
    }

    /// The previous holder's last timestamp (Unix ms).
    #[napi(getter)]
    pub fn floor_unix_ms(&self) -> f64 {
        self.floor_unix_ms as f64
    }

    /// Who holds it, as the store shows it.
    #[napi(getter)]
    pub fn holder(&self) -> String {
        self.holder.clone()
    }

    /// The store, without its password.
    #[napi(getter)]
    pub fn backend(&self) -> String {
        self.backend.clone()
    }

    /// `[state, deadlineInMs]`: 0 held, 1 lapsed, 2 lost, 3 released.
    #[napi(catch_unwind)]
    pub fn state(&self) -> (u32, f64) {
        match self
            .lease
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            Some(l) => code(&l.state()),
            None => (RELEASED, 0.0),
        }
    }

    /// Why the lease was lost — `'taken'`, `'evicted'`, `'store'` (the store
    /// lost its data) or `'rollback'` (the store went back to an older copy)
    /// — or null while it is not.
    #[napi(catch_unwind)]
    pub fn lost_reason(&self) -> Option<String> {
        let guard = self.lease.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .as_ref()
            .and_then(Lease::lost_reason)
            .map(|r| r.as_str().to_owned())
    }

    /// Whether the generators started right above the store's floor (the
    /// `fastStart` option verified or declared, and the id has history).
    #[napi(getter)]
    pub fn started_fast(&self) -> bool {
        let guard = self.lease.lock().unwrap_or_else(|p| p.into_inner());
        guard.as_ref().is_some_and(Lease::started_fast)
    }

    /// Whether the store had a record of the id (false: a new namespace, or
    /// a store that lost its data; the start waited out the TTL and margin).
    #[napi(getter)]
    pub fn has_history(&self) -> bool {
        self.history
    }

    /// Why the lease does not let its generators issue now (starting,
    /// lapsed, lost, released), or null while it does.
    #[napi(catch_unwind)]
    pub fn readiness(&self) -> Option<String> {
        let guard = self.lease.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(l) => l.readiness().err().map(|why| why.to_string()),
            None => Some(nonceforge_lease::NotReady::Released.to_string()),
        }
    }

    /// The lease's figures as samples of the fleet's metric series (empty
    /// once released).
    #[napi(catch_unwind)]
    pub fn samples(&self) -> Vec<crate::nonce::MetricSample> {
        let guard = self.lease.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(l) => crate::nonce::to_js(l.metrics().samples(l.readiness().is_ok())),
            None => Vec::new(),
        }
    }

    /// `[renewalsOk, renewalsFailed, lastError]`: the last error while the
    /// latest renewal failed, or null.
    #[napi(catch_unwind)]
    pub fn renewals(&self) -> (f64, f64, Option<String>) {
        match self
            .lease
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            Some(l) => {
                let (ok, failed) = l.renewals();
                (ok as f64, failed as f64, l.last_error())
            }
            None => (0.0, 0.0, None),
        }
    }

    /// Reports each change of state to `callback(state)` from a watcher
    /// thread (it never keeps the process alive), and returns the *gate*: a
    /// 4-byte ArrayBuffer the same thread writes, 0 while JavaScript may hand
    /// out pooled nonces, 1 from 50 ms (`GUARD`) before the lease's local deadline
    /// (and whenever the lease is not held): then every nonce comes from the
    /// core, which reads its clock. One `Atomics.load` a call instead of a
    /// clock read (a third of a call: bench/RESULTS.md, "The measurements
    /// behind the code"). `null`
    /// where the runtime copies external buffers (the gate would not move):
    /// node/lib/lease.js then reads the clock per call.
    #[napi(catch_unwind)]
    pub fn watch<'env>(
        &self,
        env: &'env Env,
        callback: Function<u32, ()>,
    ) -> Result<Option<ArrayBuffer<'env>>> {
        let tsfn: ThreadsafeFunction<u32, (), u32, Status, false, true> = callback
            .build_threadsafe_function()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?;
        let gate = Arc::new(AtomicU32::new(0));
        let data = gate.as_ptr().cast::<u8>();
        // SAFETY: `data` points at the 4 bytes of the AtomicU32 inside `gate`;
        // the finalizer owns a clone of the Arc, so the memory lives as long
        // as the ArrayBuffer. JavaScript only reads it (Atomics.load); this
        // module writes it only through the atomic.
        let buffer =
            unsafe { ArrayBuffer::from_external(env, data, 4, gate.clone(), |_, g| drop(g)) }?;
        let shared = std::ptr::eq(buffer.as_ptr(), data);
        let lease = self.lease.clone();
        let stop = self.stop.clone();
        // Changes are pushed by the lease's thread; the watcher wakes for
        // them and, while held, once at the guard before the deadline.
        let events = match lease.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(l) => l.subscribe(),
            None => std::sync::mpsc::channel().1,
        };
        std::thread::Builder::new()
            .name("nonceforge-lease-watch".into())
            .spawn(move || {
                let mut told = HELD;
                loop {
                    let (now, left) = match lease.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
                    {
                        Some(l) if !stop.load(Ordering::Acquire) => match l.state() {
                            LeaseState::Held { deadline_in } => (HELD, deadline_in),
                            other => (code(&other).0, Duration::ZERO),
                        },
                        _ => (RELEASED, Duration::ZERO),
                    };
                    let up = now != HELD || left <= GUARD;
                    gate.store(up as u32, Ordering::Release);
                    if now != told {
                        tsfn.call(now, ThreadsafeFunctionCallMode::NonBlocking);
                        told = now;
                    }
                    if now == LOST || now == RELEASED {
                        return;
                    }
                    // Held with time left: wake at the guard (or at the next
                    // change). Within the guard, lapsed: at the next change
                    // (a renewal, a loss, the release).
                    let got = if now == HELD && !up {
                        events.recv_timeout(left - GUARD)
                    } else {
                        events
                            .recv()
                            .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected)
                    };
                    if got == Err(std::sync::mpsc::RecvTimeoutError::Disconnected) {
                        // The lease is gone (released or dropped): say so once.
                        if told != RELEASED && told != LOST {
                            gate.store(1, Ordering::Release);
                            tsfn.call(RELEASED, ThreadsafeFunctionCallMode::NonBlocking);
                        }
                        return;
                    }
                }
            })
            .map_err(|e| Error::from_reason(format!("nonceforge: starting the watcher: {e}")))?;
        Ok(shared.then_some(buffer))
    }

    /// Stops the generators, records their last timestamp as the floor, and
    /// frees the id (on libuv's pool). Releasing twice does nothing.
    #[napi]
    pub fn release(&self) -> AsyncTask<Release> {
        AsyncTask::new(Release { lease: self.take() })
    }

    /// The same, blocking: for `process.on('exit')`, where nothing async runs.
    #[napi(catch_unwind)]
    pub fn release_sync(&self) -> Result<()> {
        Release { lease: self.take() }.compute()
    }
}
