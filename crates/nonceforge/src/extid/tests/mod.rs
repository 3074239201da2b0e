use super::*;
use proptest::prelude::*;

// What the ids hide and how forgeries fare; rotation and key versions.
mod hiding;
mod rotation;

fn ring() -> Keyring {
    Keyring::new(0, &[0x42; 32]).unwrap()
}

fn codecs(ring: &Keyring) -> Vec<ExtIdCodec> {
    let b = |m| ExtIdCodec::builder(ring, "user").mode(m);
    vec![
        b(ExtIdMode::FeistelUuid).build().unwrap(),
        b(ExtIdMode::FeistelUuid).rounds(4).build().unwrap(),
        b(ExtIdMode::FeistelUuid).uuid_version(4).build().unwrap(),
        b(ExtIdMode::FeistelUuid)
            .key_version_in_band(false)
            .build()
            .unwrap(),
        b(ExtIdMode::Aes128).build().unwrap(),
        b(ExtIdMode::CycleWalk).build().unwrap(),
    ]
}

proptest! {
    #[test]
    fn every_mode_round_trips(seq: u64, rand: u64) {
        let ring = ring();
        for c in codecs(&ring) {
            let (seq, rand) = (seq & c.max_seq(), rand & c.max_rand());
            let id = c.encode(seq, rand).unwrap();
            let d = c.decode_unverified(&id).unwrap();
            prop_assert_eq!((d.seq, d.rand, d.key_version), (seq, rand, 0), "{:?}", c);
            if c.mode() == ExtIdMode::FeistelUuid {
                let u = uuid::Uuid::from_bytes(id.0);
                prop_assert_eq!(u.get_version_num(), c.uuid_version as usize);
                prop_assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
            }
            if c.mode() == ExtIdMode::CycleWalk {
                prop_assert!(id.0[0] & 0x80 == 0);
            }
            for form in [TextForm::Uuid, TextForm::Base64Url, TextForm::Base32] {
                for (prefix, check) in [(false, false), (true, false), (true, true), (false, true)] {
                    let text = c.format(&id, form, prefix, check);
                    prop_assert_eq!(c.parse(&text).unwrap(), id, "{}", text);
                }
            }
        }
    }

    #[test]
    fn the_call_without_rand_round_trips_and_is_checked(seq: u64, rand: u64) {
        let ring = ring();
        for c in codecs(&ring) {
            let seq = seq & c.max_seq();
            let id = c.encode_seq(seq).unwrap();
            prop_assert_eq!(id, c.encode(seq, c.derived_rand(seq)).unwrap());
            let d = c.decode_unverified(&id).unwrap();
            prop_assert_eq!((d.seq, d.rand), (seq, c.derived_rand(seq)));
            prop_assert!(c.is_derived(&d));
            prop_assert_eq!(c.decode_seq(&id), Ok(seq));
            // Any other random half is not the derived one.
            let rand = rand & c.max_rand();
            if rand != c.derived_rand(seq) {
                let other = c.encode(seq, rand).unwrap();
                prop_assert!(!c.is_derived(&c.decode_unverified(&other).unwrap()));
                prop_assert_eq!(c.decode_seq(&other), Err(Error::NotDerived { seq }));
            }
        }
    }
}

