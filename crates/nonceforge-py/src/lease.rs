//! Machine ids leased through the Rust lease crate (the stores, records and
//! rules of docs/lease-protocol.md, as the CLI, Node, Go and Elixir take
//! them). Acquiring and releasing release the GIL (python/nonceforge/lease.py
//! runs them in a thread for asyncio); renewals run on the lease crate's own
//! thread, and the core's deadline stops attached generators the moment the
//! lease may have lapsed, with no Python running.

use crate::metrics::samples_to_py;
use crate::{ClockBehindError, bad_value};
use nonceforge_lease::{
    Lease, LeaseError, LeaseEvent, LeaseOptions, LeaseState, MillisOptions, NotReady,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The Python base class, named apart from the lease crate's error.
mod base {
    pyo3::import_exception!(nonceforge._errors, LeaseError);
}
use base::LeaseError as PyLeaseError;
pyo3::import_exception!(nonceforge._errors, LeaseUnreachableError);
pyo3::import_exception!(nonceforge._errors, LeaseTimeoutError);
pyo3::import_exception!(nonceforge._errors, LeaseAllTakenError);
pyo3::import_exception!(nonceforge._errors, LeaseLostError);
pyo3::import_exception!(nonceforge._errors, LeaseRefusedError);

/// A lease error as the Python exception of its meaning.
pub(crate) fn lease_err(e: LeaseError) -> PyErr {
    let msg = e.to_string();
    match e {
        LeaseError::BadUrl { .. } | LeaseError::BadOption { .. } => PyValueError::new_err(msg),
        LeaseError::Unreachable { .. } => LeaseUnreachableError::new_err(msg),
        LeaseError::Timeout { .. } => LeaseTimeoutError::new_err(msg),
        LeaseError::AllTaken { .. } => LeaseAllTakenError::new_err(msg),
        LeaseError::Lost { .. } => LeaseLostError::new_err(msg),
        LeaseError::Refused { .. } => LeaseRefusedError::new_err(msg),
        LeaseError::Nonce(nonceforge::Error::ClockBehind { .. }) => ClockBehindError::new_err(msg),
        _ => PyLeaseError::new_err(msg),
    }
}

/// The lease, shared by its handle and the generators made on it; `None`
/// once released.
pub(crate) type LeaseCell = Arc<Mutex<Option<Lease>>>;

/// The lease under its lock (a panic elsewhere does not poison it for us).
fn lock(cell: &LeaseCell) -> std::sync::MutexGuard<'_, Option<Lease>> {
    cell.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) fn with<T>(cell: &LeaseCell, f: impl FnOnce(&Lease) -> PyResult<T>) -> PyResult<T> {
    match lock(cell).as_ref() {
        Some(l) => f(l),
        None => Err(crate::DisabledError::new_err("the lease was released")),
    }
}

/// Why the lease does not let its generators issue (None while it does).
pub(crate) fn not_ready(cell: &LeaseCell) -> Option<String> {
    match lock(cell).as_ref() {
        Some(l) => l.readiness().err().map(|why| why.to_string()),
        None => Some(NotReady::Released.to_string()),
    }
}

/// The lease's samples of the fleet's series (none once released).
pub(crate) fn samples(cell: &LeaseCell) -> Vec<nonceforge::nonce::series::Sample> {
    match lock(cell).as_ref() {
        Some(l) => l.metrics().samples(l.readiness().is_ok()),
        None => Vec::new(),
    }
}

/// The machine id a pod-index source (`env:VAR`, `file:PATH`, `hostname`)
/// reads now; an error names `id_from` and the lease crate's rule.
fn read_pod_index(
    source: &str,
    layout: Option<nonceforge::Layout>,
) -> PyResult<nonceforge::MachineId> {
    let bad = |e: LeaseError| bad_value("id_from", format!("{e}"));
    let source: nonceforge_lease::PodIndex = source.parse().map_err(bad)?;
    source.read_in(layout.unwrap_or_default()).map_err(bad)
}

fn parse_layout(layout: Option<&str>) -> PyResult<Option<nonceforge::Layout>> {
    layout
        .map(nonceforge::Layout::parse)
        .transpose()
        .map_err(|e| bad_value("layout", e))
}

fn state_name(state: &LeaseState) -> &'static str {
    match state {
        LeaseState::Held { .. } => "held",
        LeaseState::Lapsed => "lapsed",
        LeaseState::Lost => "lost",
        LeaseState::Released => "released",
    }
}

