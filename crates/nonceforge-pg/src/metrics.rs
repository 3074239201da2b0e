//! `nonceforge_metrics()`: the fleet's metric series (testdata/vectors/metrics.json,
//! docs/operations.md) for this server, readable by `pg_monitor` — what
//! postgres_exporter publishes with `docs/ops/postgres_exporter.yml`.
//!
//! The generator's figures are kept in shared memory beside the nonce state
//! ([`Stats`]): values issued, in stripes of their own cache line (a backend
//! adds to its stripe, picked by its backend number, so backends do not share
//! a line on the hot path); waits and refusals where they happen, on paths
//! that already wait or fail. The lease's figures are the lease crate's own
//! (`Lease::metrics`): the keeper renders them into shared memory every time
//! it wakes (`lease`), and the function reads them back under a sequence lock.
//! The names, labels and help come from the core and the lease crate: written
//! once, there.

use crate::server::{self, SharedState};
use crate::settings;
use nonceforge_core::Bits;
use nonceforge_core::layout::{DEFAULT_EPOCH_UNIX_MS, TIMESTAMP_END};
use nonceforge_core::nonce::series::{self, MetricDef, Sample};
use nonceforge_lease::LEASE_METRICS;
use pgrx::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering, fence};

/// Stripes of the issued counts: backends share one when their numbers are
/// this far apart.
const STRIPES: usize = 16;
/// Bytes of the lease's rendered figures in shared memory (24 lines of about
/// 60 bytes at most).
const LEASE_TEXT_WORDS: usize = 512;

/// Why a nonce call was refused (the `reason` label, in
/// [`series::REFUSAL_REASONS`]' order).
#[derive(Clone, Copy)]
pub(crate) enum Refusal {
    /// No machine id (not set, no grant yet, the keeper cannot run), or the
    /// server is in recovery.
    Disabled = 0,
    /// The lease may have lapsed, was lost or released.
    Deadline = 1,
    /// The epoch's 42-bit timestamp range has ended.
    EpochExhausted = 2,
    /// A tick counter ran out.
    CounterExhausted = 3,
    /// `encrypted_nonce()` without a key.
    NoKey = 4,
}

/// The issued counts of one stripe: (counter, sortable) × (64, 96, 128).
#[repr(align(64))]
struct Stripe([AtomicU64; 6]);

/// The generator's figures, in shared memory (atomics only).
pub(crate) struct Stats {
    issued: [Stripe; STRIPES],
    throttled: AtomicU64,
    throttled_us: AtomicU64,
    refused: [AtomicU64; 5],
    /// The lease's samples as text (`name \t label=value \t value` lines),
    /// written by the keeper under `lease_seq` (odd while it writes).
    lease_seq: AtomicU64,
    lease_len: AtomicU64,
    lease_text: [AtomicU64; LEASE_TEXT_WORDS],
}

