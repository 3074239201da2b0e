//! Nonces: `NonceGenerator` (shared by every thread) and `LocalNonces` (one
//! thread's handle, for hot loops).

use crate::lease::{LeaseCell, LeaseHandle};
use crate::metrics::{samples_to_py, types};
use crate::records::NonceParts;
use crate::{bad_value, bytes_like, core_err, int_in};
use nonceforge::nonce::NonceKind;
use nonceforge::{Bits, Layout, MachineId, NonceGenerator, NonceGeneratorBuilder};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::cell::RefCell;

/// One nonce of `$bits` from `$recv`'s fixed-size method for that size (the
/// core's `counter_96` and its kin: no run-time kind or size dispatch).
macro_rules! sized {
    ($py:ident, $bits:ident, $recv:expr, $m64:ident, $m96:ident, $m128:ident) => {{
        match $bits {
            64 => Ok(PyBytes::new($py, &$recv.$m64().map_err(core_err)?)),
            96 => Ok(PyBytes::new($py, &$recv.$m96().map_err(core_err)?)),
            128 => Ok(PyBytes::new($py, &$recv.$m128().map_err(core_err)?)),
            other => Err(bits_of(other).unwrap_err()),
        }
    }};
}

macro_rules! local_call {
    ($self:ident, $py:ident, $bits:ident, $m64:ident, $m96:ident, $m128:ident) => {{
        crate::same_process($self.forks)?;
        let mut l = $self.inner.borrow_mut();
        sized!($py, $bits, l, $m64, $m96, $m128)
    }};
}

/// The most nonces one `many` call makes (1 GiB of 128-bit nonces).
const MAX_MANY: u64 = 1 << 26;

pub(crate) fn bits_of(bits: u32) -> PyResult<Bits> {
    match bits {
        64 => Ok(Bits::B64),
        96 => Ok(Bits::B96),
        128 => Ok(Bits::B128),
        other => Err(bad_value(
            "bits",
            format!("must be 64, 96 or 128, got {other}"),
        )),
    }
}

pub(crate) fn kind_of(kind: &str) -> PyResult<NonceKind> {
    match kind {
        "counter" => Ok(NonceKind::Counter),
        "sortable" => Ok(NonceKind::Sortable),
        "encrypted" => Ok(NonceKind::Encrypted),
        other => Err(bad_value(
            "kind",
            format!("must be 'counter', 'sortable' or 'encrypted', got {other:?}"),
        )),
    }
}

/// A nonce generator: one per process and machine id, shared by its threads.
///
/// Counter nonces are unique and the fastest; sortable ones increase and
/// carry their millisecond; encrypted ones are counter nonces through a block
/// cipher under `key`, unpredictable. 64, 96 or 128 bits, as `bytes`
/// (big-endian) or `int`.
#[pyclass(frozen, module = "nonceforge", name = "NonceGenerator")]
pub struct Generator {
    pub(crate) inner: NonceGenerator,
    lease: Option<LeaseCell>,
    /// `crate::forks()` when it was made: it issues in that process only.
    forks: u64,
}