proptest! {
    // Each case is a batch of up to 600 ids (up to three 256-id passes)
    // through six codecs and every batch call, so 32 cases (of random lengths)
    // test many thousands of ids: an eighth of the default's time in make
    // check. `batch_lengths_at_the_pass_boundaries` takes the lengths around 256.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn batches_equal_one_at_a_time(input in proptest::collection::vec((any::<u64>(), any::<u64>()), 0..600)) {
        let ring = ring();
        for c in codecs(&ring) {
            let input: Vec<(u64, u64)> = input.iter().map(|&(s, r)| (s & c.max_seq(), r & c.max_rand())).collect();
            let mut out = vec![ExtId::default(); input.len()];
            c.encode_batch(&input, &mut out).unwrap();
            for (&(s, r), id) in input.iter().zip(&out) {
                prop_assert_eq!(c.encode(s, r).unwrap(), *id);
            }
            let mut back = vec![Decoded { key_version: 9, ..Decoded::default() }; out.len()];
            c.decode_unverified_batch(&out, &mut back).unwrap();
            for ((&(s, r), d), id) in input.iter().zip(&back).zip(&out) {
                prop_assert_eq!((d.seq, d.rand), (s, r));
                prop_assert_eq!(*d, c.decode_unverified(id).unwrap(), "batch and one at a time agree");
            }
            // The default call's ids, in a batch: every one derived.
            let derived: Vec<(u64, u64)> = input.iter().map(|&(s, _)| (s, c.derived_rand(s))).collect();
            c.encode_batch(&derived, &mut out).unwrap();
            c.decode_unverified_batch(&out, &mut back).unwrap();
            prop_assert!(back.iter().all(|d| c.is_derived(d)));
            // The derived batch calls: the same ids and answers as one at a time.
            let seqs: Vec<u64> = input.iter().map(|&(s, _)| s).collect();
            let mut ids = vec![ExtId::default(); seqs.len()];
            c.encode_seq_batch(&seqs, &mut ids).unwrap();
            for (&s, id) in seqs.iter().zip(&ids) {
                prop_assert_eq!(c.encode_seq(s).unwrap(), *id);
            }
            let mut got = vec![u64::MAX; ids.len()];
            c.decode_seq_batch(&ids, &mut got).unwrap();
            prop_assert_eq!(&got, &seqs);
            // One id with a stored half among them: refused as one at a time
            // refuses it, nothing written.
            if !ids.is_empty() {
                let k = ids.len() / 2;
                ids[k] = c.encode(seqs[k], c.derived_rand(seqs[k]) ^ 1).unwrap();
                let mut got = vec![u64::MAX; ids.len()];
                prop_assert_eq!(c.decode_seq_batch(&ids, &mut got), Err(c.decode_seq(&ids[k]).unwrap_err()));
                prop_assert!(got.iter().all(|&g| g == 0), "no sequence number is left");
            }
        }
    }
}

/// The L half as the id shows it (octets 0-5 and the 12 bits after the
/// version nibble).
fn l(id: &ExtId) -> u64 {
    let hi = u64::from_be_bytes(id.0[..8].try_into().unwrap());
    (hi >> 16) << 12 | (hi & 0xfff)
}

#[test]
fn every_version_and_variant_value_is_tried_on_decode() {
    let ring = ring();
    for c in codecs(&ring)
        .into_iter()
        .filter(|c| c.mode() == ExtIdMode::FeistelUuid)
    {
        let id = c.encode(7, 9).unwrap();
        for ver in 0u8..16 {
            for var in 0u8..4 {
                let mut b = id.0;
                b[6] = (b[6] & 0x0f) | (ver << 4);
                b[8] = (b[8] & 0x3f) | (var << 6);
                let r = c.decode_unverified(&ExtId(b));
                if ver == c.uuid_version && var == 0b10 {
                    assert_eq!(r.unwrap().seq, 7);
                } else {
                    let e = r.unwrap_err();
                    assert!(
                        matches!(e, Error::MalformedExtId { .. }),
                        "ver {ver} var {var}: {e}"
                    );
                }
            }
        }
    }
    let cw = ExtIdCodec::builder(&ring, "user")
        .mode(ExtIdMode::CycleWalk)
        .build()
        .unwrap();
    let mut b = cw.encode(1, 2).unwrap().0;
    b[0] |= 0x80;
    assert!(matches!(
        cw.decode_unverified(&ExtId(b)),
        Err(Error::MalformedExtId { .. })
    ));
}