/// A held lease (python/nonceforge/lease.py's `Lease` wraps it).
#[pyclass(frozen, module = "nonceforge._native", name = "LeaseHandle")]
pub struct LeaseHandle {
    cell: LeaseCell,
    events: Mutex<Option<Receiver<LeaseEvent>>>,
    machine_id: u16,
    token: u64,
    floor_unix_ms: u64,
    history: bool,
    holder: String,
    backend: String,
    /// `crate::forks()` at the acquire: a forked child holds no lease (the
    /// keeper thread did not come along) and makes no generator on it.
    forks: u64,
}

/// The lease options from the Python face's (durations in ms; None: the
/// lease crate's default).
fn lease_options(
    [ttl_ms, renew_every_ms, margin_ms, connect_timeout_ms]: [Option<u64>; 4],
    ids: Option<(u16, u16)>,
    [namespace, holder, pg_schema]: [Option<String>; 3],
    fast_start: Option<String>,
    layout: Option<nonceforge::Layout>,
) -> PyResult<LeaseOptions> {
    let fast_start = fast_start
        .map(|f| f.parse())
        .transpose()
        .map_err(|e| bad_value("fast_start", e))?;
    Ok(MillisOptions {
        ttl_ms,
        renew_every_ms,
        margin_ms,
        connect_timeout_ms,
        ids,
        namespace,
        holder,
        pg_schema,
        fast_start,
        layout,
    }
    .into())
}

/// A lease just granted, subscribed to before the start wait (a loss during
/// it — the store restarted from an older copy, say — reaches the watcher),
/// then waited for. Runs without the GIL.
fn started(lease: Lease) -> (Lease, Receiver<LeaseEvent>) {
    let events = lease.subscribe();
    lease.wait_for_start();
    (lease, events)
}

impl LeaseHandle {
    fn held((lease, events): (Lease, Receiver<LeaseEvent>)) -> LeaseHandle {
        LeaseHandle {
            machine_id: lease.machine_id().get(),
            token: lease.token(),
            floor_unix_ms: lease.floor_unix_ms(),
            history: lease.has_history(),
            holder: lease.holder().to_string(),
            backend: lease.backend().to_string(),
            cell: Arc::new(Mutex::new(Some(lease))),
            events: Mutex::new(Some(events)),
            forks: crate::forks(),
        }
    }

    /// The lease, for a generator: refused in a process forked since.
    pub(crate) fn cell(&self) -> PyResult<LeaseCell> {
        if crate::forked_since(self.forks) {
            return Err(crate::DisabledError::new_err(
                "nonceforge: this lease was taken before the process forked; it is the parent's: \
                 take a lease in the child",
            ));
        }
        Ok(self.cell.clone())
    }

    fn take(&self) -> Option<Lease> {
        lock(&self.cell).take()
    }
}

#[pymethods]
impl LeaseHandle {
    /// Takes a machine id from the store at `url` (the lowest free one, or
    /// exactly the pod index `id_from` reads), blocking with the GIL
    /// released until the generators may start. Durations in ms; `None`:
    /// the lease crate's default.
    #[staticmethod]
    #[pyo3(signature = (url, *, ttl_ms=None, renew_every_ms=None, margin_ms=None, connect_timeout_ms=None, ids=None, namespace=None, holder=None, pg_schema=None, fast_start=None, id_from=None, id_wait_ms=None, layout=None))]
    #[allow(clippy::too_many_arguments)]
    fn acquire(
        py: Python<'_>,
        url: String,
        ttl_ms: Option<u64>,
        renew_every_ms: Option<u64>,
        margin_ms: Option<u64>,
        connect_timeout_ms: Option<u64>,
        ids: Option<(u16, u16)>,
        namespace: Option<String>,
        holder: Option<String>,
        pg_schema: Option<String>,
        fast_start: Option<String>,
        id_from: Option<String>,
        id_wait_ms: Option<u64>,
        layout: Option<String>,
    ) -> PyResult<Self> {
        let layout = parse_layout(layout.as_deref())?;
        let options = lease_options(
            [ttl_ms, renew_every_ms, margin_ms, connect_timeout_ms],
            ids,
            [namespace, holder, pg_schema],
            fast_start,
            layout,
        )?;
        // The pod's index as an id of the members' layout (up to 65535 in the wide one).
        let exact = id_from
            .as_deref()
            .map(|source| read_pod_index(source, layout))
            .transpose()?;
        let got = py.detach(|| {
            let lease = match exact {
                None => Lease::acquire(&url, &options)?,
                Some(id) => {
                    Lease::acquire_exact(&url, id, &options, id_wait_ms.map(Duration::from_millis))?
                }
            };
            Ok::<_, LeaseError>(started(lease))
        });
        Ok(LeaseHandle::held(got.map_err(lease_err)?))
    }

