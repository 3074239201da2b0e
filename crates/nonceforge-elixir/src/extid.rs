//! `Nonceforge.ExtId`: the external-id codec, one resource per codec (freed by
//! the GC when the Elixir side lets go of it).

use crate::{arg_error, core_error};
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

/// A codec: master `key` (32+ bytes, wiped after the keys are derived), key
/// version, mode, Feistel rounds (2 or 4), UUID version of feistel-uuid ids (8 or 4).
#[rustler::nif(schedule = "DirtyCpu")]
fn nif_extid_new(
    key: Binary<'_>,
    type_name: &str,
    key_version: u8,
    mode: Atom,
    rounds: u8,
    uuid_version: u8,
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
    let ring = Keyring::new(key_version, key.as_slice()).map_err(core_error)?;
    let codec = ExtIdCodec::builder(&ring, type_name)
        .mode(mode)
        .rounds(rounds)
        .uuid_version(uuid_version)
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

#[rustler::nif]
fn nif_extid_encode<'a>(
    env: Env<'a>,
    codec: ResourceArc<Codec>,
    seq: u64,
    rand: u64,
) -> NifResult<Term<'a>> {
    let id = codec.0.encode(seq, rand).map_err(core_error)?;
    Ok(crate::binary(env, &id.0))
}

#[rustler::nif]
fn nif_extid_decode(codec: ResourceArc<Codec>, id: Binary<'_>) -> NifResult<(u64, u64, u8)> {
    let d = codec.0.decode(&id_of(id)?).map_err(core_error)?;
    Ok((d.seq, d.rand, d.key_version))
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
    Ok(crate::binary(env, &id.0))
}
