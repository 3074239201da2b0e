//! Batches of nonces, taking nonces apart, and an instance's state.

use crate::atoms;
use crate::errors::{arg_error, core_error};
use crate::nonces::bits_of;
use crate::registry::{Crypt, instance, instance_error};
use nonceforge::NonceKind;
use rustler::types::atom::Atom;
use rustler::{Binary, Env, NewBinary, NifResult, Term};

fn kind_of(kind: Term<'_>) -> NifResult<NonceKind> {
    match kind.decode::<Atom>() {
        Ok(a) if a == atoms::counter() => Ok(NonceKind::Counter),
        Ok(a) if a == atoms::sortable() => Ok(NonceKind::Sortable),
        Ok(a) if a == atoms::encrypted() => Ok(NonceKind::Encrypted),
        _ => Err(arg_error(format!(
            "nonces: kind must be :counter, :sortable or :encrypted, got: {kind:?}"
        ))),
    }
}

/// `count` nonces in one binary: one reservation of the counter.
pub(crate) fn batch<'a>(
    env: Env<'a>,
    name: Term<'a>,
    kind: Term<'a>,
    bits: Term<'a>,
    count: Term<'a>,
) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let kind = kind_of(kind)?;
    let bits = bits_of(bits, "nonces", 4)?;
    let count: usize = count
        .decode::<u64>()
        .ok()
        .filter(|&c| c <= 1 << 24)
        .ok_or_else(|| {
            arg_error(format!(
                "nonces: count must be an integer from 0 to 16777216, got: {count:?}"
            ))
        })? as usize;
    let len = bits.bytes();
    let mut out = NewBinary::new(env, count * len);
    let buf = out.as_mut_slice();
    match (&i.crypt, kind) {
        (Crypt::Compat(c), NonceKind::Encrypted) => {
            let source_bits = c.plain_bits(bits).map_err(core_error)?;
            let slen = source_bits.bytes();
            let mut plain = vec![0u8; count * slen];
            i.generator
                .fill(NonceKind::Counter, source_bits, &mut plain)
                .map_err(core_error)?;
            for (o, p) in buf.chunks_exact_mut(len).zip(plain.chunks_exact(slen)) {
                // A new binary's memory is not zeroed: a padded 96-bit nonce's tail must be.
                o[..slen].copy_from_slice(p);
                o[slen..].fill(0);
                c.crypt(o, true).map_err(core_error)?;
            }
        }
        _ => i
            .generator
            .fill(kind, bits, buf)
            .map_err(|e| instance_error(i, e))?,
    }
    Ok(Binary::from(out).to_term(env))
}

#[rustler::nif]
pub(crate) fn nif_nonces<'a>(
    env: Env<'a>,
    name: Term<'a>,
    kind: Term<'a>,
    bits: Term<'a>,
    count: Term<'a>,
) -> NifResult<Term<'a>> {
    batch(env, name, kind, bits, count)
}

#[rustler::nif(schedule = "DirtyCpu")]
pub(crate) fn nif_nonces_dirty<'a>(
    env: Env<'a>,
    name: Term<'a>,
    kind: Term<'a>,
    bits: Term<'a>,
    count: Term<'a>,
) -> NifResult<Term<'a>> {
    batch(env, name, kind, bits, count)
}

/// `{unix_ms, machine_id, counter}` of a plain nonce.
#[rustler::nif]
pub(crate) fn nif_decompose<'a>(name: Term<'a>, nonce: Binary<'a>) -> NifResult<(i64, u16, u64)> {
    let i = instance(name)?;
    let p = i
        .generator
        .decompose(nonce.as_slice())
        .map_err(core_error)?;
    // Signed: the epoch (the time of timestamp 0) may lie before 1970.
    Ok((p.unix_ms as i64, p.machine_id, p.counter))
}

#[rustler::nif]
pub(crate) fn nif_machine_id(name: Term<'_>) -> NifResult<u16> {
    Ok(instance(name)?.generator.machine_id().get())
}

#[rustler::nif]
pub(crate) fn nif_set_enabled(name: Term<'_>, enabled: bool) -> NifResult<Atom> {
    let g = &instance(name)?.generator;
    if enabled {
        g.enable()
    } else {
        g.disable()
    }
    Ok(atoms::ok())
}

#[rustler::nif]
pub(crate) fn nif_enabled(name: Term<'_>) -> NifResult<bool> {
    Ok(instance(name)?.generator.is_enabled())
}
