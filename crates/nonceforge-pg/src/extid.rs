//! External ids in SQL: `extid_encode(type, seq) → uuid` (the random half
//! derived from seq, as every face's call without one), `extid_seq(type, id)
//! → seq` and `extid_decode(type, id) → (seq, rand)` (refusing ids not made
//! so), `extid_encode(type, seq, rand)` (a stored random half) and
//! `extid_inspect(type, id) → (seq, rand, key_version, derived)` (unverified:
//! for ids with a stored random half), with the
//! master keys read at server start from the files named by
//! `nonceforge.extid_key_file` (the current key version,
//! `nonceforge.extid_key_version`) and `nonceforge.extid_old_key_files` (older
//! versions, for decoding) — see `settings`: never from a setting, and only
//! with the library preloaded. The codec is feistel-uuid (UUIDv8, key version
//! in band).
//!
//! Both use the server's key, so neither is executable by PUBLIC after
//! `CREATE EXTENSION`: grant EXECUTE to the roles that may make and read ids.
//!
//! A backend keeps the codecs of the [`CODEC_CACHE`] type names it used last
//! (each costs an HKDF derivation and a key schedule to make): memory stays
//! bounded whatever names callers pass.

use crate::errors::{fail, invalid, raise};
use crate::keys::{self, Key};
use nonceforge_core::extid::{ExtIdCodec, Keyring, check_type_name};
use pgrx::PgSqlErrorCode;
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;

/// How many codecs a backend keeps.
pub(crate) const CODEC_CACHE: usize = 64;

/// Codecs by type name, least recently used dropped first.
#[derive(Default)]
struct Codecs {
    by_name: HashMap<String, (ExtIdCodec, u64)>,
    /// Advances on every use: the entry with the smallest stamp is the oldest.
    clock: u64,
}

impl Codecs {
    fn get_or_make(&mut self, name: &str, make: impl FnOnce() -> ExtIdCodec) -> &ExtIdCodec {
        self.clock += 1;
        let stamp = self.clock;
        if !self.by_name.contains_key(name) {
            let codec = make();
            if self.by_name.len() >= CODEC_CACHE
                && let Some(oldest) = self
                    .by_name
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(k, _)| k.clone())
            {
                self.by_name.remove(&oldest);
            }
            self.by_name.insert(name.to_owned(), (codec, stamp));
        }
        let entry = self.by_name.get_mut(name).expect("present above");
        entry.1 = stamp;
        &entry.0
    }
}

thread_local! {
    /// Codecs by type (the key is fixed at server start).
    static CODECS: RefCell<Codecs> = RefCell::new(Codecs::default());
}

fn with_codec<T>(function: &str, type_name: &str, f: impl FnOnce(&ExtIdCodec) -> T) -> T {
    // The name's rule first, its length before anything: a name of any size
    // costs nothing more than its check (the error quotes its first 64
    // characters), and the cache only ever holds names of 63 bytes at most.
    check_type_name(type_name).unwrap_or_else(|e| raise(e));
    let key = keys::key(function, Key::ExtId);
    CODECS.with(|cell| {
        let mut codecs = cell.borrow_mut();
        f(codecs.get_or_make(type_name, || {
            let versions = keys::extid_versions().expect("loaded with the key");
            let mut ring = Keyring::new(versions.current, key).unwrap_or_else(|e| raise(e));
            for (v, k) in &versions.old {
                ring.add(*v, k).unwrap_or_else(|e| raise(e));
            }
            ExtIdCodec::builder(&ring, type_name)
                .key_version_in_band(versions.in_band)
                .build()
                .unwrap_or_else(|e| raise(e))
        }))
    })
}

fn unsigned(argument: &str, v: i64) -> u64 {
    u64::try_from(v).unwrap_or_else(|_| invalid(format!("{argument} = {v} must not be negative")))
}

/// Raises a core error; an id of a key version this server does not hold
/// says how a DBA adds it (the core's words are for a program's keyring).
fn raise_extid(function: &str, e: nonceforge_core::Error) -> ! {
    if let nonceforge_core::Error::UnknownKeyVersion { version } = e {
        fail(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!(
                "{function}: the id was made under key version {version}, which this server does not hold"
            ),
            Some(
                "A superuser can add that version's key file to nonceforge.extid_old_key_files (VERSION:PATH, mode 0600) and restart the server.",
            ),
        );
    }
    if let nonceforge_core::Error::KeyVersionMismatch { .. } = e {
        // The core's rule (an id that carries its version is read under it,
        // never under the one given), in the function's words.
        invalid(format!("{function}: {e}"));
    }
    raise(e)
}