impl Generator {
    fn build(
        mut b: NonceGeneratorBuilder,
        key: Option<&Bound<'_, PyAny>>,
        epoch_unix_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<NonceGenerator> {
        if let Some(k) = key {
            b = b.key(&crate::secret_bytes("key", k)?);
        }
        if let Some(e) = epoch_unix_ms {
            b = b.epoch_unix_ms(int_in("epoch_unix_ms", e, (1 << 53) - 1)?);
        }
        b.build().map_err(core_err)
    }

    /// Refuses in a process forked after it was made.
    #[inline(always)]
    fn same_process(&self) -> PyResult<()> {
        crate::same_process(self.forks)
    }

    /// A nonce of a kind and size named at run time: its size and value.
    fn value(&self, kind: &str, bits: u32) -> PyResult<(Bits, u128)> {
        self.same_process()?;
        let (k, b) = (kind_of(kind)?, bits_of(bits)?);
        Ok((b, self.inner.next(k, b).map_err(core_err)?.to_u128()))
    }
}

#[pymethods]
impl Generator {
    /// `machine_id` in 0..=511 (0..=65535 with `layout="wide"`), unique
    /// across the fleet at any moment (a lease gives one: `nonceforge.Lease`);
    /// `key` (at least 32 bytes) for encrypted nonces; `epoch_unix_ms` to move
    /// the epoch; `layout` "standard" (NoNoncense's 9-bit machine id) or
    /// "wide" (16 bits, 96- and 128-bit nonces only). Every member of a fleet
    /// uses the same epoch and layout.
    #[new]
    #[pyo3(signature = (machine_id, *, key=None, epoch_unix_ms=None, layout="standard"))]
    fn new(
        machine_id: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
        epoch_unix_ms: Option<&Bound<'_, PyAny>>,
        layout: &str,
    ) -> PyResult<Self> {
        let layout = Layout::parse(layout).map_err(core_err)?;
        let id =
            int_in("machine_id", machine_id, u64::from(layout.max_machine_id())).map_err(|e| {
                match machine_id.extract::<u16>() {
                    // A wide layout's id in the standard layout: say which takes it.
                    Ok(id)
                        if layout == Layout::Standard
                            && !machine_id.is_instance_of::<pyo3::types::PyBool>() =>
                    {
                        bad_value(
                            "machine_id",
                            format!(
                                "must be in 0..=511, got {id} (0..=65535 with layout=\"wide\")"
                            ),
                        )
                    }
                    _ => e,
                }
            })?;
        let id = MachineId::new_in(layout, id).map_err(core_err)?;
        let builder = NonceGenerator::builder(id).layout(layout);
        Ok(Generator {
            inner: Self::build(builder, key, epoch_unix_ms)?,
            lease: None,
            forks: crate::forks(),
        })
    }

    /// A generator on a held lease's machine id (started above the previous
    /// holder's floor, stopped when the lease may have lapsed): called by
    /// `Lease.generator`.
    #[staticmethod]
    #[pyo3(signature = (lease, *, key=None, epoch_unix_ms=None))]
    fn _leased(
        lease: &LeaseHandle,
        key: Option<&Bound<'_, PyAny>>,
        epoch_unix_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let cell = lease.cell()?;
        let inner = crate::lease::with(&cell, |l| {
            let g = Self::build(l.builder(), key, epoch_unix_ms)?;
            l.attach(&g).map_err(crate::lease::lease_err)?;
            Ok(g)
        })?;
        Ok(Generator {
            inner,
            lease: Some(cell),
            forks: crate::forks(),
        })
    }

    /// The machine id.
    #[getter]
    fn machine_id(&self) -> u16 {
        self.inner.machine_id().get()
    }

    /// The layout: "standard" or "wide".
    #[getter]
    fn layout(&self) -> &'static str {
        self.inner.layout().name()
    }

    /// The epoch (Unix ms) its timestamps count from.
    #[getter]
    fn epoch_unix_ms(&self) -> u64 {
        self.inner.epoch_unix_ms()
    }

