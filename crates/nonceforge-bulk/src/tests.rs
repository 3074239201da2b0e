use super::*;
use cipher::consts::U16;
use cipher::{BlockCipherEncrypt, BlockSizeUser, KeyInit, KeyIvInit, StreamCipher};

fn hexd(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap()
}

/// Encrypts `buf` in place with a stream cipher (CTR or ChaCha20: no tag).
fn keystream(alg: CipherAlg, key: &[u8], iv: &[u8], buf: &mut [u8]) {
    cipher(
        alg,
        true,
        key,
        iv,
        Data::InPlace(buf),
        b"",
        &mut Tag::new(0).unwrap(),
    )
    .unwrap();
}

#[test]
fn names_resolve_without_regard_to_case() {
    assert_eq!(
        CipherAlg::from_name("AES-256-CTR"),
        Some(CipherAlg::Aes256Ctr)
    );
    assert_eq!(
        CipherAlg::from_name("id-aes256-GCM"),
        Some(CipherAlg::Aes256Gcm)
    );
    assert_eq!(CipherAlg::from_name("aes-256-cbc"), None);
    assert_eq!(DigestAlg::from_name("RSA-SHA256"), Some(DigestAlg::Sha256));
    assert_eq!(
        DigestAlg::from_name("2.16.840.1.101.3.4.2.1"),
        Some(DigestAlg::Sha256)
    );
    assert_eq!(DigestAlg::from_name("sha256 "), None);
    for (i, a) in CipherAlg::ALL.iter().enumerate() {
        assert_eq!(CipherAlg::from_id(i as u32), Some(*a));
        assert_eq!(CipherAlg::from_name(a.name()), Some(*a));
    }
    for a in DigestAlg::ALL {
        assert_eq!(DigestAlg::from_name(a.name()), Some(*a));
    }
}

#[test]
fn digests_match_known_answers() {
    let mut out = [0u8; 64];
    let cases = [
        (DigestAlg::Md5, "900150983cd24fb0d6963f7d28e17f72"),
        (DigestAlg::Sha1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
        (
            DigestAlg::Sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            DigestAlg::Sha3_256,
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
        ),
        (DigestAlg::Shake128, "5881092dd818bf5cf8a3ddb793fbcba7"),
        (
            DigestAlg::Blake2s256,
            "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982",
        ),
        (
            DigestAlg::Ripemd160,
            "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc",
        ),
        (
            DigestAlg::Blake3,
            "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85",
        ),
    ];
    for (alg, want) in cases {
        let n = hash(alg, b"abc", &mut out).unwrap();
        assert_eq!(hex::encode(&out[..n]), want, "{alg:?}");
    }
    // md5-sha1 is the two side by side.
    let n = hash(DigestAlg::Md5Sha1, b"abc", &mut out).unwrap();
    assert_eq!(
        hex::encode(&out[..n]),
        format!("{}{}", cases[0].1, cases[1].1)
    );
    assert_eq!(
        hash(DigestAlg::Sha512, b"abc", &mut [0u8; 63]),
        Err(BulkError::TargetTooShort {
            needed: 64,
            got: 63
        })
    );
}

#[test]
fn streaming_equals_one_shot() {
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + i / 13) as u8).collect();
    for &alg in DigestAlg::ALL {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        let n = hash(alg, &data, &mut a).unwrap();
        let mut h = Hasher::new(alg);
        for piece in data.chunks(333) {
            h.update(piece);
        }
        assert_eq!(h.finalize_into(&mut b).unwrap(), n);
        assert_eq!(a, b, "{alg:?}");
    }
}