    /// The machine id a pod-index source (`env:VAR`, `file:PATH`,
    /// `hostname`) reads now.
    #[staticmethod]
    #[pyo3(signature = (source, layout=None))]
    fn pod_index(source: &str, layout: Option<&str>) -> PyResult<u16> {
        Ok(read_pod_index(source, parse_layout(layout)?)?.get())
    }

    #[getter]
    fn machine_id(&self) -> u16 {
        self.machine_id
    }
    #[getter]
    fn token(&self) -> u64 {
        self.token
    }
    #[getter]
    fn floor_unix_ms(&self) -> u64 {
        self.floor_unix_ms
    }
    #[getter]
    fn has_history(&self) -> bool {
        self.history
    }
    #[getter]
    fn holder(&self) -> &str {
        &self.holder
    }
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }
    #[getter]
    fn started_fast(&self) -> bool {
        lock(&self.cell).as_ref().is_some_and(Lease::started_fast)
    }

    /// `(state, deadline_in_seconds)`: 'held', 'lapsed', 'lost' or 'released'.
    fn state(&self) -> (&'static str, f64) {
        match lock(&self.cell).as_ref() {
            Some(l) => match l.state() {
                LeaseState::Held { deadline_in } => ("held", deadline_in.as_secs_f64()),
                other => (state_name(&other), 0.0),
            },
            None => ("released", 0.0),
        }
    }

    /// 'taken', 'evicted', 'store' or 'rollback' once lost, else None.
    fn lost_reason(&self) -> Option<&'static str> {
        lock(&self.cell)
            .as_ref()
            .and_then(Lease::lost_reason)
            .map(|r| r.as_str())
    }

    /// Why the generators may not issue now, or None.
    fn readiness(&self) -> Option<String> {
        not_ready(&self.cell)
    }

    /// `(renewals_ok, renewals_failed, last_error)`.
    fn renewals(&self) -> (u64, u64, Option<String>) {
        match lock(&self.cell).as_ref() {
            Some(l) => {
                let (ok, failed) = l.renewals();
                (ok, failed, l.last_error())
            }
            None => (0, 0, None),
        }
    }

    /// The lease's samples of the fleet's series.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        samples_to_py(py, samples(&self.cell))
    }

    /// Waits (GIL released) for the lease's next event, up to `timeout`
    /// seconds (None: until one comes): the event's name — 'renewed',
    /// 'lapsed', 'resumed', 'lost', 'released' — or None on the timeout.
    /// 'released' also when the lease is gone. One waiter at a time (the
    /// watcher thread of lease.py).
    #[pyo3(signature = (timeout=None))]
    fn wait_event(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<&'static str>> {
        let timeout = match timeout {
            Some(t) if !(t >= 0.0 && t.is_finite()) => {
                return Err(bad_value(
                    "timeout",
                    "must be a finite number of seconds >= 0",
                ));
            }
            t => t.map(Duration::from_secs_f64),
        };
        // The receiver is taken out while waited on (a second waiter sees
        // none and is told 'released'), and put back after.
        let Some(rx) = self.events.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Ok(Some("released"));
        };
        let (rx, got) = py.detach(move || {
            let got = match timeout {
                Some(t) => rx.recv_timeout(t),
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            (rx, got)
        });
        *self.events.lock().unwrap_or_else(|p| p.into_inner()) = Some(rx);
        Ok(match got {
            Ok(LeaseEvent::Renewed { .. }) => Some("renewed"),
            Ok(LeaseEvent::Lapsed) => Some("lapsed"),
            Ok(LeaseEvent::Resumed) => Some("resumed"),
            Ok(LeaseEvent::Lost(_)) => Some("lost"),
            Ok(LeaseEvent::Released) | Err(RecvTimeoutError::Disconnected) => Some("released"),
            Err(RecvTimeoutError::Timeout) => None,
            // An event this version does not know: say it as a renewal's
            // (the state tells the rest).
            Ok(_) => Some("renewed"),
        })
    }

    /// Stops the generators, records their last timestamp as the floor and
    /// frees the id (blocking, GIL released). Releasing twice does nothing,
    /// and so does a forked child (the lease is its parent's).
    fn release(&self, py: Python<'_>) -> PyResult<()> {
        if crate::forked_since(self.forks) {
            // The parent's lease: a child neither renews nor releases it.
            return Ok(());
        }
        let Some(lease) = self.take() else {
            return Ok(());
        };
        py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lease.release())))
            .map_err(|_| PyRuntimeError::new_err("nonceforge: releasing a lease panicked"))?
            .map_err(lease_err)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LeaseHandle>()?;
    m.add_class::<LeasePoolHandle>()?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(redact_url, m)?)?;
    Ok(())
}

