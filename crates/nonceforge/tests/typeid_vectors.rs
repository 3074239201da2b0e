//! testdata/vectors/typeid.json: TypeID's published conformance cases (spec
//! v0.3.0). Our base32 text form is TypeID's, to the letter.

use nonceforge::extid::{ExtId, check_type_name};
use serde_json::Value;

fn cases(kind: &str) -> Vec<Value> {
    let doc: Value =
        serde_json::from_str(include_str!("../../../testdata/vectors/typeid.json")).unwrap();
    doc[kind].as_array().unwrap().clone()
}

#[test]
fn valid_typeids_decode_to_their_uuid_and_encode_back() {
    let valid = cases("valid");
    assert_eq!(valid.len(), 9);
    for c in valid {
        let (name, text, prefix) = (
            &c["name"],
            c["typeid"].as_str().unwrap(),
            c["prefix"].as_str().unwrap(),
        );
        let uuid = ExtId::parse_uuid(c["uuid"].as_str().unwrap()).unwrap();
        let prefix = (!prefix.is_empty()).then_some(prefix);
        if let Some(p) = prefix {
            check_type_name(p).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let parsed =
            ExtId::parse_base32(text, prefix, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(parsed, uuid, "{name}");
        assert_eq!(uuid.to_base32(prefix, false), text, "{name}");
    }
}

#[test]
fn invalid_typeids_are_refused() {
    let invalid = cases("invalid");
    assert_eq!(invalid.len(), 19);
    for c in invalid {
        let (name, text) = (&c["name"], c["typeid"].as_str().unwrap());
        // Whatever prefix a caller would expect — the text's own, or none —
        // the string is refused: by the prefix rule, or by the parser.
        let own_prefix = text.rfind('_').map(|at| &text[..at]);
        let prefix_ok = own_prefix.is_some_and(|p| check_type_name(p).is_ok());
        let as_typed = own_prefix.map(|p| ExtId::parse_base32(text, Some(p), false));
        let bare = ExtId::parse_base32(text, None, false);
        assert!(bare.is_err(), "{name}: {text:?} parsed without a prefix");
        if prefix_ok {
            assert!(
                as_typed.is_some_and(|r| r.is_err()),
                "{name}: {text:?} parsed with its prefix"
            );
        }
    }
}
