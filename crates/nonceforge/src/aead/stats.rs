//! The nonce sanitizer's figures: a key's ([`GuardStats`], from
//! [`NonceGuard::stats`](super::NonceGuard::stats)) and the process's
//! ([`RegistryStats`], from [`registry_stats`](super::registry_stats)), and
//! the latter as the fleet's metric series (testdata/vectors/metrics.json,
//! "sanitizer_metrics"), written once here for every exporter.

use super::registry::RegistryStats;
use crate::nonce::series::{MetricDef, Sample, def, labelled, sample};

/// A key's detector's figures ([`NonceGuard::stats`](super::NonceGuard::stats)), read without locks or
/// the bias: reading them costs the sealing thread nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct GuardStats {
    /// Seals checked under the key: the seal budget the window's shards have
    /// taken (256 at a time per shard, so up to 256 per shard ahead of the
    /// seals made; a withdrawn seal's budget is kept for the next), plus, in
    /// counter mode, the highest counter sealed plus one (a counter that
    /// skipped values counts them).
    pub seals: u64,
    /// Refusals by kind, in [`ViolationKind`](super::ViolationKind)'s order (reuse, suspected,
    /// counter too old, seal limit, byte limit, replay): [`VIOLATION_KINDS`]
    /// names them.
    pub refused: [u64; 6],
    /// Bytes of memory the key's state holds now (its windows grow with use,
    /// up to the configured sizes).
    pub memory_bytes: usize,
}

impl GuardStats {
    /// Every refusal.
    pub fn refused_total(&self) -> u64 {
        self.refused.iter().sum()
    }
}

/// The refusal kinds as [`GuardStats::refused`] orders them and metrics label
/// them.
pub const VIOLATION_KINDS: [&str; 6] = [
    "reuse",
    "suspected",
    "counter_too_old",
    "seal_limit",
    "byte_limit",
    "replay",
];

/// Every sanitizer metric, in the order of `testdata/vectors/metrics.json`'s
/// `sanitizer_metrics`.
pub const SANITIZER_METRICS: [MetricDef; 4] = [
    def(
        "nonceforge_sanitizer_seals_total",
        "counter",
        &[],
        "Seals the nonce sanitizer checked, under every key, since the process started (counted as the seal budget is taken: up to 256 per shard ahead).",
    ),
    def(
        "nonceforge_sanitizer_refusals_total",
        "counter",
        &["violation"],
        "Seals and opens the nonce sanitizer refused, by violation: reuse (a repeated nonce caught), suspected, counter_too_old, seal_limit, byte_limit, replay.",
    ),
    def(
        "nonceforge_sanitizer_keys",
        "gauge",
        &[],
        "Keys whose state the nonce sanitizer holds (in use, or retained after their last instance).",
    ),
    def(
        "nonceforge_sanitizer_memory_bytes",
        "gauge",
        &[],
        "Bytes of memory those states hold (their windows grow with use, up to the configured sizes).",
    ),
];

impl RegistryStats {
    /// These figures as samples of the fleet's series ([`SANITIZER_METRICS`]).
    pub fn samples(&self) -> Vec<Sample> {
        let d = |i: usize| SANITIZER_METRICS[i];
        let mut out = Vec::with_capacity(9);
        out.push(sample(d(0), self.seals as f64));
        for (kind, n) in VIOLATION_KINDS.iter().zip(self.refused) {
            out.push(labelled(d(1), "violation", *kind, n as f64));
        }
        out.push(sample(d(2), self.keys as f64));
        out.push(sample(d(3), self.memory_bytes as f64));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::registry_stats;

    #[test]
    fn every_series_once_per_label_value() {
        let samples = registry_stats().samples();
        assert_eq!(samples.len(), 9);
        assert!(samples.iter().all(|s| s.value >= 0.0));
    }
}
