//! External ids in SQL: `extid_encode(type, seq, rand) → uuid` and
//! `extid_decode(type, id) → (seq, rand)`, with the master key from the setting
//! `nonceforge.extid_key` (hex or base64 of at least 32 bytes; superuser-only,
//! left out of SHOW ALL). The codec is feistel-uuid (UUIDv8, key version 0 in band).

use crate::errors::{invalid, raise};
use nonceforge_core::extid::{ExtIdCodec, Keyring};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use sha2::Digest;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;

static EXTID_KEY: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

pub(crate) fn register_settings() {
    GucRegistry::define_string_guc(
        c"nonceforge.extid_key",
        c"Master key for extid_encode/extid_decode (hex or base64, at least 32 bytes).",
        c"Superuser-only; never shown by SHOW ALL. Per-type keys are derived from it with HKDF-SHA256.",
        &EXTID_KEY,
        GucContext::Suset,
        GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
    );
}

thread_local! {
    /// Codecs by (type, SHA-256 of the key text): built once per backend.
    static CODECS: RefCell<HashMap<(String, [u8; 32]), ExtIdCodec>> = RefCell::new(HashMap::new());
}

/// A key setting's bytes (hex or base64); `setting` names it in errors.
pub(crate) fn decode_key(text: &str, setting: &str) -> Vec<u8> {
    use base64::Engine;
    let t = text.trim();
    let bytes = if t.len().is_multiple_of(2) && t.bytes().all(|b| b.is_ascii_hexdigit()) {
        hex::decode(t).ok()
    } else {
        base64::engine::general_purpose::STANDARD.decode(t).ok()
    };
    bytes.unwrap_or_else(|| {
        invalid(format!(
            "{setting} must be hex or base64 of at least 32 bytes"
        ))
    })
}

fn with_codec<T>(type_name: &str, f: impl FnOnce(&ExtIdCodec) -> T) -> T {
    let key_text = EXTID_KEY.get().unwrap_or_else(|| {
        invalid("nonceforge.extid_key is not set: SET nonceforge.extid_key = '<hex or base64 of 32+ bytes>' (as a superuser)".into())
    });
    let key_text = key_text
        .to_str()
        .unwrap_or_else(|_| invalid("nonceforge.extid_key is not UTF-8".into()));
    let fingerprint: [u8; 32] = sha2::Sha256::digest(key_text.as_bytes()).into();
    CODECS.with(|cell| {
        let mut codecs = cell.borrow_mut();
        let slot = (type_name.to_owned(), fingerprint);
        if !codecs.contains_key(&slot) {
            let key = zeroize::Zeroizing::new(decode_key(key_text, "nonceforge.extid_key"));
            let ring = Keyring::new(0, &key).unwrap_or_else(|e| raise(e));
            let codec = ExtIdCodec::new(&ring, type_name).unwrap_or_else(|e| raise(e));
            codecs.insert(slot.clone(), codec);
        }
        f(&codecs[&slot])
    })
}

fn unsigned(argument: &str, v: i64) -> u64 {
    u64::try_from(v).unwrap_or_else(|_| invalid(format!("{argument} = {v} must not be negative")))
}

/// The external id of (seq, rand) for ids of type `type_name`. STABLE, not
/// IMMUTABLE: the result depends on the setting `nonceforge.extid_key`.
#[pg_extern(stable, strict, parallel_safe)]
fn extid_encode(type_name: &str, seq: i64, rand: i64) -> pgrx::Uuid {
    let (seq, rand) = (unsigned("seq", seq), unsigned("rand", rand));
    let id = with_codec(type_name, |c| c.encode(seq, rand)).unwrap_or_else(|e| raise(e));
    pgrx::Uuid::from_bytes(id.0)
}

/// The (seq, rand) of an external id of type `type_name` (STABLE, as above).
#[pg_extern(stable, strict, parallel_safe)]
fn extid_decode(
    type_name: &str,
    id: pgrx::Uuid,
) -> TableIterator<'static, (name!(seq, i64), name!(rand, i64))> {
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let d = with_codec(type_name, |c| c.decode(&ext)).unwrap_or_else(|e| raise(e));
    // seq < 2^56 and rand < 2^62 here: both fit a bigint.
    TableIterator::once((d.seq as i64, d.rand as i64))
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn round_trip() {
        Spi::run("SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'").unwrap();
        let ok = Spi::get_one::<bool>(
            "SELECT (SELECT (seq, rand) = (42::bigint, 7::bigint) FROM extid_decode('user', extid_encode('user', 42, 7)))
                AND uuid_extract_version(extid_encode('user', 42, 7)) = 8
                AND extid_encode('user', 42, 7) <> extid_encode('order', 42, 7)",
        );
        assert_eq!(ok.unwrap(), Some(true));
    }

    #[pg_test(error = "nonceforge: seq = -1 must not be negative")]
    fn negative_seq() {
        Spi::run("SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'").unwrap();
        Spi::run("SELECT extid_encode('user', -1, 7)").unwrap();
    }

    #[pg_test(
        error = "nonceforge: not an id of this codec: a feistel-uuid id is a version 8 UUID (its 13th hex digit is 8)"
    )]
    fn not_ours() {
        Spi::run("SET nonceforge.extid_key = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'").unwrap();
        Spi::run("SELECT * FROM extid_decode('user', '01838576-137b-af9c-a637-be6b8d32af6e')")
            .unwrap();
    }
}
