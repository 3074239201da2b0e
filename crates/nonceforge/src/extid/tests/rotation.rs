//! Key rotation: old ids resolve while their key is held, the lookup tries
//! held versions, an explicit version must match, batches across versions.

use super::*;

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
