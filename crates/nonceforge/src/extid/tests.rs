use super::*;
use proptest::prelude::*;

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

/// The first 4 bytes of each id: with a constant random half, `feistel-uuid`
/// ids of small sequence numbers share them (the visible half is seq XOR a
/// fixed value), and any two reveal the XOR of their sequence numbers.
fn prefixes(ids: &[ExtId]) -> std::collections::HashSet<[u8; 4]> {
    ids.iter().map(|id| id.0[..4].try_into().unwrap()).collect()
}

#[test]
fn the_default_calls_ids_share_no_prefix_and_reveal_no_xor() {
    let ring = ring();
    for c in codecs(&ring) {
        let ids: Vec<ExtId> = (1..=1000).map(|s| c.encode_seq(s).unwrap()).collect();
        assert_eq!(prefixes(&ids).len(), 1000, "{c:?}: a shared 4-byte prefix");
        // No pair shows the XOR of its sequence numbers in the L half (the
        // leak of a constant random half): compare the visible 60 bits.
        for i in 0..200 {
            for j in i + 1..200 {
                let (a, b) = (&ids[i], &ids[j]);
                let xor = ((i + 1) ^ (j + 1)) as u64;
                assert_ne!(
                    (l(a) ^ l(b)) & 0xfff_ffff,
                    xor,
                    "{c:?}: ids {} and {} show their XOR",
                    i + 1,
                    j + 1
                );
            }
        }
    }
    // The check fails where the leak is: a constant random half.
    let c = ExtIdCodec::new(&ring, "user").unwrap();
    let constant: Vec<ExtId> = (1..=1000).map(|s| c.encode(s, 0).unwrap()).collect();
    // 16 at most: the key version nibble on top is whitened by R.
    assert!(
        prefixes(&constant).len() <= 16,
        "a constant random half shows in the prefix"
    );
    for i in 0..200 {
        for j in i + 1..200 {
            let xor = ((i + 1) ^ (j + 1)) as u64;
            assert_eq!((l(&constant[i]) ^ l(&constant[j])) & 0xfff_ffff, xor);
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
fn types_do_not_correlate_or_cross_decode() {
    let ring = ring();
    let users = ExtIdCodec::new(&ring, "user").unwrap();
    let orders = ExtIdCodec::new(&ring, "order").unwrap();
    let (u, o) = (
        users.encode(1000, 77).unwrap(),
        orders.encode(1000, 77).unwrap(),
    );
    assert_ne!(u, o);
    // An order id decoded as a user id gives an unrelated number, refused by the checks.
    let wrong = users.decode_unverified(&o).unwrap();
    assert!(wrong.check_issued(1_000_000).is_err() || !wrong.rand_matches(77));
    // With a prefix, the text form says the type plainly.
    let text = orders.format(&o, TextForm::Base32, true, false);
    assert!(matches!(users.parse(&text), Err(Error::WrongIdType { .. })));
}

#[test]
fn key_rotation_keeps_old_ids_decodable() {
    let mut ring = ring();
    let old = ExtIdCodec::new(&ring, "user").unwrap();
    let old_id = old.encode(5, 6).unwrap();
    ring.add(1, &[0x43; 32]).unwrap();
    ring.set_current(1).unwrap();
    let new = ExtIdCodec::new(&ring, "user").unwrap();
    let new_id = new.encode(5, 6).unwrap();
    assert_ne!(old_id, new_id);
    let (a, b) = (
        new.decode_unverified(&old_id).unwrap(),
        new.decode_unverified(&new_id).unwrap(),
    );
    assert_eq!((a.seq, a.rand, a.key_version), (5, 6, 0));
    assert_eq!((b.seq, b.rand, b.key_version), (5, 6, 1));
    // A codec without version 1 refuses version-1 ids by name.
    assert_eq!(
        old.decode_unverified(&new_id),
        Err(Error::UnknownKeyVersion { version: 1 })
    );
    // Out of band: the caller says which version.
    let oob = ExtIdCodec::builder(&ring, "user")
        .mode(ExtIdMode::Aes128)
        .build()
        .unwrap();
    let id = oob.encode(5, 6).unwrap();
    assert_eq!(
        oob.decode_unverified_with_key_version(&id, 1).unwrap().seq,
        5
    );
    assert_ne!(
        oob.decode_unverified_with_key_version(&id, 0).unwrap().seq,
        5
    );
    assert_eq!(
        oob.decode_unverified_with_key_version(&id, 7),
        Err(Error::UnknownKeyVersion { version: 7 })
    );
}

#[test]
fn versions_in_band_do_not_show_as_one_digit() {
    let ring = ring();
    let c = ExtIdCodec::new(&ring, "user").unwrap();
    let first_digits: std::collections::BTreeSet<u8> = (0..200)
        .map(|i| c.encode(i, i * 7919).unwrap().0[0] >> 4)
        .collect();
    assert!(first_digits.len() > 8, "{first_digits:?}");
}

#[test]
fn forgery_checks() {
    let ring = ring();
    let c = ExtIdCodec::new(&ring, "user").unwrap();
    let d = c.decode_unverified(&c.encode(10, 12345).unwrap()).unwrap();
    d.check_issued(10).unwrap();
    assert_eq!(
        d.check_issued(9),
        Err(Error::NotIssued {
            seq: 10,
            max_issued: 9
        })
    );
    assert!(d.rand_matches(12345) && !d.rand_matches(12344));
    // Random UUIDv8-shaped ids: the sequence check alone refuses them.
    let mut refused = 0;
    for i in 0u64..2000 {
        let mut b = (i as u128)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
            .to_be_bytes();
        b[6] = (b[6] & 0x0f) | 0x80;
        b[8] = (b[8] & 0x3f) | 0x80;
        b[0] = (b[0] & 0x0f) | ((b[15] & 0x0f) << 4); // key version 0, whitened
        match c.decode_unverified(&ExtId(b)) {
            Ok(d) if d.check_issued(1_000_000).is_err() => refused += 1,
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(refused, 2000);
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

/// No refusal's text names what the id hides: the decoded sequence number
/// (the true one, for an id made with a stored random half), the highest
/// issued (a row count) or the random half; the fields still hold them.
#[test]
fn refusals_name_no_hidden_number() {
    let ring = ring();
    let (seq, rand, max) = (271_828_182_u64, 314_159_265_358_u64, 161_803_398_u64);
    for c in codecs(&ring) {
        let id = c.encode(seq, rand).unwrap();
        let d = c.decode_unverified(&id).unwrap();
        let not_issued = d.check_issued(max).unwrap_err();
        assert_eq!(
            not_issued,
            Error::NotIssued {
                seq,
                max_issued: max
            }
        );
        let not_derived = c.decode_seq(&id).unwrap_err();
        assert_eq!(not_derived, Error::NotDerived { seq });
        for e in [not_issued, not_derived] {
            let text = e.to_string();
            for n in [seq, rand, max] {
                for shown in [n.to_string(), format!("{n:x}"), format!("{n:X}")] {
                    assert!(!text.contains(&shown), "{:?}: {text:?} shows {n}", c.mode());
                }
            }
        }
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

/// After a rotation the checked lookup resolves ids made under every version
/// the keyring holds, in every layout (those that carry no version are read
/// under each held version until one's derived half checks); the same row
/// gets a new id under the new key; other types' and stored-half ids stay
/// refused; a version no longer held stops resolving.
#[test]
fn decode_seq_resolves_every_held_version_after_rotation() {
    let old_ring = Keyring::new(0, &[0x42; 32]).unwrap();
    let mut ring = Keyring::new(0, &[0x42; 32]).unwrap();
    ring.add(1, &[0x17; 32]).unwrap();
    ring.set_current(1).unwrap();
    let only_new = Keyring::new(1, &[0x17; 32]).unwrap();
    for ((before, after), newest) in codecs(&old_ring)
        .into_iter()
        .zip(codecs(&ring))
        .zip(codecs(&only_new))
    {
        let what = format!("{:?}", after.mode());
        for seq in [0u64, 42, 1 << 40] {
            let old_id = before.encode_seq(seq).unwrap();
            let new_id = after.encode_seq(seq).unwrap();
            assert_ne!(old_id, new_id, "{what}: the row's id changes with the key");
            assert_eq!(
                after.decode_seq(&old_id),
                Ok(seq),
                "{what}: an id from before"
            );
            assert_eq!(after.decode_seq(&new_id), Ok(seq), "{what}");
            assert!(newest.decode_seq(&old_id).is_err(), "{what}: key 0 dropped");
            // The same answers as an Option: None for "not ours".
            assert_eq!(after.find_seq(&old_id), Ok(Some(seq)), "{what}");
            assert_eq!(newest.find_seq(&old_id), Ok(None), "{what}");
            assert_eq!(after.find_seq(&after.encode(seq, 7).unwrap()), Ok(None));
            assert!(after.decode_seq(&after.encode(seq, 7).unwrap()).is_err());
        }
        let order = ExtIdCodec::builder(&old_ring, "order").mode(after.mode());
        let order = order.build().unwrap();
        assert!(
            after.decode_seq(&order.encode_seq(42).unwrap()).is_err(),
            "{what}"
        );
    }
}

/// One rule for an explicit key version: an id that carries its own is read
/// under it, and a different version given is refused (not ignored); the
/// refusal does not say which version the id carries. Ids that carry none
/// are read under the version given.
#[test]
fn an_explicit_key_version_must_match_the_carried_one() {
    let mut ring = Keyring::new(0, &[0x42; 32]).unwrap();
    ring.add(5, &[0x17; 32]).unwrap();
    let c = ExtIdCodec::new(&ring, "user").unwrap();
    let id = c.encode_seq(42).unwrap();
    assert_eq!(
        c.decode_unverified_with_key_version(&id, 0).unwrap().seq,
        42
    );
    for given in [5u8, 9] {
        let e = c
            .decode_unverified_with_key_version(&id, given)
            .unwrap_err();
        assert_eq!(e, Error::KeyVersionMismatch { given });
        assert!(!e.to_string().contains(" 0"), "{e}");
    }
    let oob = ExtIdCodec::builder(&ring, "user")
        .key_version_in_band(false)
        .build()
        .unwrap();
    let id = oob.encode_seq(42).unwrap();
    assert_eq!(
        oob.decode_unverified_with_key_version(&id, 0).unwrap().seq,
        42
    );
    assert!(!oob.is_derived(&oob.decode_unverified_with_key_version(&id, 5).unwrap()));
}

/// Bits two UUID-shaped ids agree on, of the 122 that are not the version and variant.
fn common_bits(a: &ExtId, b: &ExtId) -> u32 {
    let fixed = (0xfu128 << 76) | (0b11u128 << 62);
    122 - ((u128::from_be_bytes(a.0) ^ u128::from_be_bytes(b.0)) & !fixed).count_ones()
}

/// Every layout setting is in the key derivation: one row's ids under two
/// layouts are unrelated, an id relabelled to the other UUID version or read
/// by a codec that expects the key version elsewhere is refused. (Under the
/// 0.1.0 derivation the in-band and out-of-band ids of one row shared 56 bits,
/// a relabelled id decoded to its row, and 1 in 256 in-band ids passed an
/// out-of-band lookup.)
#[test]
fn layouts_share_no_keys() {
    let ring = ring();
    let b = || ExtIdCodec::builder(&ring, "user");
    let default = b().build().unwrap();
    let v4 = b().uuid_version(4).build().unwrap();
    let oob = b().key_version_in_band(false).build().unwrap();
    let four = b().rounds(4).build().unwrap();
    let n = 4096u64;
    for other in [&v4, &oob, &four] {
        let mean = (0..n)
            .map(|s| {
                common_bits(
                    &default.encode_seq(s).unwrap(),
                    &other.encode_seq(s).unwrap(),
                )
            })
            .sum::<u32>() as f64
            / n as f64;
        // 61 for unrelated ids (sd of the mean 0.09); 56 shared bits give about 89.
        assert!((59.0..63.0).contains(&mean), "{other:?}: {mean}");
        // The same seq's derived halves differ too (one key per layout).
        assert_ne!(default.derived_rand(7), other.derived_rand(7));
    }
    for s in 0..n {
        let id = default.encode_seq(s).unwrap();
        let mut relabelled = id;
        relabelled.0[6] = (relabelled.0[6] & 0x0f) | 0x40; // version 8 → 4
        assert_eq!(v4.find_seq(&relabelled), Ok(None), "seq {s}");
        assert_eq!(oob.find_seq(&id), Ok(None), "seq {s}");
        assert_eq!(default.find_seq(&oob.encode_seq(s).unwrap()), Ok(None));
    }
}

/// docs/contracts.md, "The key version in the default layout": in band, the
/// version shows (first hex digit XOR last, for every id); out of band it
/// does not (that XOR is flat). The claim each layout makes, tested.
#[test]
fn the_key_version_shows_in_band_and_not_out_of_band() {
    let mut ring = Keyring::new(0, &[0x42; 32]).unwrap();
    ring.add(5, &[0x43; 32]).unwrap();
    ring.set_current(5).unwrap();
    let first_xor_last = |id: &ExtId| (id.0[0] >> 4) ^ (id.0[15] & 0xf);
    let in_band = ExtIdCodec::new(&ring, "user").unwrap();
    assert!((0..4096).all(|s| first_xor_last(&in_band.encode_seq(s).unwrap()) == 5));
    let oob = ExtIdCodec::builder(&ring, "user")
        .key_version_in_band(false)
        .build()
        .unwrap();
    let mut counts = [0u32; 16];
    let n = 16 * 4096;
    for s in 0..n {
        counts[first_xor_last(&oob.encode_seq(s).unwrap()) as usize] += 1;
    }
    // Chi-square with 15 degrees of freedom: 37.7 is the 0.1 % tail.
    let expected = n as f64 / 16.0;
    let chi2: f64 = counts
        .iter()
        .map(|&c| (c as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 37.7, "{counts:?}");
}

/// The derived batch calls across a rotation and with bad input: ids of an
/// older version resolve in a batch as one at a time (in band by the carried
/// version, out of band by the trial); lengths and ranges are checked first.
#[test]
fn derived_batches_across_rotation_and_bad_input() {
    let ring = Keyring::new(0, &[0x42; 32]).unwrap();
    for in_band in [true, false] {
        let build = |r: &Keyring| {
            ExtIdCodec::builder(r, "user")
                .key_version_in_band(in_band)
                .build()
                .unwrap()
        };
        let old = build(&ring);
        let mut rotated = ring.clone();
        rotated.add(1, &[0x43; 32]).unwrap();
        rotated.set_current(1).unwrap();
        let new = build(&rotated);
        let seqs: Vec<u64> = (0..600).collect();
        let mut ids = vec![ExtId::default(); 600];
        new.encode_seq_batch(&seqs, &mut ids).unwrap();
        for i in (0..600).step_by(3) {
            ids[i] = old.encode_seq(seqs[i]).unwrap();
        }
        let mut got = vec![0u64; 600];
        new.decode_seq_batch(&ids, &mut got).unwrap();
        assert_eq!(got, seqs, "in band: {in_band}");
        let mut short = vec![0u64; 599];
        assert_eq!(
            new.decode_seq_batch(&ids, &mut short),
            Err(Error::OutputLength {
                argument: "out",
                expected: 600,
                len: 599
            })
        );
        let mut out = vec![ExtId::default(); 2];
        assert!(matches!(
            new.encode_seq_batch(&[1, new.max_seq() + 1], &mut out),
            Err(Error::ValueOutOfRange {
                argument: "seq",
                ..
            })
        ));
        assert_eq!(out, vec![ExtId::default(); 2], "nothing written");
        let checked = ExtIdCodec::builder(&rotated, "user")
            .key_version_in_band(in_band)
            .build_self_checked()
            .unwrap();
        checked.encode_seq_batch(&seqs, &mut ids).unwrap();
        assert_eq!(ids[5], new.encode_seq(5).unwrap());
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

/// The module documentation's rate for `check_issued`, per layout: a made-up
/// (well-formed) id passes with probability (max_issued + 1) / (max_seq + 1).
/// With max_issued at a quarter of the range, a quarter of made-up ids pass
/// (within 5 sd) in every layout; a 56-bit rate stated for `aes128` would give
/// none.
#[test]
fn check_issued_passes_made_up_ids_at_the_stated_rate() {
    let ring = ring();
    let mut x = 0x9e37_79b9_7f4a_7c15u128;
    for c in codecs(&ring) {
        let max_issued = c.max_seq() / 4;
        let marks = c.encode(1, 1).unwrap().0; // this layout's version digit
        let (mut candidates, mut passed) = (0u32, 0u32);
        for _ in 0..8192 {
            // A 128-bit xorshift: made-up bytes, then made well-formed.
            x ^= x << 35;
            x ^= x >> 61;
            x ^= x << 7;
            let mut b = x.to_be_bytes();
            match c.mode() {
                ExtIdMode::FeistelUuid => {
                    b[6] = (b[6] & 0x0f) | (marks[6] & 0xf0);
                    b[8] = (b[8] & 0x3f) | 0x80;
                }
                ExtIdMode::CycleWalk => b[0] &= 0x7f,
                ExtIdMode::Aes128 => {}
            }
            // An id of a key version not held (in band) is no candidate.
            if let Ok(d) = c.decode_unverified(&ExtId(b)) {
                candidates += 1;
                passed += u32::from(d.check_issued(max_issued).is_ok());
            }
        }
        let (n, k) = (f64::from(candidates), f64::from(passed));
        let sd = (n * 3.0 / 16.0).sqrt();
        assert!(
            n >= 400.0 && (k - n / 4.0).abs() < 5.0 * sd,
            "{c:?}: {passed} of {candidates}"
        );
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
