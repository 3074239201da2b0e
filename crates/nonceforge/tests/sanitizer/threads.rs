//! The sanitizer under real threads: many sealers on one key, instances that
//! share a key across backends, the handover of a biased window.

use super::*;

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
