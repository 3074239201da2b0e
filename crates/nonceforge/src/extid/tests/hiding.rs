//! What the ids hide (prefixes, XOR relations, the key version, refusal texts),
//! keys kept apart by layout and type, and forgeries refused at the stated rates.

use super::*;

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
