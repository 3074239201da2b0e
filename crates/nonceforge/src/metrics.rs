//! A generator's figures ([`NonceGenerator::stats`](crate::NonceGenerator::stats))
//! through the [`metrics`](https://docs.rs/metrics) facade, the way Rust
//! services export numbers (Prometheus, StatsD, OpenTelemetry through their
//! `metrics` exporters). Behind the `metrics` feature, off by default; the
//! hot path is the same with it on or off: the figures are kept anyway, and
//! [`record`] copies a snapshot into the recorder — call it from the
//! exporter's scrape or a timer.
//!
//! The names, types and labels are the fleet's (every face exports the same:
//! `testdata/vectors/metrics.json`; docs/operations.md says what each means
//! and which alerts to set).
//!
//! ```
//! use nonceforge::{MachineId, NonceGenerator};
//! let generator = NonceGenerator::builder(MachineId::new(7)?).build()?;
//! generator.counter_96()?;
//! nonceforge::metrics::describe();
//! // With an exporter installed, this updates its figures; without one it
//! // does nothing.
//! nonceforge::metrics::record(&generator.stats(), &[("service", "billing".to_owned())]);
//! # Ok::<(), nonceforge::Error>(())
//! ```

use crate::GeneratorStats;
use metrics::{Label, counter, describe_counter, describe_gauge, gauge};

pub use crate::nonce::series::{
    CLOCK_BEHIND, DEADLINE_HEADROOM, ENABLED, EPOCH_HEADROOM, GENERATOR_METRICS, ISSUED, MetricDef,
    REFUSAL_REASONS, REFUSALS, Sample, THROTTLED, THROTTLED_MICROS,
};

/// Registers each metric's help text and type with the recorder (once, at
/// start-up; recording without it works too).
pub fn describe() {
    describe_defs(&GENERATOR_METRICS);
}

/// Registers the nonce sanitizer's metrics ([`record_sanitizer`]).
pub fn describe_sanitizer() {
    describe_defs(&crate::aead::SANITIZER_METRICS);
}

/// Copies the nonce sanitizer's figures for the process
/// ([`registry_stats`](crate::aead::registry_stats): seals checked, refusals
/// by violation, keys held, their memory) into the installed recorder. It
/// takes none of the keys' locks: call it from every scrape.
pub fn record_sanitizer(labels: &[(&'static str, String)]) {
    record_samples(&crate::aead::registry_stats().samples(), labels);
}

/// Registers the help texts of `defs` (the lease crate's metrics use it too).
pub fn describe_defs(defs: &[MetricDef]) {
    for d in defs {
        match d.kind {
            "counter" => describe_counter!(d.name, d.help),
            _ => describe_gauge!(d.name, d.help),
        }
    }
}

/// `labels` plus `extra`, as the facade takes them.
pub fn labels(labels: &[(&'static str, String)], extra: &[(&'static str, String)]) -> Vec<Label> {
    labels
        .iter()
        .chain(extra)
        .map(|(k, v)| Label::new(*k, v.clone()))
        .collect()
}

/// Copies `stats` into the installed recorder, each series carrying
/// `labels` (say, the service or the generator's role) beside its own.
/// Counters are set to their absolute values, so calling it again (from
/// each scrape, or a timer) is how they move.
pub fn record(stats: &GeneratorStats, labels: &[(&'static str, String)]) {
    record_samples(&stats.samples(), labels);
}

/// Copies samples into the installed recorder (the lease crate's too).
pub fn record_samples(samples: &[Sample], labels: &[(&'static str, String)]) {
    for s in samples {
        let all = self::labels(labels, &s.labels);
        match s.def.kind {
            "counter" => counter!(s.def.name, all).absolute(s.value as u64),
            _ => gauge!(s.def.name, all).set(s.value),
        }
    }
}