/// The external id of `seq` for ids of type `type_name`, its random half
/// derived from seq under the key (every face's call without a random half:
/// the same id as theirs). STABLE, not IMMUTABLE: the result depends on the
/// key file read at server start.
#[pg_extern(stable, strict, parallel_safe, name = "extid_encode")]
fn extid_encode_seq(type_name: &str, seq: i64) -> pgrx::Uuid {
    let seq = unsigned("seq", seq);
    let id = with_codec("extid_encode", type_name, |c| c.encode_seq(seq))
        .unwrap_or_else(|e| raise_extid("extid_encode", e));
    pgrx::Uuid::from_bytes(id.0)
}

/// The sequence number of an id made by `extid_encode(type, seq)`; any other
/// id (made up, of another type or key, or made with a stored random half)
/// is refused (22023) — the lookup-by-external-id function.
#[pg_extern(stable, strict, parallel_safe)]
fn extid_seq(type_name: &str, id: pgrx::Uuid) -> i64 {
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let seq = with_codec("extid_seq", type_name, |c| c.decode_seq(&ext))
        .unwrap_or_else(|e| refuse_checked("extid_seq", type_name, e));
    // seq < 2^56: it fits a bigint.
    seq as i64
}

/// The checked decodes' refusal: for an id not made by `extid_encode(type,
/// seq)`, in SQL's words — which call makes the ids accepted, not the
/// sequence number the id decodes to (the true one, for an id made with a
/// stored random half); any other error as the core words it.
fn refuse_checked(function: &str, type_name: &str, e: nonceforge_core::Error) -> ! {
    if let nonceforge_core::Error::NotDerived { .. } = e {
        invalid(format!(
            "{function}: the id was not made by extid_encode('{type_name}', seq) under this server's keys"
        ));
    }
    raise_extid(function, e)
}

/// The key version argument of the three-argument forms: 0..15.
fn key_version_arg(function: &str, v: i32) -> u8 {
    u8::try_from(v)
        .ok()
        .filter(|v| *v <= nonceforge_core::extid::MAX_KEY_VERSION)
        .unwrap_or_else(|| invalid(format!("{function}: key_version = {v} must be in 0..15")))
}

/// Decodes `id` under key `version` (for ids that do not carry it:
/// `nonceforge.extid_version_in_band = off`); an id that carries another
/// version is refused by the core rather than read under the wrong key.
fn decode_with_version(
    function: &str,
    type_name: &str,
    id: pgrx::Uuid,
    version: i32,
) -> (nonceforge_core::extid::Decoded, bool) {
    let v = key_version_arg(function, version);
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let (d, derived) = with_codec(function, type_name, |c| {
        c.decode_unverified_with_key_version(&ext, v)
            .map(|d| (d, c.is_derived(&d)))
    })
    .unwrap_or_else(|e| raise_extid(function, e));
    (d, derived)
}

/// `extid_seq` for an id made under key `key_version`, for ids that do not
/// carry their version (`nonceforge.extid_version_in_band = off`).
#[pg_extern(stable, strict, parallel_safe, name = "extid_seq")]
fn extid_seq_version(type_name: &str, id: pgrx::Uuid, key_version: i32) -> i64 {
    let (d, derived) = decode_with_version("extid_seq", type_name, id, key_version);
    if !derived {
        invalid(format!(
            "extid_seq: the id was not made by extid_encode('{type_name}', seq) under key version {key_version}"
        ));
    }
    d.seq as i64
}

/// `extid_inspect` for an id made under key `key_version` (as above).
#[pg_extern(stable, strict, parallel_safe, name = "extid_inspect")]
fn extid_inspect_version(
    type_name: &str,
    id: pgrx::Uuid,
    key_version: i32,
) -> TableIterator<
    'static,
    (
        name!(seq, i64),
        name!(rand, i64),
        name!(key_version, i32),
        name!(derived, bool),
    ),
> {
    let (d, derived) = decode_with_version("extid_inspect", type_name, id, key_version);
    TableIterator::once((d.seq as i64, d.rand as i64, d.key_version as i32, derived))
}

