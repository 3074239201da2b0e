//! UUIDv7, tuid6 and their compact text.

use crate::errors::arg_error;
use crate::nonces::binary;
use rustler::{Binary, Env, NifResult, Term};

#[rustler::nif]
pub(crate) fn uuidv7<'a>(env: Env<'a>) -> Term<'a> {
    binary(env, &nonceforge::uuid::uuidv7())
}

#[rustler::nif]
pub(crate) fn tuid6<'a>(env: Env<'a>) -> Term<'a> {
    binary(env, &nonceforge::uuid::tuid6())
}

#[rustler::nif]
pub(crate) fn nif_to_compact(id: Binary<'_>) -> NifResult<String> {
    match id.len() {
        16 | 32 => Ok(nonceforge::uuid::to_compact(id.as_slice())),
        n => Err(arg_error(format!(
            "to_compact: id must be 16 bytes (a UUID, tuid6) or 32 bytes (a stuid), got {n} bytes"
        ))),
    }
}

#[rustler::nif]
pub(crate) fn nif_from_compact<'a>(env: Env<'a>, text: &str) -> NifResult<Term<'a>> {
    let r = match text.len() {
        22 => nonceforge::uuid::from_compact::<16>(text).map(|b| binary(env, &b)),
        _ => nonceforge::uuid::from_compact::<32>(text).map(|b| binary(env, &b)),
    };
    r.map_err(|e| arg_error(format!("from_compact: {e}")))
}

#[rustler::nif]
pub(crate) fn nif_uuid_unix_ms(id: Binary<'_>) -> NifResult<u64> {
    let id: &[u8; 16] = id
        .as_slice()
        .try_into()
        .map_err(|_| arg_error("uuid_unix_ms: id must be a 16-byte binary"))?;
    Ok(nonceforge::uuid::unix_ms(id))
}
