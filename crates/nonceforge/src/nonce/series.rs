//! The fleet's metric series (testdata/vectors/metrics.json): their names,
//! types and labels, and a generator's figures as samples of them — written
//! once here, for every exporter: the `metrics` facade (`nonceforge::metrics`,
//! a feature), the Node package's `metrics()`, the CLI.

use super::layout::Bits;
use super::stats::GeneratorStats;

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

/// A metric definition (for tables of them, as the lease crate's).
pub const fn def(
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

/// One value of one series: a metric's definition, the series' own labels
/// (beside the caller's), and the value (counters are whole numbers).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The metric.
    pub def: MetricDef,
    /// The series' labels, as named in [`MetricDef::labels`].
    pub labels: Vec<(&'static str, String)>,
    /// The value now (a counter's total since the start).
    pub value: f64,
}

/// A sample without labels of its own.
pub fn sample(def: MetricDef, value: f64) -> Sample {
    Sample {
        def,
        labels: Vec::new(),
        value,
    }
}

/// A sample with one label of its own.
pub fn labelled(def: MetricDef, label: &'static str, v: impl Into<String>, value: f64) -> Sample {
    Sample {
        def,
        labels: vec![(label, v.into())],
        value,
    }
}

impl GeneratorStats {
    /// These figures as samples of the fleet's series (what an exporter
    /// publishes; [`GENERATOR_METRICS`] lists them). The deadline's headroom
    /// is absent without a deadline.
    pub fn samples(&self) -> Vec<Sample> {
        let mut out = Vec::with_capacity(20);
        for b in Bits::ALL {
            let bits = b.bits().to_string();
            for (kind, n) in [
                ("counter", self.counter_issued(b)),
                ("sortable", self.sortable_issued(b)),
            ] {
                out.push(Sample {
                    def: ISSUED,
                    labels: vec![("kind", kind.into()), ("bits", bits.clone())],
                    value: n as f64,
                });
            }
        }
        out.push(sample(THROTTLED, self.throttled as f64));
        out.push(sample(
            THROTTLED_MICROS,
            self.throttled_for.as_micros() as f64,
        ));
        let r = &self.refused;
        let counts = [
            r.disabled,
            r.deadline,
            r.epoch_exhausted,
            r.counter_exhausted,
            r.no_key,
        ];
        for (reason, n) in REFUSAL_REASONS.iter().zip(counts) {
            out.push(labelled(REFUSALS, "reason", *reason, n as f64));
        }
        out.push(sample(CLOCK_BEHIND, self.clock_behind.as_secs_f64()));
        out.push(sample(EPOCH_HEADROOM, self.epoch_ends_in.as_secs_f64()));
        if let Some(left) = self.deadline_in {
            out.push(sample(DEADLINE_HEADROOM, left.as_secs_f64()));
        }
        out.push(sample(ENABLED, if self.enabled { 1.0 } else { 0.0 }));
        out
    }
}
