//! testdata/vectors/extid.json, written by an independent implementation
//! (testdata/vectors/make_extid.py: HKDF, Feistel, cycle walking, placement and
//! text forms from the docs; AES from the `cryptography` package).

use nonceforge::extid::{ExtId, ExtIdCodec, Keyring, TextForm};
use serde_json::Value;

#[test]
fn every_vector_encodes_decodes_and_spells_the_same() {
    let doc: Value =
        serde_json::from_str(include_str!("../../../testdata/vectors/extid.json")).unwrap();
    let master = hex::decode(doc["master_hex"].as_str().unwrap()).unwrap();
    let rotated = hex::decode(doc["rotated_master_hex"].as_str().unwrap()).unwrap();
    let rows = doc["vectors"].as_array().unwrap();
    assert!(rows.len() >= 60);
    for v in rows {
        let t = v["type"].as_str().unwrap();
        let version = v["key_version"].as_u64().unwrap() as u8;
        let mut ring = Keyring::new(0, &master).unwrap();
        if version == 3 {
            ring.add(3, &rotated).unwrap();
            ring.set_current(3).unwrap();
        }
        let c = ExtIdCodec::builder(&ring, t)
            .mode(v["mode"].as_str().unwrap().parse().unwrap())
            .rounds(v["rounds"].as_u64().unwrap() as u8)
            .uuid_version(v["uuid_version"].as_u64().unwrap() as u8)
            .key_version_in_band(v["key_version_in_band"].as_bool().unwrap())
            .build()
            .unwrap();
        let (seq, rand) = (v["seq"].as_u64().unwrap(), v["rand"].as_u64().unwrap());
        let id = c.encode(seq, rand).unwrap();
        assert_eq!(hex::encode(id.0), v["hex"].as_str().unwrap(), "{v}");
        let d = c.decode_unverified(&id).unwrap();
        assert_eq!((d.seq, d.rand, d.key_version), (seq, rand, version), "{v}");
        // The random half the call without one derives, and decoding's verdict.
        assert_eq!(
            c.derived_rand(seq),
            v["derived_rand"].as_u64().unwrap(),
            "{v}"
        );
        assert_eq!(c.is_derived(&d), v["derived"].as_bool().unwrap(), "{v}");
        if v["default_call"].as_bool().unwrap() {
            assert_eq!(c.encode_seq(seq).unwrap(), id, "the call without rand: {v}");
        }
        let mut batch = [ExtId::default(); 1];
        c.encode_batch(&[(seq, rand)], &mut batch).unwrap();
        assert_eq!(batch[0], id, "batch: {v}");
        for (form, field, prefix, check) in [
            (TextForm::Uuid, "uuid", false, false),
            (TextForm::Base64Url, "base64url", false, false),
            (TextForm::Base32, "base32", false, false),
            (TextForm::Base32, "base32_prefixed_checked", true, true),
        ] {
            let text = c.format(&id, form, prefix, check);
            assert_eq!(text, v[field].as_str().unwrap(), "{field}: {v}");
            assert_eq!(c.parse(&text).unwrap(), id, "{field} parses back");
        }
        assert_eq!(id.to_string(), v["uuid"].as_str().unwrap());
    }
}
