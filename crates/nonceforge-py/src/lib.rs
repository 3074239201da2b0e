//! The Rust side of the `nonceforge` Python package: PyO3 bindings over the
//! core crate and the lease crate, one module per capability (nonces,
//! time-prefixed ids, external ids, the sanitizer's drop-ins, leases, the
//! fleet's metrics). The Python in python/nonceforge/ shapes what is not hot
//! (leases' asyncio helpers and callbacks, OpenTelemetry) and owns the
//! exceptions; the classes called once a value are native, so a call costs
//! one PyO3 method call and nothing more.
//!
//! Every argument is checked here with `TypeError`/`ValueError` naming it; a
//! panic surfaces as PyO3's `PanicException`, never an abort. Calls that wait
//! (leases) or work on large buffers release the GIL.

mod aead;
mod extid;
mod lease;
mod metrics;
mod nonce;
mod records;
mod uuid;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};
use std::borrow::Cow;

// The exceptions are classes of nonceforge/_errors.py (so Python code, the
// stubs and `except` clauses see one hierarchy); imported when first raised.
pyo3::import_exception!(nonceforge._errors, NonceforgeError);
pyo3::import_exception!(nonceforge._errors, DisabledError);
pyo3::import_exception!(nonceforge._errors, ClockBehindError);
pyo3::import_exception!(nonceforge._errors, ExhaustedError);
pyo3::import_exception!(nonceforge._errors, NonceReuseError);
pyo3::import_exception!(nonceforge._errors, UnknownIdError);
pyo3::import_exception!(nonceforge._errors, InvalidTag);

/// A core error as the Python exception of the same meaning: a refusal to
/// issue (`DisabledError`, `ClockBehindError`, `ExhaustedError`), a nonce
/// reuse (`NonceReuseError`), a forged message (`InvalidTag`), otherwise a
/// bad argument (`ValueError`, the core's text naming the rule).
pub(crate) fn core_err(e: nonceforge::Error) -> PyErr {
    use nonceforge::Error as E;
    match e {
        E::Disabled => DisabledError::new_err(e.to_string()),
        E::ClockBehind { .. } => ClockBehindError::new_err(e.to_string()),
        E::EpochExhausted { .. } | E::CounterExhausted { .. } => {
            ExhaustedError::new_err(e.to_string())
        }
        E::NonceReuse(_) => NonceReuseError::new_err(e.to_string()),
        E::Aead {
            operation: "open", ..
        } => InvalidTag::new_err(()),
        E::SelfCheckFailed { .. } | E::Aead { .. } => NonceforgeError::new_err(e.to_string()),
        // In Python's words (the core's name the Rust builder's `.key(...)`).
        E::NoKey => PyValueError::new_err(
            "encrypted nonces need a base key: pass key= (bytes, at least 32 of them) to NonceGenerator",
        ),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// `ValueError("{name} {rule}")`.
pub(crate) fn bad_value(name: &str, rule: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{name} {rule}"))
}

/// The bytes of a bytes-like argument: `bytes` borrowed, `bytearray` and
/// anything else with the buffer protocol (memoryview, array, numpy) copied
/// (the stable ABI of 3.9 has no buffer API; `memoryview(x).tobytes()` is the
/// portable way). Anything else: `TypeError` naming the argument.
pub(crate) fn bytes_like<'a>(name: &str, obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<pyo3::types::PyString>() {
        return Err(type_error(name, "a bytes-like object", obj));
    }
    let view = pyo3::types::PyMemoryView::from(obj)
        .map_err(|_| type_error(name, "a bytes-like object", obj))?;
    Ok(Cow::Owned(
        view.call_method0("tobytes")?.extract::<Vec<u8>>()?,
    ))
}

/// A key argument's bytes, copied into memory that is wiped when dropped
/// (the caller's own object is the caller's to clear).
pub(crate) fn secret_bytes(
    name: &str,
    obj: &Bound<'_, PyAny>,
) -> PyResult<zeroize::Zeroizing<Vec<u8>>> {
    let mut b = bytes_like(name, obj)?;
    let out = zeroize::Zeroizing::new(b.to_vec());
    if let Cow::Owned(v) = &mut b {
        zeroize::Zeroize::zeroize(v);
    }
    Ok(out)
}

/// `TypeError("{name} must be {what}, not {type}")`, as CPython words it.
pub(crate) fn type_error(name: &str, what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("{name} must be {what}, not {ty}"))
}

/// An integer argument in `0..=max`: `TypeError` for a non-integer (a bool
/// too: `True` is not a count), `ValueError` naming the range otherwise.
pub(crate) fn int_in(name: &str, obj: &Bound<'_, PyAny>, max: u64) -> PyResult<u64> {
    if obj.is_instance_of::<pyo3::types::PyBool>() || !obj.is_instance_of::<pyo3::types::PyInt>() {
        return Err(type_error(name, "an int", obj));
    }
    match obj.extract::<u64>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(bad_value(name, format!("must be in 0..={max}, got {obj}"))),
    }
}

/// fork()s this process is a child of, counted by `_after_fork_in_child`
/// (python/nonceforge/__init__.py registers it with `os.register_at_fork`).
/// A generator remembers the count it was made under and refuses to issue
/// under another: a forked child (a gunicorn or Celery worker of a preloaded
/// app, multiprocessing's fork) would otherwise draw the parent's values
/// under the parent's machine id. One relaxed load a call.
static FORKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub(crate) fn forks() -> u64 {
    FORKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether this process forked since the count `made_under` was read.
#[inline(always)]
pub(crate) fn forked_since(made_under: u64) -> bool {
    forks() != made_under
}

/// A generator's (or handle's) refusal in a process forked since it was made.
#[inline(always)]
pub(crate) fn same_process(made_under: u64) -> PyResult<()> {
    if forked_since(made_under) {
        return Err(forked_err());
    }
    Ok(())
}

/// Called in the child after fork(): every generator made before it stops.
#[pyfunction]
fn _after_fork_in_child() {
    FORKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// The refusal of a generator made before this process forked.
#[cold]
fn forked_err() -> PyErr {
    DisabledError::new_err(
        "nonceforge: this generator was made before the process forked; a forked child must make its own \
         (with its own machine id: a lease taken in the child), or it would repeat the parent's values",
    )
}

/// Seals and opens from this size up release the GIL (below it, handing the
/// GIL over costs more than the work).
pub(crate) const RELEASE_GIL_FROM: usize = 16 * 1024;

#[pymodule(gil_used = false)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    records::register(m)?;
    nonce::register(m)?;
    uuid::register(m)?;
    extid::register(m)?;
    aead::register(m)?;
    lease::register(m)?;
    metrics::register(m)?;
    Ok(())
}
