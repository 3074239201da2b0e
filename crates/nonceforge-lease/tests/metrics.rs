//! The lease's and its generator's figures through the `metrics` facade, on a
//! real Redis, read back from metrics-util's in-process recorder; the names,
//! types and labels against the fleet's file (testdata/vectors/metrics.json);
//! readiness through a slow start, a renewal and a loss.

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use nonceforge::Bits;
use nonceforge_lease::{LEASE_METRICS, Lease, LeaseOptions, LostReason, NotReady};
use nonceforge_testkit::{Redis, serial};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// (name, labels sorted as "k=v") → value.
type Seen = HashMap<(String, Vec<String>), DebugValue>;

fn record_and_read(f: impl FnOnce()) -> Seen {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        nonceforge_lease::describe_metrics();
        f()
    });
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let mut labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            ((key.name().to_owned(), labels), value)
        })
        .collect()
}

fn value(seen: &Seen, name: &str, labels: &[&str]) -> f64 {
    let mut want: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
    want.push("service=test".into());
    want.sort();
    match seen.get(&(name.to_owned(), want.clone())) {
        Some(DebugValue::Counter(n)) => *n as f64,
        Some(DebugValue::Gauge(g)) => g.into_inner(),
        other => panic!("{name} {want:?}: {other:?}"),
    }
}

#[test]
fn names_types_and_labels_are_the_fleets() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/vectors/metrics.json"
    ))
    .unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ours: Vec<_> = nonceforge::metrics::GENERATOR_METRICS
        .iter()
        .chain(&LEASE_METRICS)
        .map(|d| {
            serde_json::json!({"name": d.name, "type": d.kind, "labels": d.labels, "help": d.help})
        })
        .collect();
    assert_eq!(file["metrics"].as_array().unwrap(), &ours);
    let values = &file["label_values"];
    assert_eq!(
        values["reason"],
        serde_json::json!(nonceforge::metrics::REFUSAL_REASONS)
    );
    assert_eq!(
        values["state"],
        serde_json::json!(nonceforge_lease::STATE_NAMES)
    );
    let lost: Vec<&str> = nonceforge_lease::LOST_REASONS
        .iter()
        .map(|r| r.as_str())
        .collect();
    assert_eq!(values["lost_reason"], serde_json::json!(lost));
}

#[test]
fn a_lease_and_its_generator_through_the_facade() {
    let _g = serial();
    let redis = Redis::start();
    let url = redis.url();
    let opts = LeaseOptions {
        ttl: Duration::from_secs(2),
        renew_every: Some(Duration::from_millis(200)),
        namespace: "metrics".into(),
        ..Default::default()
    };
    let lease = Lease::acquire(&url, &opts).unwrap();
    // A slow start: not ready until the TTL and margin have passed.
    match lease.readiness() {
        // The TTL and margin (2.2 s), give or take the milliseconds since
        // the grant.
        Err(NotReady::Starting { starts_in }) => assert!(
            starts_in > Duration::from_secs(1) && starts_in <= Duration::from_millis(2300),
            "{starts_in:?}"
        ),
        other => panic!("{other:?}"),
    }
    let generator = lease.generator().unwrap();
    let t = Instant::now();
    while lease.readiness().is_err() || lease.metrics().renewals < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{:?}",
            lease.readiness()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..10 {
        generator.counter_96().unwrap();
    }
    generator.sortable_64().unwrap();
    let labels = [("service", "test".to_owned())];
    let m = lease.metrics();
    let seen = record_and_read(|| {
        nonceforge::metrics::record(&generator.stats(), &labels);
        m.record(lease.readiness().is_ok(), &labels);
    });
    let v = |name: &str, l: &[&str]| value(&seen, name, l);
    assert_eq!(
        v(
            "nonceforge_nonces_issued_total",
            &["kind=counter", "bits=96"]
        ),
        10.0
    );
    assert_eq!(
        v(
            "nonceforge_nonces_issued_total",
            &["kind=sortable", "bits=64"]
        ),
        1.0
    );
    assert_eq!(v("nonceforge_refusals_total", &["reason=deadline"]), 0.0);
    assert_eq!(v("nonceforge_generator_enabled", &[]), 1.0);
    let headroom = v("nonceforge_deadline_headroom_seconds", &[]);
    assert!(headroom > 0.0 && headroom <= 1.8, "{headroom}");
    assert_eq!(v("nonceforge_lease_state", &["state=held"]), 1.0);
    assert_eq!(v("nonceforge_lease_state", &["state=lapsed"]), 0.0);
    assert_eq!(v("nonceforge_lease_ready", &[]), 1.0);
    assert_eq!(v("nonceforge_lease_machine_id", &[]), 0.0);
    assert_eq!(v("nonceforge_lease_token", &[]), m.token as f64);
    assert!(v("nonceforge_lease_renewals_total", &[]) >= 2.0);
    assert!(v("nonceforge_lease_start_wait_seconds", &[]) >= 2.0);
    assert_eq!(v("nonceforge_lease_started_fast", &[]), 0.0);
    assert!(v("nonceforge_lease_renewal_max_seconds", &[]) > 0.0);
    assert_eq!(
        v(
            "nonceforge_lease_renewal_failures_total",
            &["failure=unreachable"]
        ),
        0.0
    );
    assert_eq!(v("nonceforge_lease_lost", &["lost_reason=taken"]), 0.0);
    assert_eq!(m.state_name(), "held");

    // Evicted behind its back and taken: lost, not ready, the refusals counted.
    assert!(nonceforge_lease::evict(&url, &opts, 0, None).unwrap());
    let thief = Lease::acquire(&url, &opts).unwrap();
    let t = Instant::now();
    while !matches!(lease.readiness(), Err(NotReady::Lost(_))) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{:?}",
            lease.readiness()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(generator.counter_96().is_err());
    let m = lease.metrics();
    // Evicted if a renewal came between the eviction and the thief's grant.
    let reason = m.lost_reason.unwrap();
    assert!(
        matches!(reason, LostReason::Taken | LostReason::Evicted),
        "{reason:?}"
    );
    let seen = record_and_read(|| {
        nonceforge::metrics::record(&generator.stats(), &labels);
        m.record(lease.readiness().is_ok(), &labels);
    });
    let v = |name: &str, l: &[&str]| value(&seen, name, l);
    assert_eq!(v("nonceforge_lease_state", &["state=lost"]), 1.0);
    assert_eq!(v("nonceforge_lease_ready", &[]), 0.0);
    for r in nonceforge_lease::LOST_REASONS {
        let label = format!("lost_reason={}", r.as_str());
        let want = if r == reason { 1.0 } else { 0.0 };
        assert_eq!(v("nonceforge_lease_lost", &[&label]), want, "{label}");
    }
    assert_eq!(v("nonceforge_generator_enabled", &[]), 0.0);
    assert_eq!(v("nonceforge_refusals_total", &["reason=deadline"]), 1.0);
    assert_eq!(generator.stats().counter_issued(Bits::B96), 10);
    thief.release().unwrap();
}