impl Stats {
    pub(crate) fn new() -> Self {
        Stats {
            issued: std::array::from_fn(|_| Stripe(Default::default())),
            throttled: AtomicU64::new(0),
            throttled_us: AtomicU64::new(0),
            refused: Default::default(),
            lease_seq: AtomicU64::new(0),
            lease_len: AtomicU64::new(0),
            lease_text: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// `n` values of `bits` issued by a backend on `stripe`; `sortable` for
    /// sortable nonces (counter and encrypted nonces count as `counter`).
    #[inline]
    pub(crate) fn issued(&self, stripe: usize, sortable: bool, bits: Bits, n: u64) {
        let i = usize::from(sortable) * 3 + bits as usize;
        self.issued[stripe % STRIPES].0[i].fetch_add(n, Ordering::Relaxed);
    }

    /// A wait for the clock of `us` microseconds.
    pub(crate) fn throttled(&self, us: u64) {
        self.throttled.fetch_add(1, Ordering::Relaxed);
        self.throttled_us.fetch_add(us, Ordering::Relaxed);
    }

    /// The keeper's figures, rendered: replaces what was there.
    pub(crate) fn publish_lease(&self, text: &str) {
        let bytes = &text.as_bytes()[..text.len().min(LEASE_TEXT_WORDS * 8)];
        let seq = self.lease_seq.load(Ordering::Relaxed);
        self.lease_seq.store(seq + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (word, chunk) in self.lease_text.iter().zip(bytes.chunks(8)) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            word.store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
        self.lease_len.store(bytes.len() as u64, Ordering::Relaxed);
        self.lease_seq.store(seq + 2, Ordering::Release);
    }

    /// The keeper's last rendering (empty before the first, and if no
    /// consistent copy could be read: a keeper stopped in the middle of a
    /// write never finishes it, and a reader must not spin forever).
    fn lease_text(&self) -> String {
        for _ in 0..100_000 {
            let before = self.lease_seq.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let len = (self.lease_len.load(Ordering::Relaxed) as usize).min(LEASE_TEXT_WORDS * 8);
            let mut bytes = Vec::with_capacity(len + 8);
            for word in &self.lease_text[..len.div_ceil(8)] {
                bytes.extend_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
            }
            fence(Ordering::Acquire);
            if self.lease_seq.load(Ordering::Relaxed) == before {
                bytes.truncate(len);
                return String::from_utf8(bytes).unwrap_or_default();
            }
        }
        String::new()
    }
}

/// Counts a refusal of a nonce call (on the path that raises it).
pub(crate) fn refused(why: Refusal) {
    if let Some(s) = server::preloaded_state() {
        s.stats.refused[why as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// One series: its metric, its labels, its value.
type Row = (MetricDef, Vec<(String, String)>, f64);

/// The lease's samples as the keeper publishes them.
pub(crate) fn render_lease(samples: &[Sample]) -> String {
    let mut out = String::with_capacity(samples.len() * 60);
    for s in samples {
        let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!(
            "{}\t{}\t{}\n",
            s.def.name,
            labels.join(","),
            s.value
        ));
    }
    out
}

/// The lines [`render_lease`] wrote, back as rows (lines that do not parse,
/// or name no lease metric, are skipped).
fn parse_lease(text: &str) -> Vec<Row> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split('\t');
            let name = parts.next()?;
            let def = *LEASE_METRICS.iter().find(|d| d.name == name)?;
            let labels = parts.next()?;
            let value = parts.next()?.parse().ok()?;
            let labels = labels
                .split(',')
                .filter(|l| !l.is_empty())
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            Some((def, labels, value))
        })
        .collect()
}

/// The generator's samples for this server, from shared memory.
fn generator_samples(s: &SharedState) -> Vec<Row> {
    let st = &s.stats;
    let mut out = Vec::with_capacity(24);
    let owned = |labels: &[(&str, &str)]| -> Vec<(String, String)> {
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    for b in Bits::ALL {
        let bits = b.bits().to_string();
        for (sortable, kind) in [(false, "counter"), (true, "sortable")] {
            let i = usize::from(sortable) * 3 + b as usize;
            let n: u64 = st
                .issued
                .iter()
                .map(|s| s.0[i].load(Ordering::Relaxed))
                .sum();
            out.push((
                series::ISSUED,
                owned(&[("kind", kind), ("bits", &bits)]),
                n as f64,
            ));
        }
    }
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
    out.push((series::THROTTLED, vec![], load(&st.throttled)));
    out.push((series::THROTTLED_MICROS, vec![], load(&st.throttled_us)));
    for (reason, n) in series::REFUSAL_REASONS.iter().zip(&st.refused) {
        out.push((series::REFUSALS, owned(&[("reason", reason)]), load(n)));
    }
    let wall = server::wall_ms();
    let secs = |ms: u64| ms as f64 / 1000.0;
    out.push((
        series::CLOCK_BEHIND,
        vec![],
        secs(s.newest_ms().saturating_sub(wall)),
    ));
    out.push((
        series::EPOCH_HEADROOM,
        vec![],
        secs((DEFAULT_EPOCH_UNIX_MS + TIMESTAMP_END).saturating_sub(wall)),
    ));
    // SAFETY: reads a flag in shared memory.
    let in_recovery = unsafe { pgrx::pg_sys::RecoveryInProgress() };
    let enabled = if settings::lease_mode() {
        let until = s.lease_until_ms.load(Ordering::SeqCst);
        out.push((
            series::DEADLINE_HEADROOM,
            vec![],
            secs(until.saturating_sub(wall)),
        ));
        until >= s.now_ms()
    } else {
        settings::fixed_machine_id().is_some()
    };
    let enabled = enabled && !in_recovery && !s.is_broken();
    out.push((series::ENABLED, vec![], if enabled { 1.0 } else { 0.0 }));
    out
}

/// The fleet's metric series for this server (docs/operations.md): the
/// generator's — values issued by kind and size, waits, refusals by reason,
/// clock and headroom — and, with `nonceforge.machine_id = 'lease'`, the
/// lease's. Counters count since the server started. Readable by `pg_monitor`
/// (and superusers): `GRANT pg_monitor TO` the exporter's role.
#[pg_extern(volatile, parallel_safe)]
fn nonceforge_metrics() -> TableIterator<
    'static,
    (
        name!(metric, String),
        name!(labels, pgrx::JsonB),
        name!(value, f64),
        name!(metric_type, String),
        name!(help, String),
    ),
> {
    let s = server::state("nonceforge_metrics()");
    let mut rows = generator_samples(s);
    if settings::lease_mode() {
        rows.extend(parse_lease(&s.stats.lease_text()));
    }
    TableIterator::new(rows.into_iter().map(|(def, labels, value)| {
        let labels: serde_json::Map<String, serde_json::Value> = labels
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::String(v)))
            .collect();
        (
            def.name.to_owned(),
            pgrx::JsonB(serde_json::Value::Object(labels)),
            value,
            def.kind.to_owned(),
            def.help.to_owned(),
        )
    }))
}

extension_sql!(
    r#"
-- Operators' figures: pg_monitor's (the role monitoring tools are given), not PUBLIC's.
REVOKE EXECUTE ON FUNCTION @extschema@.nonceforge_metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION @extschema@.nonceforge_metrics() TO pg_monitor;
"#,
    name = "metrics_grants",
    requires = [nonceforge_metrics]
);

#[cfg(test)]
mod tests {
    use super::*;
    use nonceforge_core::nonce::series::{labelled, sample};

    #[test]
    fn lease_figures_read_back_as_rendered() {
        let samples = vec![
            labelled(LEASE_METRICS[0], "state", "held", 1.0),
            sample(LEASE_METRICS[2], 12.0),
            sample(LEASE_METRICS[12], 0.0015),
        ];
        let rows = parse_lease(&render_lease(&samples));
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].0, LEASE_METRICS[0]);
        assert_eq!(rows[0].1, vec![("state".to_owned(), "held".to_owned())]);
        assert_eq!(rows[1].2, 12.0);
        assert_eq!(rows[2].2, 0.0015);
        assert!(parse_lease("nonceforge_nope\t\t1\ngarbage\n").is_empty());
    }
}