#[test]
fn hmac_matches_rfc_4231_case_2() {
    let mut out = [0u8; 64];
    let n = hmac(
        DigestAlg::Sha256,
        b"Jefe",
        b"what do ya want for nothing?",
        &mut out,
    )
    .unwrap();
    assert_eq!(
        hex::encode(&out[..n]),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    assert_eq!(
        hmac(DigestAlg::Shake128, b"k", b"m", &mut out),
        Err(BulkError::InitializationFailed)
    );
}

#[test]
fn aes_ctr_matches_sp800_38a_f_5_5() {
    let key = hexd("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
    let iv = hexd("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    let mut buf = hexd("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
    keystream(CipherAlg::Aes256Ctr, &key, &iv, &mut buf);
    assert_eq!(
        hex::encode(&buf),
        "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
    );
}

#[test]
fn ctr_counter_carries_through_all_128_bits() {
    // The IV ff..ff: the next block's counter is 00..00 (OpenSSL wraps the whole block).
    let key = [3u8; 16];
    let mut two = [0u8; 32];
    keystream(CipherAlg::Aes128Ctr, &key, &[0xff; 16], &mut two);
    let mut zero = [0u8; 16];
    keystream(CipherAlg::Aes128Ctr, &key, &[0; 16], &mut zero);
    assert_eq!(two[16..], zero);
}

#[test]
fn chacha20_uses_openssls_iv_layout_and_wraps_at_2_pow_64() {
    use cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
    let key = [9u8; 32];
    let mut iv = [0u8; 16];
    iv[..4].copy_from_slice(&5u32.to_le_bytes());
    iv[4..].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    let mut ours = [0u8; 200];
    keystream(CipherAlg::ChaCha20, &key, &iv, &mut ours);
    // Below 2^32 blocks it is the IETF cipher with counter iv[0..4], nonce iv[4..16].
    let mut ietf = ::chacha20::ChaCha20::new((&key).into(), (&iv[4..]).try_into().unwrap());
    ietf.seek(5u64 * 64);
    let mut theirs = [0u8; 200];
    ietf.apply_keystream(&mut theirs);
    assert_eq!(ours, theirs);

    // At counter 2^64 - 1 the second block is block 0 of the same nonce.
    let mut last = [0xffu8; 16];
    last[8..].copy_from_slice(&[7; 8]);
    let mut a = [0u8; 128];
    keystream(CipherAlg::ChaCha20, &key, &last, &mut a);
    let mut first = [0u8; 16];
    first[8..].copy_from_slice(&[7; 8]);
    let mut b = [0u8; 64];
    keystream(CipherAlg::ChaCha20, &key, &first, &mut b);
    assert_eq!(a[64..], b);
}

#[test]
fn aeads_agree_with_the_aead_crates_and_check_truncated_tags() {
    use aes_gcm::aead::{AeadInOut, KeyInit as _};
    let key = [0x42u8; 32];
    let iv = [0x24u8; 12];
    let aad = b"header";
    for len in [0usize, 1, 15, 16, 17, 64, 1000] {
        let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
        // Full tags: the aead crates' own output.
        let mut want = msg.clone();
        let want_tag = aes_gcm::Aes256Gcm::new((&key).into())
            .encrypt_inout_detached((&iv).into(), aad, want.as_mut_slice().into())
            .unwrap();
        let mut got = vec![0u8; len];
        let mut tag = Tag::new(16).unwrap();
        cipher(
            CipherAlg::Aes256Gcm,
            true,
            &key,
            &iv,
            Data::Copy(&msg, &mut got),
            aad,
            &mut tag,
        )
        .unwrap();
        assert_eq!(
            (got.as_slice(), tag.as_slice()),
            (want.as_slice(), want_tag.as_slice())
        );

        let mut want = msg.clone();
        let want_tag = chacha20poly1305::ChaCha20Poly1305::new((&key).into())
            .encrypt_inout_detached((&iv).into(), aad, want.as_mut_slice().into())
            .unwrap();
        let mut got = msg.clone();
        let mut tag = Tag::new(16).unwrap();
        cipher(
            CipherAlg::ChaCha20Poly1305,
            true,
            &key,
            &iv,
            Data::InPlace(&mut got),
            aad,
            &mut tag,
        )
        .unwrap();
        assert_eq!(
            (got.as_slice(), tag.as_slice()),
            (want.as_slice(), want_tag.as_slice())
        );

        // Truncated tags: a prefix of the full one; checked on the way back.
        for (alg, n) in [
            (CipherAlg::Aes256Gcm, 4),
            (CipherAlg::Aes256Gcm, 12),
            (CipherAlg::ChaCha20Poly1305, 1),
        ] {
            let mut full = Tag::new(16).unwrap();
            let mut ct = msg.clone();
            cipher(alg, true, &key, &iv, Data::InPlace(&mut ct), aad, &mut full).unwrap();
            let mut short = Tag::new(n).unwrap();
            let mut ct2 = msg.clone();
            cipher(
                alg,
                true,
                &key,
                &iv,
                Data::InPlace(&mut ct2),
                aad,
                &mut short,
            )
            .unwrap();
            assert_eq!((&ct2, short.as_slice()), (&ct, &full.as_slice()[..n]));
            let mut back = vec![0xeeu8; len];
            cipher(
                alg,
                false,
                &key,
                &iv,
                Data::Copy(&ct, &mut back),
                aad,
                &mut short,
            )
            .unwrap();
            assert_eq!(back, msg);
            // A flipped tag bit: corrupt, and the target is not written.
            let mut bad = short.clone();
            bad.bytes[0] ^= 1;
            let mut untouched = vec![0xeeu8; len];
            assert_eq!(
                cipher(
                    alg,
                    false,
                    &key,
                    &iv,
                    Data::Copy(&ct, &mut untouched),
                    aad,
                    &mut bad
                ),
                Err(BulkError::Corrupt)
            );
            assert!(untouched.iter().all(|&b| b == 0xee));
        }
    }
}

#[test]
fn bad_sizes_are_typed_errors() {
    let mut t0 = Tag::new(0).unwrap();
    let mut t16 = Tag::new(16).unwrap();
    let mut b = [0u8; 4];
    assert_eq!(
        cipher(
            CipherAlg::Aes128Ctr,
            true,
            &[0; 15],
            &[0; 16],
            Data::InPlace(&mut b),
            b"",
            &mut t0
        ),
        Err(BulkError::KeySize {
            expected: 16,
            got: 15
        })
    );
    assert_eq!(
        cipher(
            CipherAlg::Aes128Gcm,
            true,
            &[0; 16],
            &[0; 16],
            Data::InPlace(&mut b),
            b"",
            &mut t16
        ),
        Err(BulkError::IvSize {
            expected: 12,
            got: 16
        })
    );
    assert_eq!(
        cipher(
            CipherAlg::Aes128Ctr,
            true,
            &[0; 16],
            &[0; 16],
            Data::InPlace(&mut b),
            b"x",
            &mut t0
        ),
        Err(BulkError::AadNotAllowed)
    );
    let mut t5 = Tag::new(5).unwrap();
    assert_eq!(
        cipher(
            CipherAlg::Aes128Gcm,
            true,
            &[0; 16],
            &[0; 12],
            Data::InPlace(&mut b),
            b"",
            &mut t5
        ),
        Err(BulkError::TagSize { got: 5 })
    );
    assert_eq!(
        cipher(
            CipherAlg::Aes128Ctr,
            true,
            &[0; 16],
            &[0; 16],
            Data::Copy(&[0; 4], &mut [0; 3]),
            b"",
            &mut t0
        ),
        Err(BulkError::TargetTooShort { needed: 4, got: 3 })
    );
    assert!(Tag::new(17).is_err());
    assert_eq!(BulkError::Corrupt.to_string(), "corrupt");
}

/// The reference: the `ctr` crate's 128-bit big-endian counter mode.
fn ctr_reference(alg: CipherAlg, key: &[u8], iv: &[u8], data: &mut [u8]) {
    use ::ctr::Ctr128BE;
    use CipherAlg::*;
    fn run<C>(key: &[u8], iv: &[u8], data: &mut [u8])
    where
        C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + KeyInit,
    {
        Ctr128BE::<C>::new_from_slices(key, iv)
            .unwrap()
            .apply_keystream(data);
    }
    match alg {
        Aes128Ctr => run::<aes::Aes128>(key, iv, data),
        Aes192Ctr => run::<aes::Aes192>(key, iv, data),
        Aes256Ctr => run::<aes::Aes256>(key, iv, data),
        Aria128Ctr => run::<aria::Aria128>(key, iv, data),
        Aria192Ctr => run::<aria::Aria192>(key, iv, data),
        Aria256Ctr => run::<aria::Aria256>(key, iv, data),
        Camellia128Ctr => run::<camellia::Camellia128>(key, iv, data),
        Camellia192Ctr => run::<camellia::Camellia192>(key, iv, data),
        Camellia256Ctr => run::<camellia::Camellia256>(key, iv, data),
        Sm4Ctr => run::<sm4::Sm4>(key, iv, data),
        other => panic!("{other:?} is not a CTR cipher"),
    }
}

const CTR_ALGS: [CipherAlg; 10] = [
    CipherAlg::Aes128Ctr,
    CipherAlg::Aes192Ctr,
    CipherAlg::Aes256Ctr,
    CipherAlg::Aria128Ctr,
    CipherAlg::Aria192Ctr,
    CipherAlg::Aria256Ctr,
    CipherAlg::Camellia128Ctr,
    CipherAlg::Camellia192Ctr,
    CipherAlg::Camellia256Ctr,
    CipherAlg::Sm4Ctr,
];

proptest::proptest! {
    /// Every CTR cipher, in place and from a source to a target, matches the
    /// `ctr` crate at any length (across the 2 KiB steps of the keystream
    /// buffer) and any IV, including counters about to wrap at 2^128.
    #[test]
    fn ctr_matches_the_ctr_crate(
        which in 0..CTR_ALGS.len(),
        len in proptest::prop_oneof![0usize..64, 2000usize..2200, 0usize..9000],
        key in proptest::collection::vec(proptest::num::u8::ANY, 32),
        low in proptest::num::u64::ANY,
        near_wrap in proptest::bool::ANY,
        in_place in proptest::bool::ANY,
    ) {
        let alg = CTR_ALGS[which];
        let key = &key[..alg.key_len()];
        let mut iv = [0xffu8; 16];
        if near_wrap {
            // ff..ff followed by a few low bits: wraps within this message.
            iv[15] = low as u8 | 0xf0;
        } else {
            iv[..8].copy_from_slice(&low.to_be_bytes());
            iv[8..].copy_from_slice(&low.rotate_left(17).to_le_bytes());
        }
        let src: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        let mut expected = src.clone();
        ctr_reference(alg, key, &iv, &mut expected);
        let mut tag = Tag::new(0).unwrap();
        let got = if in_place {
            let mut buf = src.clone();
            cipher(alg, true, key, &iv, Data::InPlace(&mut buf), b"", &mut tag).unwrap();
            buf
        } else {
            // A longer target: only its first len bytes are written.
            let mut dst = vec![0xa5u8; len + 40];
            cipher(alg, true, key, &iv, Data::Copy(&src, &mut dst), b"", &mut tag).unwrap();
            proptest::prop_assert!(dst[len..].iter().all(|&b| b == 0xa5));
            dst.truncate(len);
            dst
        };
        proptest::prop_assert_eq!(got, expected);
    }
}

proptest::proptest! {
    /// AES-128/256-GCM and ChaCha20-Poly1305 with a whole tag (sealed through
    /// ring) match the RustCrypto crates in place and from a source to a
    /// target, and open again (through the code that checks first); a flipped
    /// tag bit is refused with the target untouched.
    #[test]
    fn aead_seal_matches_the_rustcrypto_crates(
        which in 0..3usize,
        len in 0usize..5000,
        aad_len in 0usize..100,
        in_place in proptest::bool::ANY,
        seed in proptest::num::u8::ANY,
    ) {
        use aes_gcm::aead::{AeadInOut, KeyInit as _};
        let (alg, key_len) = [
            (CipherAlg::Aes128Gcm, 16),
            (CipherAlg::Aes256Gcm, 32),
            (CipherAlg::ChaCha20Poly1305, 32),
        ][which];
        let key: Vec<u8> = (0..key_len).map(|i| seed ^ i as u8).collect();
        let iv = [seed; 12];
        let aad: Vec<u8> = (0..aad_len).map(|i| i as u8 ^ 0x5a).collect();
        let msg: Vec<u8> = (0..len).map(|i| (i * 7) as u8 ^ seed).collect();
        let mut want = msg.clone();
        let inout = want.as_mut_slice().into();
        let want_tag = match alg {
            CipherAlg::Aes128Gcm => aes_gcm::Aes128Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt_inout_detached((&iv).into(), &aad, inout),
            CipherAlg::Aes256Gcm => aes_gcm::Aes256Gcm::new_from_slice(&key)
                .unwrap()
                .encrypt_inout_detached((&iv).into(), &aad, inout),
            _ => chacha20poly1305::ChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt_inout_detached((&iv).into(), &aad, inout),
        }
        .unwrap();
        let mut tag = Tag::new(16).unwrap();
        let sealed = if in_place {
            let mut buf = msg.clone();
            cipher(alg, true, &key, &iv, Data::InPlace(&mut buf), &aad, &mut tag).unwrap();
            buf
        } else {
            let mut dst = vec![0xa5u8; len + 16];
            cipher(alg, true, &key, &iv, Data::Copy(&msg, &mut dst), &aad, &mut tag).unwrap();
            proptest::prop_assert!(dst[len..].iter().all(|&b| b == 0xa5));
            dst.truncate(len);
            dst
        };
        proptest::prop_assert_eq!(&sealed, &want);
        proptest::prop_assert_eq!(tag.as_slice(), want_tag.as_slice());
        let mut opened = vec![0u8; len];
        cipher(alg, false, &key, &iv, Data::Copy(&sealed, &mut opened), &aad, &mut tag).unwrap();
        proptest::prop_assert_eq!(&opened, &msg);
        let mut bad = Tag::from_slice(tag.as_slice()).unwrap();
        bad.bytes[(seed % 16) as usize] ^= 1;
        let mut untouched = vec![0x3cu8; len];
        proptest::prop_assert_eq!(
            cipher(alg, false, &key, &iv, Data::Copy(&sealed, &mut untouched), &aad, &mut bad),
            Err(BulkError::Corrupt)
        );
        proptest::prop_assert!(untouched.iter().all(|&b| b == 0x3c));
    }
}
