//! A lease's figures ([`Lease::metrics`](crate::Lease::metrics)) through the
//! `metrics` facade, beside the generator's ([`nonceforge::metrics`]). Behind
//! the `metrics` feature, off by default. The names are the fleet's
//! (`testdata/vectors/metrics.json`; docs/operations.md).

use crate::LeaseMetrics;
use crate::metrics::LEASE_METRICS;
use nonceforge::metrics::{describe_defs, record_samples};

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
        record_samples(&self.samples(ready), labels);
    }
}
