//! `Nonceforge.init/1` after its checks: the ciphers, the generator, the
//! registration.

use crate::atoms;
use crate::errors::{arg_error, core_error};
use crate::registry::{Crypt, Held, Instance, display_name, register, release_replaced};
use nonceforge::cipher::nononcense::{NoNoncenseCiphers, NoNoncenseKeys, SmallCipher, WideCipher};
use nonceforge::{Layout, MachineId, NonceGenerator};
use rustler::types::atom::Atom;
use rustler::{Binary, NifResult, Term};
use std::sync::Mutex;

/// The encryption options, checked by Nonceforge.init/1 first.
#[derive(rustler::NifMap)]
pub(crate) struct CryptOpts<'a> {
    mode: Atom,
    base_key: Option<Binary<'a>>,
    key64: Option<Binary<'a>>,
    key96: Option<Binary<'a>>,
    key128: Option<Binary<'a>>,
    cipher64: Atom,
    cipher96: Atom,
    cipher128: Atom,
    layout: Atom,
}

fn small(a: Atom, option: &str) -> NifResult<SmallCipher> {
    if a == atoms::blowfish() {
        Ok(SmallCipher::Blowfish)
    } else if a == atoms::des3() {
        Ok(SmallCipher::Des3)
    } else if a == atoms::speck() {
        Ok(SmallCipher::Speck)
    } else {
        Err(arg_error(format!(
            "{option} must be :blowfish, :des3 or :speck"
        )))
    }
}

/// Builds an instance's generator and ciphers; `builder` carries the machine
/// id (and a lease's floor).
pub(crate) fn build(
    builder: nonceforge::NonceGeneratorBuilder,
    epoch_unix_ms: i64,
    opts: &CryptOpts<'_>,
) -> NifResult<(NonceGenerator, Crypt)> {
    let builder = builder.epoch_unix_ms_signed(epoch_unix_ms);
    let builder = if opts.layout == atoms::wide() {
        if opts.mode != atoms::nonceforge() {
            return Err(arg_error("layout: :wide needs mode: :nonceforge"));
        }
        builder.layout(Layout::Wide)
    } else if opts.layout == atoms::standard() {
        builder
    } else {
        return Err(arg_error("layout must be :standard or :wide"));
    };
    if opts.mode == atoms::nonceforge() {
        let builder = match &opts.base_key {
            Some(k) => builder.key(k.as_slice()),
            None => builder,
        };
        let generator = builder.build().map_err(core_error)?;
        return Ok((generator, Crypt::Native));
    }
    if opts.mode != atoms::nononcense() {
        return Err(arg_error("mode must be :nononcense or :nonceforge"));
    }
    let cipher128 = if opts.cipher128 == atoms::aes() {
        WideCipher::Aes
    } else if opts.cipher128 == atoms::speck() {
        WideCipher::Speck
    } else {
        return Err(arg_error("cipher128 must be :aes or :speck"));
    };
    let keys = NoNoncenseKeys {
        base_key: opts.base_key.as_ref().map(|b| b.as_slice()),
        key64: opts.key64.as_ref().map(|b| b.as_slice()),
        key96: opts.key96.as_ref().map(|b| b.as_slice()),
        key128: opts.key128.as_ref().map(|b| b.as_slice()),
        cipher64: small(opts.cipher64, "cipher64")?,
        cipher96: small(opts.cipher96, "cipher96")?,
        cipher128,
    };
    let ciphers = NoNoncenseCiphers::new(&keys).map_err(core_error)?;
    let generator = builder.build().map_err(core_error)?;
    Ok((generator, Crypt::Compat(Box::new(ciphers))))
}

/// `Nonceforge.init/1` after its checks: a static machine id.
#[rustler::nif(schedule = "DirtyCpu")]
pub(crate) fn nif_init<'a>(
    name: Term<'a>,
    machine_id: u64,
    epoch_unix_ms: i64,
    opts: CryptOpts<'a>,
) -> NifResult<Atom> {
    // Either layout's range here; the build refuses an id above 511 in the
    // standard layout.
    let machine = MachineId::new_in(Layout::Wide, machine_id).map_err(core_error)?;
    let (generator, crypt) = build(NonceGenerator::builder(machine), epoch_unix_ms, &opts)?;
    install(name, generator, crypt, None)?;
    Ok(atoms::ok())
}

/// Registers a new instance under `name` and releases the lease of the one it
/// replaces, if that one held its own.
pub(crate) fn install(
    name: Term<'_>,
    generator: NonceGenerator,
    crypt: Crypt,
    held: Option<Held>,
) -> NifResult<()> {
    let instance = Instance {
        generator,
        crypt,
        lease: Mutex::new(held),
        name: display_name(name),
    };
    release_replaced(register(name, instance)?);
    Ok(())
}
