//! The generator's and the lease's figures as JSON (`gen --stats`, `lease
//! acquire --json`): the numbers the metrics export (testdata/vectors/metrics.json,
//! docs/operations.md), one object.

use nonceforge::{Bits, GeneratorStats};
use nonceforge_lease::{Lease, LeaseMetrics};
use serde_json::{Value, json};

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A generator's figures.
pub fn generator(s: &GeneratorStats) -> Value {
    let by_bits = |f: &dyn Fn(Bits) -> u64| json!({"64": f(Bits::B64), "96": f(Bits::B96), "128": f(Bits::B128)});
    let r = &s.refused;
    json!({
        "machine_id": s.machine_id,
        "nonces_issued": {
            "counter": by_bits(&|b| s.counter_issued(b)),
            "sortable": by_bits(&|b| s.sortable_issued(b)),
        },
        "throttled": s.throttled,
        "throttled_us": s.throttled_for.as_micros() as u64,
        "refusals": {
            "disabled": r.disabled, "deadline": r.deadline,
            "epoch_exhausted": r.epoch_exhausted, "counter_exhausted": r.counter_exhausted,
            "no_key": r.no_key,
        },
        "clock_behind_ms": s.clock_behind.as_millis() as u64,
        "epoch_headroom_s": s.epoch_ends_in.as_secs(),
        "deadline_headroom_ms": s.deadline_in.map(|d| d.as_millis() as u64),
        "enabled": s.enabled,
    })
}

/// A lease's figures, with its readiness.
pub fn lease(l: &Lease) -> Value {
    let m: LeaseMetrics = l.metrics();
    let ready = l.readiness();
    let f = m.renewal_failures;
    json!({
        "state": m.state_name(),
        "ready": ready.is_ok(),
        "not_ready": ready.err().map(|e| e.to_string()),
        "machine_id": m.machine_id,
        "token": m.token,
        "floor_unix_ms": m.floor_unix_ms,
        "deadline_ms": ms(m.deadline_in()),
        "acquire_ms": ms(m.acquired_in),
        "start_wait_ms": ms(m.start_wait),
        "started_fast": m.started_fast,
        "renewals": m.renewals,
        "renewal_failures": {"unreachable": f.unreachable, "timeout": f.timeout, "store": f.store},
        "renewal_total_us": m.renewal_total.as_micros() as u64,
        "renewal_last_ms": m.renewal_last.map(ms),
        "renewal_max_ms": ms(m.renewal_max),
        "lapses": m.lapses,
        "lost_reason": m.lost_reason.map(|r| r.as_str()),
    })
}