    /// A counter nonce (unique, predictable, the fastest).
    #[pyo3(signature = (bits=96))]
    fn counter<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        self.same_process()?;
        sized!(py, bits, self.inner, counter_64, counter_96, counter_128)
    }

    /// A sortable nonce (strictly increasing from this generator, carrying its
    /// creation millisecond).
    #[pyo3(signature = (bits=128))]
    fn sortable<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        self.same_process()?;
        sized!(py, bits, self.inner, sortable_64, sortable_96, sortable_128)
    }

    /// An encrypted nonce (a counter nonce through a block cipher under the
    /// key: unique and unpredictable).
    #[pyo3(signature = (bits=128))]
    fn encrypted<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        self.same_process()?;
        sized!(
            py,
            bits,
            self.inner,
            encrypted_64,
            encrypted_96,
            encrypted_128
        )
    }

    /// A nonce of `kind` ('counter', 'sortable', 'encrypted') and `bits`.
    #[pyo3(signature = (kind="counter", bits=96))]
    fn next<'py>(&self, py: Python<'py>, kind: &str, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        let (b, v) = self.value(kind, bits)?;
        Ok(PyBytes::new(py, &v.to_be_bytes()[16 - b.bytes()..]))
    }

    /// A nonce as an `int` (its big-endian value).
    #[pyo3(signature = (kind="counter", bits=64))]
    fn next_int(&self, kind: &str, bits: u32) -> PyResult<u128> {
        Ok(self.value(kind, bits)?.1)
    }

    /// `count` nonces back to back in one `bytes` (one reservation; the GIL
    /// is released while they are made).
    fn many<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        bits: u32,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.same_process()?;
        let (k, b) = (kind_of(kind)?, bits_of(bits)?);
        let n = int_in("count", count, MAX_MANY)? as usize;
        let inner = &self.inner;
        PyBytes::new_with(py, n * b.bytes(), |out| {
            let r = if out.len() >= crate::RELEASE_GIL_FROM {
                py.detach(|| inner.fill(k, b, out))
            } else {
                inner.fill(k, b, out)
            };
            r.map_err(core_err)
        })
    }

    /// The counter nonce an encrypted nonce was made from.
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = self
            .inner
            .decrypt(&bytes_like("nonce", nonce)?)
            .map_err(core_err)?;
        Ok(PyBytes::new(py, &n.to_vec()))
    }

    /// The fields of a counter or sortable nonce:
    /// `NonceParts(unix_ms, machine_id, counter)`.
    fn decompose(&self, nonce: &Bound<'_, PyAny>) -> PyResult<NonceParts> {
        let bytes = bytes_like("nonce", nonce)?;
        let p = self.inner.decompose(&bytes).map_err(core_err)?;
        Ok(NonceParts {
            unix_ms: p.unix_ms,
            machine_id: p.machine_id,
            counter: p.counter,
        })
    }

    /// A handle for one thread's hot loop: the same nonces, drawn from
    /// blocks reserved ahead (no shared atomic per call). Not shareable
    /// between threads (it raises if another thread uses it).
    fn local(&self) -> PyResult<LocalNonces> {
        self.same_process()?;
        Ok(LocalNonces {
            inner: RefCell::new(self.inner.local()),
            forks: self.forks,
        })
    }

    /// Stop issuing: every call raises `DisabledError` until `enable()`.
    fn disable(&self) {
        self.inner.disable();
    }

    /// Issue again.
    fn enable(&self) {
        self.inner.enable();
    }

    /// Whether it issues (a leased generator stops itself when its lease may
    /// have lapsed).
    #[getter]
    fn enabled(&self) -> bool {
        self.inner.is_enabled()
    }

    /// The generator's figures, and its lease's, as samples of the fleet's
    /// series: a list of `Sample(name, type, labels, value)`
    /// (testdata/vectors/metrics.json's names).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut s = self.inner.stats().samples();
        if let Some(cell) = &self.lease {
            s.extend(crate::lease::samples(cell));
        }
        samples_to_py(py, s)
    }

    /// Whether it issues now — what a readiness probe returns:
    /// `Readiness(ready=True, reason=None)`, or `ready=False` with why
    /// (disabled; a lease starting, lapsed, lost or released).
    fn readiness<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let why = match &self.lease {
            Some(cell) => crate::lease::not_ready(cell),
            None => None,
        }
        .or_else(|| (!self.inner.is_enabled()).then(|| "disabled".to_owned()))
        .or_else(|| crate::forked_since(self.forks).then(|| "forked".to_owned()));
        types(py, "Readiness")?.call1((why.is_none(), why))
    }

    fn __repr__(&self) -> String {
        format!(
            "NonceGenerator(machine_id={}, enabled={})",
            self.inner.machine_id().get(),
            if self.inner.is_enabled() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// One thread's handle on a generator (`NonceGenerator.local()`).
#[pyclass(unsendable, module = "nonceforge", name = "LocalNonces")]
pub struct LocalNonces {
    inner: RefCell<nonceforge::nonce::LocalNonces>,
    forks: u64,
}

#[pymethods]
impl LocalNonces {
    /// A counter nonce.
    #[pyo3(signature = (bits=96))]
    fn counter<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        local_call!(self, py, bits, counter_64, counter_96, counter_128)
    }

    /// A sortable nonce (strictly increasing per handle).
    #[pyo3(signature = (bits=128))]
    fn sortable<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        local_call!(self, py, bits, sortable_64, sortable_96, sortable_128)
    }

    /// An encrypted nonce.
    #[pyo3(signature = (bits=128))]
    fn encrypted<'py>(&self, py: Python<'py>, bits: u32) -> PyResult<Bound<'py, PyBytes>> {
        local_call!(self, py, bits, encrypted_64, encrypted_96, encrypted_128)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Generator>()?;
    m.add_class::<LocalNonces>()?;
    m.add(
        "DEFAULT_EPOCH_UNIX_MS",
        nonceforge::layout::DEFAULT_EPOCH_UNIX_MS,
    )?;
    m.add("MAX_MACHINE_ID", MachineId::MAX)?;
    Ok(())
}
