//! `NonceGuard::stats` and `registry_stats`: what a key's detector checked and
//! refused, and its memory, read without taking the sealing thread's bias.

use super::{errors, fresh_key, kind};
use nonceforge::aead::{
    GuardConfig, NonceGuard, NonceMode, SANITIZER_METRICS, VIOLATION_KINDS, ViolationKind,
    registry_stats,
};

fn nonce(i: u64) -> [u8; 12] {
    let mut n = [7u8; 12];
    n[4..].copy_from_slice(&i.to_be_bytes());
    n
}

#[test]
fn stats_count_seals_and_refusals_by_kind() {
    let config = errors().window(4096).mode(NonceMode::Random);
    let g = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(0x51), config).unwrap();
    for i in 0..1000 {
        g.check_seal(&nonce(i), 64).unwrap();
    }
    for i in 0..3 {
        assert_eq!(
            kind(&g.check_seal(&nonce(i), 64).unwrap_err()),
            ViolationKind::Reuse
        );
    }
    let s = g.stats();
    assert_eq!(s.refused, [3, 0, 0, 0, 0, 0]);
    assert_eq!(s.refused_total(), 3);
    // Taken 256 at a time per shard: never fewer than made, at most a chunk a shard ahead.
    assert!(s.seals >= 1000 && s.seals <= 1000 + 256 * 64, "{}", s.seals);
    assert_eq!(VIOLATION_KINDS[ViolationKind::Reuse as usize], "reuse");
    assert_eq!(VIOLATION_KINDS[ViolationKind::Replay as usize], "replay");
    // Another guard of the key reads the same state.
    let again = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(0x51), errors()).unwrap();
    assert!(again.shares_state_with(&g) || again.stats().refused == [0; 6]);
}

#[test]
fn the_memory_tally_follows_the_windows_as_they_grow() {
    // Random mode: every nonce goes to the window (counter-like ones would not).
    let config = errors().window(1 << 16).mode(NonceMode::Random);
    let g = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(0x52), config).unwrap();
    let small = g.stats().memory_bytes;
    for i in 0..50_000 {
        g.check_seal(&nonce(i), 64).unwrap();
    }
    let grown = g.stats().memory_bytes;
    assert!(grown > small + 50_000 * 12, "{small} -> {grown}");
    // The exact figure (under the windows' locks) differs only by their
    // overflow lists.
    let exact = g.memory_bytes();
    assert!(
        exact >= grown && exact - grown <= exact / 50,
        "tally {grown}, exact {exact}"
    );
}

#[test]
fn counter_mode_counts_the_highest_counter() {
    let g = NonceGuard::<12>::new(
        "ChaCha20-Poly1305",
        &fresh_key(0x53),
        GuardConfig::new()
            .policy(nonceforge::aead::Policy::Error)
            .mode(NonceMode::Counter),
    )
    .unwrap();
    for i in 0..500 {
        g.check_seal(&nonce(i), 10).unwrap();
    }
    assert_eq!(
        kind(&g.check_seal(&nonce(7), 10).unwrap_err()),
        ViolationKind::Reuse
    );
    let s = g.stats();
    assert_eq!(s.seals, 500);
    assert_eq!(s.refused[ViolationKind::Reuse as usize], 1);
}

#[test]
fn reading_the_figures_keeps_the_sealing_threads_bias() {
    let g = NonceGuard::<12>::new("AES-128-GCM", &fresh_key(0x54), errors()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..1000 {
                assert!(g.try_fast(&nonce(i)) || g.check_seal(&nonce(i), 1).is_ok());
            }
        })
        .join()
        .unwrap();
    });
    let biased = g.is_biased();
    let _ = g.stats();
    let r = registry_stats();
    assert!(r.keys >= 1 && r.memory_bytes >= g.stats().memory_bytes);
    assert_eq!(
        g.is_biased(),
        biased,
        "stats() or registry_stats() revoked the bias"
    );
}

/// The sanitizer's series are `testdata/vectors/metrics.json`'s
/// `sanitizer_metrics`, with its `violation` label values.
#[test]
fn the_series_are_the_fleets() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/vectors/metrics.json"
    ))
    .unwrap();
    let file: serde_json::Value = serde_json::from_str(&text).unwrap();
    let ours: Vec<_> = nonceforge::aead::SANITIZER_METRICS
        .iter()
        .map(|d| serde_json::json!({"name": d.name, "type": d.kind, "labels": d.labels, "help": d.help}))
        .collect();
    assert_eq!(file["sanitizer_metrics"].as_array().unwrap(), &ours);
    assert_eq!(
        file["label_values"]["violation"],
        serde_json::json!(VIOLATION_KINDS)
    );
    let samples = registry_stats().samples();
    assert_eq!(samples.len(), 9);
    assert!(samples.iter().all(|s| SANITIZER_METRICS.contains(&s.def)));
}

/// The process's totals never go down: a key's state that goes adds its
/// figures to them.
#[test]
fn the_process_totals_keep_what_dropped_states_counted() {
    let before = registry_stats();
    {
        let g = NonceGuard::<12>::new(
            "AES-256-GCM",
            &fresh_key(0x55),
            errors().mode(NonceMode::Random),
        )
        .unwrap();
        g.check_seal(&nonce(1), 1).unwrap();
        assert!(g.check_seal(&nonce(1), 1).is_err());
    }
    // (the retention may keep the state: either way the totals hold it)
    let after = registry_stats();
    assert!(after.seals > before.seals);
    assert!(after.refused[0] > before.refused[0]);
}