/// The external id of (seq, rand) for ids of type `type_name`: `rand` fresh
/// and random per row, stored beside it (the Plan B post's design). STABLE,
/// as above.
#[pg_extern(stable, strict, parallel_safe)]
fn extid_encode(type_name: &str, seq: i64, rand: i64) -> pgrx::Uuid {
    let (seq, rand) = (unsigned("seq", seq), unsigned("rand", rand));
    let id = with_codec("extid_encode", type_name, |c| c.encode(seq, rand))
        .unwrap_or_else(|e| raise_extid("extid_encode", e));
    pgrx::Uuid::from_bytes(id.0)
}

/// The (seq, rand) of an id made by `extid_encode(type, seq)`; any other id is
/// refused (22023), as `extid_seq` refuses it: the obvious decode is the
/// checked one. Ids made with a stored random half are read, unverified,
/// with `extid_inspect` (STABLE, as above).
#[pg_extern(stable, strict, parallel_safe)]
fn extid_decode(
    type_name: &str,
    id: pgrx::Uuid,
) -> TableIterator<'static, (name!(seq, i64), name!(rand, i64))> {
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let d = with_codec("extid_decode", type_name, |c| c.decode(&ext))
        .unwrap_or_else(|e| refuse_checked("extid_decode", type_name, e));
    // seq < 2^56 and rand < 2^62 here: both fit a bigint.
    TableIterator::once((d.seq as i64, d.rand as i64))
}

/// Everything an external id of type `type_name` decodes to, unverified (any
/// well-formed id decodes): seq, rand, the key version it was made under, and
/// `derived` (its random half is the one `extid_encode(type, seq)` derives:
/// made by this server's keys). The read for ids made with a stored random
/// half: compare `rand` with the row's before trusting the id.
#[pg_extern(stable, strict, parallel_safe)]
fn extid_inspect(
    type_name: &str,
    id: pgrx::Uuid,
) -> TableIterator<
    'static,
    (
        name!(seq, i64),
        name!(rand, i64),
        name!(key_version, i32),
        name!(derived, bool),
    ),
> {
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let (d, derived) = with_codec("extid_inspect", type_name, |c| {
        c.decode_unverified(&ext).map(|d| (d, c.is_derived(&d)))
    })
    .unwrap_or_else(|e| raise_extid("extid_inspect", e));
    TableIterator::once((d.seq as i64, d.rand as i64, d.key_version as i32, derived))
}

extension_sql!(
    r#"
-- They use the server's key: only the roles an administrator names may call them.
REVOKE EXECUTE ON FUNCTION @extschema@.extid_encode(text, bigint, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_encode(text, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_seq(text, uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_decode(text, uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_inspect(text, uuid) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_seq(text, uuid, integer) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION @extschema@.extid_inspect(text, uuid, integer) FROM PUBLIC;
"#,
    name = "extid_grants",
    requires = [
        extid_encode,
        extid_encode_seq,
        extid_seq,
        extid_decode,
        extid_inspect,
        extid_seq_version,
        extid_inspect_version
    ]
);

#[cfg(test)]
mod lru_tests {
    use super::*;

    /// A valid type name for `i` (a-z only): "t" and `i` in base 26.
    fn name(mut i: u32) -> String {
        let mut s = String::from("t");
        loop {
            s.push(char::from(b'a' + (i % 26) as u8));
            i /= 26;
            if i == 0 {
                return s;
            }
        }
    }

    #[test]
    fn many_names_keep_the_cache_bounded() {
        let ring = Keyring::new(0, &[7u8; 32]).unwrap();
        let mut codecs = Codecs::default();
        for i in 0..200_000u32 {
            let name = name(i);
            codecs.get_or_make(&name, || ExtIdCodec::new(&ring, &name).unwrap());
            // A name used all along stays (least recently used goes first).
            codecs.get_or_make("user", || ExtIdCodec::new(&ring, "user").unwrap());
            assert!(codecs.by_name.len() <= CODEC_CACHE);
        }
        assert_eq!(codecs.by_name.len(), CODEC_CACHE);
        assert!(codecs.by_name.contains_key("user"));
        assert!(codecs.by_name.contains_key(&name(199_999)));
        assert!(!codecs.by_name.contains_key(&name(0)));
    }
}