#[test]
fn input_ranges_are_enforced() {
    let ring = ring();
    let c = ExtIdCodec::new(&ring, "user").unwrap();
    assert_eq!(
        c.encode(1 << 56, 0),
        Err(Error::ValueOutOfRange {
            argument: "seq",
            value: 1 << 56,
            max: (1 << 56) - 1
        })
    );
    assert!(matches!(
        c.encode(0, 1 << 62),
        Err(Error::ValueOutOfRange {
            argument: "rand",
            ..
        })
    ));
    let wide = ExtIdCodec::builder(&ring, "user")
        .key_version_in_band(false)
        .build()
        .unwrap();
    assert!(wide.encode((1 << 60) - 1, 0).is_ok() && wide.encode(1 << 60, 0).is_err());
    let cw = ExtIdCodec::builder(&ring, "user")
        .mode(ExtIdMode::CycleWalk)
        .build()
        .unwrap();
    assert!(cw.encode(u64::MAX >> 1, u64::MAX).is_ok() && cw.encode(1 << 63, 0).is_err());
    let aes = ExtIdCodec::builder(&ring, "user")
        .mode(ExtIdMode::Aes128)
        .build()
        .unwrap();
    assert!(aes.encode(u64::MAX, u64::MAX).is_ok());
    // A batch with one bad input writes nothing.
    let mut out = vec![ExtId([9; 16]); 3];
    assert!(
        c.encode_batch(&[(1, 1), (1 << 60, 1), (2, 2)], &mut out)
            .is_err()
    );
    assert!(out.iter().all(|o| *o == ExtId([9; 16])));
    assert!(matches!(
        c.encode_batch(&[(1, 1)], &mut out),
        Err(Error::OutputLength { .. })
    ));
}

#[test]
fn options_are_checked() {
    let ring = ring();
    assert!(matches!(
        ExtIdCodec::builder(&ring, "user").rounds(3).build(),
        Err(Error::InvalidOption {
            option: "rounds",
            ..
        })
    ));
    assert!(matches!(
        ExtIdCodec::builder(&ring, "user").uuid_version(7).build(),
        Err(Error::InvalidOption {
            option: "uuid_version",
            ..
        })
    ));
    assert!(matches!(
        ExtIdCodec::new(&ring, "User"),
        Err(Error::InvalidTypeName { .. })
    ));
    assert!(matches!(
        "feistel".parse::<ExtIdMode>(),
        Err(Error::UnknownExtIdMode { .. })
    ));
}

#[test]
fn the_self_check_refuses_a_miscomputed_id_and_returns_nothing() {
    let ring = ring();
    let other = Keyring::new(0, &[0x24; 32]).unwrap();
    for mode in [
        ExtIdMode::FeistelUuid,
        ExtIdMode::Aes128,
        ExtIdMode::CycleWalk,
    ] {
        let build = |r| ExtIdCodec::builder(r, "user").mode(mode);
        let checked = || build(&ring).build_self_checked().unwrap();
        let plain = build(&ring).build().unwrap();
        // Healthy: the same ids as without the check.
        let c = checked();
        assert_eq!(c.encode(5, 9).unwrap(), plain.encode(5, 9).unwrap());
        assert_eq!(c.encode_seq(5).unwrap(), plain.encode_seq(5).unwrap());
        let input = [(1, 2), (3, 4), (5, 6)];
        let mut out = [ExtId::default(); 3];
        c.encode_batch(&input, &mut out).unwrap();
        let refused = |c: &SelfCheckedCodec, what: &str| {
            assert_eq!(
                c.encode_seq(7),
                Err(Error::SelfCheckFailed { seq: 7 }),
                "{mode:?}: {what}"
            );
        };
        // A bit flipped on the way out, as faulty hardware would: refused,
        // nothing returned.
        let mut c = checked();
        c.check.inject_fault = true;
        assert_eq!(c.encode(5, 9), Err(Error::SelfCheckFailed { seq: 5 }));
        refused(&c, "a flipped bit");
        let mut out = [ExtId::default(); 3];
        assert_eq!(
            c.encode_batch(&input, &mut out),
            Err(Error::SelfCheckFailed { seq: 1 })
        );
        assert_eq!(out, [ExtId::default(); 3], "a failed batch leaves nothing");
        // Faulty expanded keys: encoding and decoding with them agree (a
        // check on the same copy passes), the second copy does not.
        let mut c = checked();
        let mut faulty = build(&other).build().unwrap();
        c.codec.keys[0] = faulty.keys[0].take();
        c.codec.current_keys = faulty.current_keys;
        let id = c.codec.encode_seq(7).unwrap();
        assert_eq!(
            c.codec.decode_unverified(&id).unwrap().seq,
            7,
            "the same copy is blind"
        );
        refused(&c, "faulty round keys");
        assert_eq!(c.encode(5, 9), Err(Error::SelfCheckFailed { seq: 5 }));
        // A faulty derived half: the id decodes to (seq, that half), so only
        // recomputing the half shows it.
        let mut c = checked();
        c.codec.current_rand = build(&other).build().unwrap().current_rand;
        refused(&c, "a faulty derived half");
        assert_eq!(c.encode(5, 9).unwrap(), plain.encode(5, 9).unwrap());
    }
}

