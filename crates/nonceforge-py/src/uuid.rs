//! Time-prefixed ids as the standard library's `uuid.UUID`: UUIDv7 (RFC 9562,
//! monotonic within the process as CPython 3.14's `uuid.uuid7()` is), tuid6
//! (pg_tuid's), and the 32-byte stuid; their compact text and timestamps.

use crate::{bytes_like, core_err, type_error};
use nonceforge::uuid::UuidV7Generator;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyString, PyType};
use std::sync::Mutex;

/// One UUIDv7 generator for the process: ids from every thread increase
/// (the core's per-thread `uuidv7()` only within a thread).
static V7: Mutex<Option<UuidV7Generator>> = Mutex::new(None);

fn next_v7() -> [u8; 16] {
    let mut g = V7.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(UuidV7Generator::new).generate()
}

/// How a `uuid.UUID` is made without running its `__init__` (which parses
/// its arguments: most of `UUID(int=…)`'s cost): allocated as `object.__new__`
/// does and its two slots set, as `__init__` sets them. Checked once: when
/// the class is not the slotted one this relies on, `UUID(int=…)` is called.
struct UuidClass {
    class: Py<PyType>,
    from_bytes: Py<PyAny>,
    big: Py<PyString>,
    fast: bool,
    int: Py<PyString>,
    is_safe: Py<PyString>,
    unknown: Py<PyAny>,
}

static UUID_CLASS: PyOnceLock<UuidClass> = PyOnceLock::new();

fn uuid_class(py: Python<'_>) -> PyResult<&UuidClass> {
    UUID_CLASS.get_or_try_init(py, || {
        let m = py.import("uuid")?;
        let class = m.getattr("UUID")?.cast_into::<PyType>()?;
        let slots: Vec<String> = class
            .getattr("__slots__")
            .and_then(|s| s.extract())
            .unwrap_or_default();
        let fast = slots.iter().any(|s| s == "int") && slots.iter().any(|s| s == "is_safe");
        Ok::<_, PyErr>(UuidClass {
            class: class.unbind(),
            from_bytes: py
                .get_type::<pyo3::types::PyInt>()
                .getattr("from_bytes")?
                .unbind(),
            big: PyString::intern(py, "big").unbind(),
            fast,
            int: PyString::intern(py, "int").unbind(),
            is_safe: PyString::intern(py, "is_safe").unbind(),
            unknown: m.getattr("SafeUUID")?.getattr("unknown")?.unbind(),
        })
    })
}

/// A 128-bit value as a Python int: `int.from_bytes(b, "big")`, one call to
/// CPython's own byte-array conversion. (The stable ABI has no C call that
/// takes 16 bytes before 3.13; PyO3's conversion there makes five objects
/// and two operations, and PyLong_FromString on 32 hex digits cost a fifth
/// of a uuid7(): bench/RESULTS.md.)
fn int_of<'py>(py: Python<'py>, c: &UuidClass, b: &[u8; 16]) -> PyResult<Bound<'py, PyAny>> {
    c.from_bytes
        .bind(py)
        .call1((PyBytes::new(py, b), c.big.bind(py)))
}

/// `uuid.UUID(bytes=b)`.
pub(crate) fn to_uuid<'py>(py: Python<'py>, b: &[u8; 16]) -> PyResult<Bound<'py, PyAny>> {
    let c = uuid_class(py)?;
    let int = int_of(py, c, b)?;
    if !c.fast {
        let kw = pyo3::types::PyDict::new(py);
        kw.set_item("int", int)?;
        return c.class.bind(py).call((), Some(&kw));
    }
    // SAFETY: `class` is uuid.UUID, a heap type whose tp_alloc is
    // PyType_GenericAlloc (what object.__new__ calls); the new reference is
    // owned by the Bound at once. PyObject_GenericSetAttr writes through the
    // class's slot descriptors `int` and `is_safe` (checked in __slots__
    // above), as object.__setattr__ does in UUID.__init__; each pointer passed
    // is a live object held for the call.
    unsafe {
        let raw = ffi::PyType_GenericAlloc(c.class.as_ptr().cast::<ffi::PyTypeObject>(), 0);
        if raw.is_null() {
            return Err(PyErr::fetch(py));
        }
        let obj = Bound::from_owned_ptr(py, raw);
        if ffi::PyObject_GenericSetAttr(obj.as_ptr(), c.int.as_ptr(), int.as_ptr()) < 0
            || ffi::PyObject_GenericSetAttr(obj.as_ptr(), c.is_safe.as_ptr(), c.unknown.as_ptr())
                < 0
        {
            return Err(PyErr::fetch(py));
        }
        Ok(obj)
    }
}

