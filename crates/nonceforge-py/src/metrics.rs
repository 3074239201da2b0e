//! The fleet's metric series (testdata/vectors/metrics.json) for Python:
//! samples as `nonceforge.Sample` tuples, the families' definitions for
//! python/nonceforge/otel.py, the sanitizer's process figures.

use nonceforge::nonce::series::Sample;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyModule};

static TYPES: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// A class of nonceforge/_types.py (the NamedTuples results come in).
pub(crate) fn types<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    TYPES
        .get_or_try_init(py, || py.import("nonceforge._types").map(Bound::unbind))?
        .bind(py)
        .getattr(name)
}

pub(crate) fn samples_to_py(py: Python<'_>, samples: Vec<Sample>) -> PyResult<Bound<'_, PyList>> {
    let class = types(py, "Sample")?;
    let out = PyList::empty(py);
    for s in samples {
        let labels = PyDict::new(py);
        for (k, v) in s.labels {
            labels.set_item(k, v)?;
        }
        out.append(class.call1((s.def.name, s.def.kind, labels, s.value))?)?;
    }
    Ok(out)
}

/// Every family a generator's, a lease's and the sanitizer's metrics give:
/// `(name, type, labels, help)`, in metrics.json's order (the core's and the
/// lease crate's tables, not restated).
#[pyfunction]
fn metric_defs() -> Vec<(&'static str, &'static str, Vec<&'static str>, &'static str)> {
    nonceforge::nonce::series::GENERATOR_METRICS
        .iter()
        .chain(nonceforge_lease::LEASE_METRICS.iter())
        .chain(nonceforge::aead::SANITIZER_METRICS.iter())
        .map(|d| (d.name, d.kind, d.labels.to_vec(), d.help))
        .collect()
}

/// The sanitizer's figures for the process (every key: seals checked,
/// refusals by violation, keys held, their memory), read without the keys'
/// locks.
#[pyfunction]
fn sanitizer_metrics(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    samples_to_py(py, nonceforge::aead::registry_stats().samples())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(metric_defs, m)?)?;
    m.add_function(wrap_pyfunction!(sanitizer_metrics, m)?)?;
    Ok(())
}
