//! A lease's figures ([`Lease::metrics`](crate::Lease::metrics)) through the
//! `metrics` facade, beside the generator's ([`nonceforge::metrics`]). Behind
//! the `metrics` feature, off by default. The names are the fleet's
//! (`testdata/vectors/metrics.json`; docs/operations.md).

use crate::metrics::STATE_NAMES;
use crate::{LeaseMetrics, LostReason};
use metrics::{counter, gauge};
use nonceforge::metrics::{MetricDef, describe_defs, labels};

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

/// Every lease metric, in the order of `testdata/vectors/metrics.json`.
pub const LEASE_METRICS: [MetricDef; 16] = [
    def(
        "nonceforge_lease_state",
        "gauge",
        &["state"],
        "1 for the lease's state (held, lapsed, lost, released), 0 for the others.",
    ),
    def(
        "nonceforge_lease_ready",
        "gauge",
        &[],
        "1 while the lease lets its generators issue (held, past its start wait).",
    ),
    def(
        "nonceforge_lease_machine_id",
        "gauge",
        &[],
        "The machine id the lease holds (or last held).",
    ),
    def(
        "nonceforge_lease_token",
        "gauge",
        &[],
        "The grant's fencing token; it rises with every grant of the id.",
    ),
    def(
        "nonceforge_lease_floor_seconds",
        "gauge",
        &[],
        "Where the generators started above, in seconds since 1970.",
    ),
    def(
        "nonceforge_lease_deadline_seconds",
        "gauge",
        &[],
        "Time left until the lease's local deadline (0 unless held).",
    ),
    def(
        "nonceforge_lease_acquire_seconds",
        "gauge",
        &[],
        "How long the acquisition took.",
    ),
    def(
        "nonceforge_lease_start_wait_seconds",
        "gauge",
        &[],
        "How long the first value waited after the grant (the TTL and margin on a slow start).",
    ),
    def(
        "nonceforge_lease_started_fast",
        "gauge",
        &[],
        "1 when the grant started right above the store's floor.",
    ),
    def(
        "nonceforge_lease_renewals_total",
        "counter",
        &[],
        "Renewals that succeeded.",
    ),
    def(
        "nonceforge_lease_renewal_failures_total",
        "counter",
        &["failure"],
        "Renewals that failed (and were retried), by kind: unreachable, timeout, store.",
    ),
    def(
        "nonceforge_lease_renewal_microseconds_total",
        "counter",
        &[],
        "The successful renewals' round trips added up, in microseconds (with the renewals: the mean).",
    ),
    def(
        "nonceforge_lease_renewal_last_seconds",
        "gauge",
        &[],
        "The last successful renewal's round trip.",
    ),
    def(
        "nonceforge_lease_renewal_max_seconds",
        "gauge",
        &[],
        "The longest successful renewal's round trip.",
    ),
    def(
        "nonceforge_lease_lapses_total",
        "counter",
        &[],
        "Times the local deadline passed without a renewal (the generators stopped until one came).",
    ),
    def(
        "nonceforge_lease_lost",
        "gauge",
        &["lost_reason"],
        "1 under the reason the lease was lost (taken, evicted, store, rollback), 0 under the others.",
    ),
];

/// The reasons a lease is lost, as the `lost_reason` label gives them.
pub const LOST_REASONS: [LostReason; 4] = [
    LostReason::Taken,
    LostReason::Evicted,
    LostReason::StoreLostData,
    LostReason::StoreWentBack,
];

/// Registers the help texts of the lease's and the generator's metrics.
pub fn describe() {
    nonceforge::metrics::describe();
    describe_defs(&LEASE_METRICS);
}

impl LeaseMetrics {
    /// Copies these figures into the installed recorder, each series
    /// carrying `labels` beside its own; `ready` is [`Lease::readiness`]'s
    /// answer. Counters are set to their absolute values: call it again
    /// (from each scrape, or a timer) to move them.
    ///
    /// [`Lease::readiness`]: crate::Lease::readiness
    pub fn record(&self, ready: bool, labels: &[(&'static str, String)]) {
        let with = |extra: &[(&'static str, String)]| self::labels(labels, extra);
        let name = |i: usize| LEASE_METRICS[i].name;
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        for s in STATE_NAMES {
            gauge!(name(0), with(&[("state", s.into())])).set(flag(self.state_name() == s));
        }
        gauge!(name(1), with(&[])).set(flag(ready));
        gauge!(name(2), with(&[])).set(f64::from(self.machine_id));
        gauge!(name(3), with(&[])).set(self.token as f64);
        gauge!(name(4), with(&[])).set(self.floor_unix_ms as f64 / 1000.0);
        gauge!(name(5), with(&[])).set(self.deadline_in().as_secs_f64());
        gauge!(name(6), with(&[])).set(self.acquired_in.as_secs_f64());
        gauge!(name(7), with(&[])).set(self.start_wait.as_secs_f64());
        gauge!(name(8), with(&[])).set(flag(self.started_fast));
        counter!(name(9), with(&[])).absolute(self.renewals);
        for (kind, n) in self.renewal_failures.by_kind() {
            counter!(name(10), with(&[("failure", kind.into())])).absolute(n);
        }
        counter!(name(11), with(&[])).absolute(self.renewal_total.as_micros() as u64);
        if let Some(last) = self.renewal_last {
            gauge!(name(12), with(&[])).set(last.as_secs_f64());
        }
        gauge!(name(13), with(&[])).set(self.renewal_max.as_secs_f64());
        counter!(name(14), with(&[])).absolute(self.lapses);
        for r in LOST_REASONS {
            gauge!(name(15), with(&[("lost_reason", r.as_str().into())]))
                .set(flag(self.lost_reason == Some(r)));
        }
    }
}
