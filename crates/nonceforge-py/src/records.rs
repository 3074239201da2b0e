//! The small results the hot calls return (a decoded external id, a nonce's
//! fields) as native, immutable records that behave as named tuples do:
//! fields by name, unpacking, indexing, `len`, equality with each other and
//! with plain tuples, hashing, `_asdict()`. A NamedTuple made from Rust costs
//! more than the decode itself (its `__new__` is Python code: about 0.5 µs
//! against 0.2 µs for `decode_seq`, bench/RESULTS.md).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyTuple};

macro_rules! record {
    ($(#[$doc:meta])* $name:ident, $py_name:literal, { $($field:ident : $ty:ty),+ $(,)? }) => {
        $(#[$doc])*
        #[pyclass(frozen, get_all, module = "nonceforge", name = $py_name)]
        #[derive(Clone, PartialEq, Eq)]
        pub struct $name {
            $(pub $field: $ty),+
        }

        impl $name {
            fn tuple<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                let items: Vec<Bound<'py, PyAny>> =
                    vec![$(self.$field.clone().into_pyobject(py)?.to_owned().into_any()),+];
                PyTuple::new(py, items)
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new($($field: $ty),+) -> Self {
                Self { $($field),+ }
            }

            /// The field names, as a named tuple has them.
            #[classattr]
            fn _fields(py: Python<'_>) -> PyResult<Py<PyTuple>> {
                Ok(PyTuple::new(py, [$(stringify!($field)),+])?.unbind())
            }

            fn __len__(&self) -> usize {
                [$(stringify!($field)),+].len()
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
                self.tuple(py)?.as_any().try_iter()
            }

            fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                self.tuple(py)?.as_any().get_item(index)
            }

            fn __eq__<'py>(&self, py: Python<'py>, other: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
                if let Ok(o) = other.cast::<Self>() {
                    return Ok((o.get() == self).into_pyobject(py)?.to_owned().into_any().unbind());
                }
                if other.is_instance_of::<PyTuple>() {
                    return Ok(self.tuple(py)?.as_any().eq(other)?.into_pyobject(py)?.to_owned().into_any().unbind());
                }
                Ok(py.NotImplemented())
            }

            fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
                self.tuple(py)?.as_any().hash()
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                let mut parts = Vec::new();
                $(parts.push(format!(
                    "{}={}",
                    stringify!($field),
                    self.$field.clone().into_pyobject(py)?.to_owned().into_any().repr()?
                ));)+
                Ok(format!("{}({})", $py_name, parts.join(", ")))
            }

            /// The fields as a dict.
            fn _asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
                let d = PyDict::new(py);
                $(d.set_item(stringify!($field), self.$field.clone())?;)+
                Ok(d)
            }

            fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
                Ok((py.get_type::<Self>().into_any(), self.tuple(py)?))
            }
        }
    };
}

record!(
    /// An external id checked and decoded.
    Decoded, "Decoded", { seq: u64, rand: u64, key_version: u8 }
);

record!(
    /// An external id decoded without the check (`derived`: its random half
    /// is the one `encode(seq)` derives).
    DecodedUnverified, "DecodedUnverified", { seq: u64, rand: u64, key_version: u8, derived: bool }
);

record!(
    /// The fields of a counter or sortable nonce.
    NonceParts, "NonceParts", { unix_ms: u64, machine_id: u16, counter: u64 }
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Decoded>()?;
    m.add_class::<DecodedUnverified>()?;
    m.add_class::<NonceParts>()?;
    Ok(())
}