/// The rules file, the dashboard and docs/operations.md name only the
/// fleet's metrics (the sanitizer's included), and the page lists every one
/// of them.
#[test]
fn the_ops_files_use_the_fleets_names() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../");
    let read = |p: &str| std::fs::read_to_string(format!("{root}{p}")).unwrap();
    let file: serde_json::Value =
        serde_json::from_str(&read("testdata/vectors/metrics.json")).unwrap();
    let names: Vec<String> = ["metrics", "sanitizer_metrics"]
        .iter()
        .flat_map(|section| file[section].as_array().unwrap())
        .map(|m| m["name"].as_str().unwrap().to_owned())
        .collect();
    let used = |text: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("nonceforge_") {
            let tail = &rest[i..];
            let end = tail
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(tail.len());
            out.push(tail[..end].to_owned());
            rest = &tail[end..];
        }
        out
    };
    let dashboard = read("docs/ops/grafana-dashboard.json");
    let parsed: serde_json::Value = serde_json::from_str(&dashboard).unwrap();
    assert!(!parsed["panels"].as_array().unwrap().is_empty());
    let rules = read("docs/ops/nonceforge-rules.yml");
    assert_eq!(
        rules.matches("- alert: ").count(),
        rules.matches("        expr: ").count(),
        "every alert has one expression"
    );
    for (what, text) in [
        ("the rules", rules.as_str()),
        ("the dashboard", dashboard.as_str()),
        ("operations.md", read("docs/operations.md").as_str()),
    ] {
        for name in used(text) {
            // Prose names the lease crate (nonceforge_lease::…) and the
            // PostgreSQL function (nonceforge_metrics()) too.
            if name == "nonceforge_lease" || name == "nonceforge_metrics" {
                continue;
            }
            assert!(
                names.contains(&name),
                "{what}: {name} is not a fleet metric"
            );
        }
    }
    let page = read("docs/operations.md");
    for name in &names {
        assert!(
            page.contains(&format!("`{name}`")),
            "operations.md does not list {name}"
        );
    }
}

/// The nonce sanitizer's figures through the facade, after a reuse caught.
#[test]
fn the_sanitizer_through_the_facade() {
    use nonceforge::aead::{GuardConfig, NonceGuard, NonceMode, Policy};
    let config = GuardConfig::new()
        .policy(Policy::Error)
        .mode(NonceMode::Random);
    let g = NonceGuard::<12>::new("AES-256-GCM", &[0x5a; 32], config).unwrap();
    g.check_seal(&[3; 12], 1).unwrap();
    assert!(g.check_seal(&[3; 12], 1).is_err());
    let seen = record_and_read(|| {
        nonceforge::metrics::describe_sanitizer();
        nonceforge::metrics::record_sanitizer(&[("service", "vault".to_owned())]);
    });
    let get = |name: &str, labels: &[&str]| {
        let mut labels: Vec<String> = labels.iter().map(|l| (*l).to_owned()).collect();
        labels.push("service=vault".into());
        labels.sort();
        match seen.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Counter(n)) => *n as f64,
            Some(DebugValue::Gauge(g)) => g.into_inner(),
            other => panic!("{name}: {other:?}"),
        }
    };
    assert!(get("nonceforge_sanitizer_refusals_total", &["violation=reuse"]) >= 1.0);
    assert!(get("nonceforge_sanitizer_keys", &[]) >= 1.0);
    assert!(get("nonceforge_sanitizer_memory_bytes", &[]) > 0.0);
    assert_eq!(
        seen.keys()
            .filter(|(n, _)| n.starts_with("nonceforge_sanitizer_"))
            .count(),
        9
    );
}
