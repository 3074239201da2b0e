//! External ids in SQL: `extid_encode(type, seq, rand) → uuid` and
//! `extid_decode(type, id) → (seq, rand)`, with the master key read at server
//! start from the file named by `nonceforge.extid_key_file` (see `settings`:
//! never from a setting, and only with the library preloaded). The codec is
//! feistel-uuid (UUIDv8, key version 0 in band).

use crate::errors::{invalid, raise};
use crate::settings::{self, Key};
use nonceforge_core::extid::{ExtIdCodec, Keyring};
use pgrx::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// Codecs by type: built once per backend (the key is fixed at server start).
    static CODECS: RefCell<HashMap<String, ExtIdCodec>> = RefCell::new(HashMap::new());
}

fn with_codec<T>(function: &str, type_name: &str, f: impl FnOnce(&ExtIdCodec) -> T) -> T {
    let key = settings::key(function, Key::ExtId);
    CODECS.with(|cell| {
        let mut codecs = cell.borrow_mut();
        if !codecs.contains_key(type_name) {
            let ring = Keyring::new(0, key).unwrap_or_else(|e| raise(e));
            let codec = ExtIdCodec::new(&ring, type_name).unwrap_or_else(|e| raise(e));
            codecs.insert(type_name.to_owned(), codec);
        }
        f(&codecs[type_name])
    })
}

fn unsigned(argument: &str, v: i64) -> u64 {
    u64::try_from(v).unwrap_or_else(|_| invalid(format!("{argument} = {v} must not be negative")))
}

/// The external id of (seq, rand) for ids of type `type_name`. STABLE, not
/// IMMUTABLE: the result depends on the key file read at server start.
#[pg_extern(stable, strict, parallel_safe)]
fn extid_encode(type_name: &str, seq: i64, rand: i64) -> pgrx::Uuid {
    let (seq, rand) = (unsigned("seq", seq), unsigned("rand", rand));
    let id =
        with_codec("extid_encode", type_name, |c| c.encode(seq, rand)).unwrap_or_else(|e| raise(e));
    pgrx::Uuid::from_bytes(id.0)
}

/// The (seq, rand) of an external id of type `type_name` (STABLE, as above).
#[pg_extern(stable, strict, parallel_safe)]
fn extid_decode(
    type_name: &str,
    id: pgrx::Uuid,
) -> TableIterator<'static, (name!(seq, i64), name!(rand, i64))> {
    let ext = nonceforge_core::extid::ExtId(*id.as_bytes());
    let d = with_codec("extid_decode", type_name, |c| c.decode(&ext)).unwrap_or_else(|e| raise(e));
    // seq < 2^56 and rand < 2^62 here: both fit a bigint.
    TableIterator::once((d.seq as i64, d.rand as i64))
}