/// A duration text (`10s`, `250ms`, `2m`, `1h`, `1.5`) in seconds, read by
/// the lease crate (every face's one parser).
#[pyfunction]
fn parse_duration(text: &str) -> PyResult<f64> {
    nonceforge_lease::parse_duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|rule| bad_value("duration", format!("{text:?}: {rule}")))
}

/// `FIRST-LAST` or one id: `(first, last)`, read by the lease crate in
/// `layout` (`standard`, the default, or `wide`).
#[pyfunction]
#[pyo3(signature = (text, layout="standard"))]
fn parse_ids(text: &str, layout: &str) -> PyResult<(u16, u16)> {
    let layout = nonceforge::Layout::parse(layout).map_err(|e| bad_value("layout", e))?;
    nonceforge_lease::parse_ids_in(text, layout)
        .map(|r| (*r.start(), *r.end()))
        .map_err(|rule| bad_value("ids", format!("{text:?}: {rule}")))
}

/// A store URL as every face shows it: the password and password-like query
/// parameters replaced by `***` (for logs; `Lease.backend` is already so).
#[pyfunction]
fn redact_url(url: &str) -> String {
    nonceforge_lease::redact_url(url)
}

/// Many leases of one namespace over a few shared store connections and one
/// thread (python/nonceforge/lease.py's `LeasePool` wraps it).
#[pyclass(frozen, module = "nonceforge._native", name = "LeasePoolHandle")]
pub struct LeasePoolHandle {
    pool: nonceforge_lease::LeasePool,
    forks: u64,
}

#[pymethods]
impl LeasePoolHandle {
    /// Connects to the store at `url` (checked now) for leases with these
    /// options, keeping up to `conns` connections (0: the crate's default).
    #[staticmethod]
    #[pyo3(signature = (url, conns=0, *, ttl_ms=None, renew_every_ms=None, margin_ms=None, connect_timeout_ms=None, ids=None, namespace=None, holder=None, pg_schema=None, fast_start=None, layout=None))]
    #[allow(clippy::too_many_arguments)]
    fn connect(
        py: Python<'_>,
        url: String,
        conns: usize,
        ttl_ms: Option<u64>,
        renew_every_ms: Option<u64>,
        margin_ms: Option<u64>,
        connect_timeout_ms: Option<u64>,
        ids: Option<(u16, u16)>,
        namespace: Option<String>,
        holder: Option<String>,
        pg_schema: Option<String>,
        fast_start: Option<String>,
        layout: Option<String>,
    ) -> PyResult<Self> {
        let options = lease_options(
            [ttl_ms, renew_every_ms, margin_ms, connect_timeout_ms],
            ids,
            [namespace, holder, pg_schema],
            fast_start,
            parse_layout(layout.as_deref())?,
        )?;
        let pool = py
            .detach(|| nonceforge_lease::LeasePool::connect(&url, &options, conns))
            .map_err(lease_err)?;
        Ok(LeasePoolHandle {
            pool,
            forks: crate::forks(),
        })
    }

    /// Takes a free id of the range, blocking with the GIL released until
    /// its generators may start.
    fn acquire(&self, py: Python<'_>) -> PyResult<LeaseHandle> {
        if crate::forked_since(self.forks) {
            return Err(crate::DisabledError::new_err(
                "nonceforge: this lease pool was made before the process forked; it is the \
                 parent's: make a pool in the child",
            ));
        }
        let got = py.detach(|| self.pool.acquire().map(started));
        Ok(LeaseHandle::held(got.map_err(lease_err)?))
    }

    /// The most store connections the pool keeps.
    #[getter]
    fn conns(&self) -> usize {
        self.pool.conns()
    }
}
