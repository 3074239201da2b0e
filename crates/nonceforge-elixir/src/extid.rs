//! `Nonceforge.ExtId`: the external-id codec, one resource per codec (freed by
//! the GC when the Elixir side lets go of it).

use crate::errors::{arg_error, core_error};
use nonceforge::extid::{ExtId, ExtIdCodec, ExtIdMode, Keyring, TextForm};
use rustler::types::atom::Atom;
use rustler::{Binary, Env, NifResult, ResourceArc, Term};

mod atoms {
    rustler::atoms! { feistel_uuid, aes128, cycle_walk, uuid, base64url, base32 }
}

/// A codec for one type of id.
pub struct Codec(ExtIdCodec);

#[rustler::resource_impl]
impl rustler::Resource for Codec {}

pub(crate) fn load(_env: Env) -> bool {
    true
}

/// A codec: master keys by version (`{version, key}`, 32+ bytes each, wiped
/// after the keys are derived), the current version, mode, Feistel rounds
/// (2 or 4), UUID version of feistel-uuid ids (8 or 4), and whether the key
/// version travels in band.
#[rustler::nif(schedule = "DirtyCpu")]
fn nif_extid_new(
    keys: Vec<(u8, Binary<'_>)>,
    type_name: &str,
    current: u8,
    mode: Atom,
    rounds: u8,
    uuid_version: u8,
    in_band: bool,
) -> NifResult<ResourceArc<Codec>> {
    let mode = if mode == atoms::feistel_uuid() {
        ExtIdMode::FeistelUuid
    } else if mode == atoms::aes128() {
        ExtIdMode::Aes128
    } else if mode == atoms::cycle_walk() {
        ExtIdMode::CycleWalk
    } else {
        return Err(arg_error(
            "mode must be :feistel_uuid, :aes128 or :cycle_walk",
        ));
    };
    let mut ring: Option<Keyring> = None;
    for (version, key) in &keys {
        match &mut ring {
            None => ring = Some(Keyring::new(*version, key.as_slice()).map_err(core_error)?),
            Some(r) => r.add(*version, key.as_slice()).map_err(core_error)?,
        }
    }
    let mut ring = ring.ok_or_else(|| arg_error("a keyring holds at least one key"))?;
    ring.set_current(current).map_err(core_error)?;
    let codec = ExtIdCodec::builder(&ring, type_name)
        .mode(mode)
        .rounds(rounds)
        .uuid_version(uuid_version)
        .key_version_in_band(in_band)
        .build()
        .map_err(core_error)?;
    Ok(ResourceArc::new(Codec(codec)))
}

fn id_of(id: Binary<'_>) -> NifResult<ExtId> {
    let bytes: [u8; 16] = id.as_slice().try_into().map_err(|_| {
        arg_error(format!(
            "id must be a 16-byte binary, got {} bytes",
            id.len()
        ))
    })?;
    Ok(ExtId(bytes))
}

/// The id of (seq, rand); `rand` nil: derived from seq (the core's `encode_seq`).
#[rustler::nif]
fn nif_extid_encode<'a>(
    env: Env<'a>,
    codec: ResourceArc<Codec>,
    seq: u64,
    rand: Option<u64>,
) -> NifResult<Term<'a>> {
    let id = match rand {
        Some(r) => codec.0.encode(seq, r),
        None => codec.0.encode_seq(seq),
    }
    .map_err(core_error)?;
    Ok(crate::nonces::binary(env, &id.0))
}

#[rustler::nif]
fn nif_extid_derived_rand(codec: ResourceArc<Codec>, seq: u64) -> u64 {
    codec.0.derived_rand(seq)
}

/// `{seq, rand, key_version, derived}`, unverified; `version` nil: the id's own (or the current).
#[rustler::nif]
fn nif_extid_decode(
    codec: ResourceArc<Codec>,
    id: Binary<'_>,
    version: Option<u8>,
) -> NifResult<(u64, u64, u8, bool)> {
    let id = id_of(id)?;
    let d = match version {
        Some(v) => codec.0.decode_unverified_with_key_version(&id, v),
        None => codec.0.decode_unverified(&id),
    }
    .map_err(core_error)?;
    Ok((d.seq, d.rand, d.key_version, codec.0.is_derived(&d)))
}

/// The core's checked decode (`find`: the id's key version, or each held
/// version for ids that carry none; only `version` when given):
/// `{seq, rand, key_version}`, or nil for an id this codec did not make.
#[rustler::nif]
fn nif_extid_find(
    codec: ResourceArc<Codec>,
    id: Binary<'_>,
    version: Option<u8>,
) -> NifResult<Option<(u64, u64, u8)>> {
    let id = id_of(id)?;
    let d = codec.0.find(&id, version).map_err(core_error)?;
    Ok(d.map(|d| (d.seq, d.rand, d.key_version)))
}

fn form(a: Atom) -> NifResult<TextForm> {
    if a == atoms::uuid() {
        Ok(TextForm::Uuid)
    } else if a == atoms::base64url() {
        Ok(TextForm::Base64Url)
    } else if a == atoms::base32() {
        Ok(TextForm::Base32)
    } else {
        Err(arg_error("form must be :uuid, :base64url or :base32"))
    }
}

#[rustler::nif]
fn nif_extid_format(
    codec: ResourceArc<Codec>,
    id: Binary<'_>,
    text_form: Atom,
    prefix: bool,
    check: bool,
) -> NifResult<String> {
    Ok(codec.0.format(&id_of(id)?, form(text_form)?, prefix, check))
}

#[rustler::nif]
fn nif_extid_parse<'a>(env: Env<'a>, codec: ResourceArc<Codec>, text: &str) -> NifResult<Term<'a>> {
    let id = codec.0.parse(text).map_err(core_error)?;
    Ok(crate::nonces::binary(env, &id.0))
}