/// `parse` reads back whatever `format` wrote: type names of every length
/// 1..=63 (some with underscores), with and without the prefix and the check
/// character — 36-character base32 forms included (`inventory_…`).
#[test]
fn parse_reads_every_format_back() {
    let ring = ring();
    for len in 1..=63usize {
        let letters: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
        let mut names = vec![letters.clone()];
        if len >= 3 {
            names.push(format!("{}_{}", &letters[..1], &letters[2..]));
        }
        for name in names {
            let c = ExtIdCodec::new(&ring, &name).unwrap();
            let id = c.encode_seq(len as u64).unwrap();
            for (form, prefix, check) in [
                (TextForm::Uuid, false, false),
                (TextForm::Base64Url, false, false),
                (TextForm::Base32, false, false),
                (TextForm::Base32, false, true),
                (TextForm::Base32, true, false),
                (TextForm::Base32, true, true),
            ] {
                let text = c.format(&id, form, prefix, check);
                assert_eq!(c.parse(&text), Ok(id), "{name}: {text:?}");
            }
        }
    }
}

/// The obvious decode is the checked one, in every layout: `decode`,
/// `decode_with_key_version` and `decode_batch` refuse an id made with a
/// stored random half (or made up), and `decode_unverified` reads it.
#[test]
fn the_obvious_decode_is_the_checked_one() {
    let ring = ring();
    for c in codecs(&ring) {
        let derived = c.encode_seq(42).unwrap();
        let stored = c.encode(42, 7).unwrap();
        let d = c.decode(&derived).unwrap();
        assert_eq!((d.seq, d.rand), (42, c.derived_rand(42)));
        assert_eq!(
            c.decode(&stored),
            Err(Error::NotDerived { seq: 42 }),
            "{c:?}"
        );
        assert_eq!(c.decode_unverified(&stored).unwrap().rand, 7);
        assert!(c.decode_with_key_version(&stored, 0).is_err());
        assert_eq!(c.decode_with_key_version(&derived, 0).unwrap(), d);
        let mut out = [Decoded::default(); 2];
        assert!(c.decode_batch(&[derived, stored], &mut out).is_err());
        assert_eq!(out, [Decoded::default(); 2], "nothing written");
        c.decode_batch(&[derived, derived], &mut out).unwrap();
        assert_eq!(out, [d, d]);
        c.decode_unverified_batch(&[derived, stored], &mut out)
            .unwrap();
        assert_eq!(out[1].rand, 7);
    }
}

/// The batch calls at the lengths where a 256-id pass ends, for every codec:
/// the same as one call at a time.
#[test]
fn batch_lengths_at_the_pass_boundaries() {
    let ring = ring();
    for c in codecs(&ring) {
        for n in [0usize, 1, 255, 256, 257, 511, 512, 513] {
            let seqs: Vec<u64> = (0..n as u64).map(|s| (s * 7919) & c.max_seq()).collect();
            let mut ids = vec![ExtId::default(); n];
            c.encode_seq_batch(&seqs, &mut ids).unwrap();
            let mut got = vec![0u64; n];
            c.decode_seq_batch(&ids, &mut got).unwrap();
            assert_eq!(got, seqs, "{c:?} n={n}");
            let pairs: Vec<(u64, u64)> = seqs
                .iter()
                .map(|&s| (s, (s ^ 0x55) & c.max_rand()))
                .collect();
            c.encode_batch(&pairs, &mut ids).unwrap();
            let mut back = vec![Decoded::default(); n];
            c.decode_unverified_batch(&ids, &mut back).unwrap();
            for ((&(s, r), id), d) in pairs.iter().zip(&ids).zip(&back) {
                assert_eq!(*id, c.encode(s, r).unwrap(), "{c:?} n={n}");
                assert_eq!((d.seq, d.rand), (s, r), "{c:?} n={n}");
            }
        }
    }
}
