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

use crate::{Bits, GeneratorStats};
use metrics::{Label, counter, describe_counter, describe_gauge, gauge};

/// A metric's name, type (`counter` or `gauge`), label names and help text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDef {
    /// The name, Prometheus style (`nonceforge_…`, `_total` for counters).
    pub name: &'static str,
    /// `counter` or `gauge`.
    pub kind: &'static str,
    /// The label names its series carry (beside the caller's own labels).
    pub labels: &'static [&'static str],
    /// What it counts or shows.
    pub help: &'static str,
}

const fn def(
    name: &'static str,
    kind: &'static str,
    labels: &'static [&'static str],
    help: &'static str,
) -> MetricDef {
    MetricDef {
        name,
        kind,
        labels,
        help,
    }
}

/// Nonces issued, by kind and size.
pub const ISSUED: MetricDef = def(
    "nonceforge_nonces_issued_total",
    "counter",
    &["kind", "bits"],
    "Nonces issued, by kind (counter: counter and encrypted nonces, one tick counter per size) and size in bits.",
);
/// Waits for the clock.
pub const THROTTLED: MetricDef = def(
    "nonceforge_throttled_total",
    "counter",
    &[],
    "Calls that waited because a millisecond's counter ran out or for the clock to reach a timestamp.",
);
/// The time those waits took.
pub const THROTTLED_MICROS: MetricDef = def(
    "nonceforge_throttled_microseconds_total",
    "counter",
    &[],
    "Time spent in those waits, in microseconds (an integer counter in every face).",
);
/// Refusals by reason.
pub const REFUSALS: MetricDef = def(
    "nonceforge_refusals_total",
    "counter",
    &["reason"],
    "Calls refused, by reason: disabled, deadline (a lease lapsed, lost or released), epoch_exhausted, counter_exhausted, no_key.",
);
/// The wall clock behind the generator's.
pub const CLOCK_BEHIND: MetricDef = def(
    "nonceforge_clock_behind_seconds",
    "gauge",
    &[],
    "How far the wall clock is behind the generator's own clock (0 when it is not): a wall clock stepped back.",
);
/// Time left in the epoch's range.
pub const EPOCH_HEADROOM: MetricDef = def(
    "nonceforge_epoch_headroom_seconds",
    "gauge",
    &[],
    "Time left before the 42-bit timestamp range of the generator's epoch ends.",
);
/// Time left before the deadline.
pub const DEADLINE_HEADROOM: MetricDef = def(
    "nonceforge_deadline_headroom_seconds",
    "gauge",
    &[],
    "Time the generator may still issue before its lease's local deadline (absent without a lease).",
);
/// Whether it issues.
pub const ENABLED: MetricDef = def(
    "nonceforge_generator_enabled",
    "gauge",
    &[],
    "1 while the generator issues, 0 when disabled or past its deadline.",
);

/// Every generator metric, in the order of `testdata/vectors/metrics.json`.
pub const GENERATOR_METRICS: [MetricDef; 8] = [
    ISSUED,
    THROTTLED,
    THROTTLED_MICROS,
    REFUSALS,
    CLOCK_BEHIND,
    EPOCH_HEADROOM,
    DEADLINE_HEADROOM,
    ENABLED,
];

/// The refusal reasons, as the `reason` label gives them.
pub const REFUSAL_REASONS: [&str; 5] = [
    "disabled",
    "deadline",
    "epoch_exhausted",
    "counter_exhausted",
    "no_key",
];

/// Registers each metric's help text and type with the recorder (once, at
/// start-up; recording without it works too).
pub fn describe() {
    describe_defs(&GENERATOR_METRICS);
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
    let with = |extra: &[(&'static str, String)]| self::labels(labels, extra);
    for b in Bits::ALL {
        let bits = b.bits().to_string();
        counter!(
            ISSUED.name,
            with(&[("kind", "counter".into()), ("bits", bits.clone())])
        )
        .absolute(stats.counter_issued(b));
        counter!(
            ISSUED.name,
            with(&[("kind", "sortable".into()), ("bits", bits)])
        )
        .absolute(stats.sortable_issued(b));
    }
    counter!(THROTTLED.name, with(&[])).absolute(stats.throttled);
    counter!(THROTTLED_MICROS.name, with(&[])).absolute(stats.throttled_for.as_micros() as u64);
    let r = &stats.refused;
    let counts = [
        r.disabled,
        r.deadline,
        r.epoch_exhausted,
        r.counter_exhausted,
        r.no_key,
    ];
    for (reason, n) in REFUSAL_REASONS.iter().zip(counts) {
        counter!(REFUSALS.name, with(&[("reason", (*reason).into())])).absolute(n);
    }
    gauge!(CLOCK_BEHIND.name, with(&[])).set(stats.clock_behind.as_secs_f64());
    gauge!(EPOCH_HEADROOM.name, with(&[])).set(stats.epoch_ends_in.as_secs_f64());
    if let Some(left) = stats.deadline_in {
        gauge!(DEADLINE_HEADROOM.name, with(&[])).set(left.as_secs_f64());
    }
    gauge!(ENABLED.name, with(&[])).set(if stats.enabled { 1.0 } else { 0.0 });
}