/// The 16 bytes of a `uuid.UUID`, `bytes` or `str` (any text `uuid.UUID`
/// reads, or the 22-character compact form).
pub(crate) fn uuid_bytes(name: &str, id: &Bound<'_, PyAny>) -> PyResult<[u8; 16]> {
    // bytes and str first: isinstance(x, uuid.UUID) of anything else reads
    // its __class__ (a third of a unix_ms(bytes) call).
    if id.is_instance_of::<PyBytes>() || id.is_instance_of::<pyo3::types::PyByteArray>() {
        let b = bytes_like(name, id)?;
        return <[u8; 16]>::try_from(&*b)
            .map_err(|_| crate::bad_value(name, format!("must be 16 bytes, got {}", b.len())));
    }
    if let Ok(s) = id.cast::<PyString>() {
        let s = &*s.to_cow()?;
        if s.len() == 22 {
            return nonceforge::uuid::from_compact::<16>(s).map_err(core_err);
        }
        return nonceforge::extid::ExtId::parse_uuid(s)
            .map(|e| e.0)
            .map_err(core_err);
    }
    let py = id.py();
    let c = uuid_class(py)?;
    if id.get_type().is(c.class.bind(py)) || id.is_instance(c.class.bind(py))? {
        // PyO3's conversion (a mask, a shift and two C calls) measured
        // faster than int.to_bytes(16, "big") through the method (157 ns
        // against 380 for unix_ms(uuid) on the dev VM).
        let v: u128 = id.getattr(c.int.bind(py))?.extract()?;
        return Ok(v.to_be_bytes());
    }
    Err(type_error(name, "a uuid.UUID, str or 16 bytes", id))
}

/// A new UUIDv7 (`uuid.UUID`, version 7): Unix ms, a 12-bit fraction of the
/// ms, 62 random bits; increasing within the process.
#[pyfunction]
fn uuid7(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_uuid(py, &next_v7())
}

/// `uuid7()`'s 16 bytes (the fastest form).
#[pyfunction]
fn uuid7_bytes(py: Python<'_>) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &next_v7())
}

/// `uuid7()` in the canonical text form.
#[pyfunction]
fn uuid7_str() -> String {
    nonceforge::extid::ExtId(next_v7()).to_uuid_string()
}

/// A new tuid6 (`uuid.UUID`; pg_tuid's layout: Unix ms, 80 random bits, no
/// version bits).
#[pyfunction]
fn tuid6(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    to_uuid(py, &nonceforge::uuid::tuid6())
}

/// A new stuid: 32 bytes, Unix µs then 192 random bits (pg_tuid's).
#[pyfunction]
fn stuid(py: Python<'_>) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &nonceforge::uuid::stuid())
}

/// A 16- or 32-byte id as 22 or 43 characters of base64url (pg_tuid's
/// compact form).
#[pyfunction]
fn to_compact(id: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = uuid_bytes("id", id) {
        return Ok(nonceforge::uuid::to_compact(&b));
    }
    let b = bytes_like("id", id)?;
    if b.len() != 32 {
        return Err(crate::bad_value(
            "id",
            format!(
                "must be a uuid.UUID, or 16 or 32 bytes, got {} bytes",
                b.len()
            ),
        ));
    }
    Ok(nonceforge::uuid::to_compact(&b))
}

/// The id a compact text stands for: a `uuid.UUID` (22 characters) or a
/// stuid's 32 bytes (43).
#[pyfunction]
fn from_compact<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    if text.len() == 43 {
        let b = nonceforge::uuid::from_compact::<32>(text).map_err(core_err)?;
        return Ok(PyBytes::new(py, &b).into_any());
    }
    let b = nonceforge::uuid::from_compact::<16>(text).map_err(core_err)?;
    to_uuid(py, &b)
}

/// The Unix milliseconds in the first 48 bits of a UUIDv7 or tuid6.
#[pyfunction]
fn unix_ms(id: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(nonceforge::uuid::unix_ms(&uuid_bytes("id", id)?))
}

/// The Unix microseconds in a stuid's first 64 bits.
#[pyfunction]
fn stuid_unix_us(id: &Bound<'_, PyAny>) -> PyResult<u64> {
    let b = bytes_like("id", id)?;
    let b: &[u8; 32] = (&*b)
        .try_into()
        .map_err(|_| crate::bad_value("id", format!("must be 32 bytes, got {}", b.len())))?;
    Ok(nonceforge::uuid::stuid_unix_us(b))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(uuid7, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(uuid7_str, m)?)?;
    m.add_function(wrap_pyfunction!(tuid6, m)?)?;
    m.add_function(wrap_pyfunction!(stuid, m)?)?;
    m.add_function(wrap_pyfunction!(to_compact, m)?)?;
    m.add_function(wrap_pyfunction!(from_compact, m)?)?;
    m.add_function(wrap_pyfunction!(unix_ms, m)?)?;
    m.add_function(wrap_pyfunction!(stuid_unix_us, m)?)?;
    Ok(())
}
