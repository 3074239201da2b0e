//! Time-prefixed ids: UUIDv7 and tuid6, their compact text, their timestamps.

use crate::{core_err, invalid};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use nonceforge::extid::ExtId;

/// A UUIDv7 (RFC 9562), 16 bytes.
#[napi]
pub fn uuidv7_bytes() -> Buffer {
    nonceforge::uuid::uuidv7().to_vec().into()
}

/// A tuid6 (time-prefixed, version 6 layout), 16 bytes.
#[napi]
pub fn tuid6_bytes() -> Buffer {
    nonceforge::uuid::tuid6().to_vec().into()
}

/// A UUIDv7 in the canonical text form.
#[napi]
pub fn uuidv7() -> String {
    hyphenated(&nonceforge::uuid::uuidv7())
}

/// A tuid6 in the canonical text form.
#[napi]
pub fn tuid6() -> String {
    hyphenated(&nonceforge::uuid::tuid6())
}

/// A UUIDv7, compact (22 characters of base64url).
#[napi]
pub fn uuidv7_compact() -> String {
    nonceforge::uuid::to_compact(&nonceforge::uuid::uuidv7())
}

/// A tuid6, compact (22 characters of base64url).
#[napi]
pub fn tuid6_compact() -> String {
    nonceforge::uuid::to_compact(&nonceforge::uuid::tuid6())
}

/// The 16 bytes of a compact id.
#[napi(catch_unwind)]
pub fn from_compact(text: String) -> Result<Buffer> {
    Ok(nonceforge::uuid::from_compact::<16>(&text)
        .map_err(core_err)?
        .to_vec()
        .into())
}

/// The Unix milliseconds in the first 48 bits of a UUIDv7 or tuid6.
#[napi(catch_unwind)]
pub fn uuid_unix_ms(id: &[u8]) -> Result<f64> {
    let id: &[u8; 16] = id
        .try_into()
        .map_err(|_| invalid(format!("id must be 16 bytes, got {}", id.len())))?;
    Ok(nonceforge::uuid::unix_ms(id) as f64)
}

fn hyphenated(b: &[u8; 16]) -> String {
    ExtId(*b).to_uuid_string()
}
