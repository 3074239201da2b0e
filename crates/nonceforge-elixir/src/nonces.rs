//! The hot path: `nonce/1,2`, `sortable_nonce/1,2`, `encrypted_nonce/1,2,3`,
//! `encrypt/1,2`, `decrypt/1,2`.

use crate::atoms;
use crate::errors::{arg_error, core_error};
use crate::registry::{Crypt, Instance, default_instance, instance, instance_error, term_bits};
use nonceforge::LocalNonces;
use nonceforge::{Bits, NonceKind};
use rustler::types::atom::Atom;
use rustler::{Binary, Env, Error, NewBinary, NifResult, Term};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The terms of the integers 64, 96 and 128 (immediates: the same bits in
/// every process), set at load, so that the hot path compares words instead
/// of decoding an integer (measured: ~4 ns a call).
pub(crate) static SIZE_TERMS: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];

#[inline(always)]
fn size_of(bits: Term<'_>) -> Option<Bits> {
    let t = term_bits(bits);
    if t == SIZE_TERMS[0].load(Ordering::Relaxed) {
        Some(Bits::B64)
    } else if t == SIZE_TERMS[1].load(Ordering::Relaxed) {
        Some(Bits::B96)
    } else if t == SIZE_TERMS[2].load(Ordering::Relaxed) {
        Some(Bits::B128)
    } else {
        None
    }
}

fn bad_bits(bits: Term<'_>, function: &str) -> Error {
    arg_error(format!(
        "{function}: bits must be 64, 96 or 128, got: {bits:?}"
    ))
}

pub(crate) fn bits_of(bits: Term<'_>, function: &str) -> NifResult<Bits> {
    size_of(bits).ok_or_else(|| bad_bits(bits, function))
}

/// A nonce from the core as a binary, or its error as an exception.
#[inline(always)]
pub(crate) fn out<'a, const N: usize>(
    env: Env<'a>,
    i: &Instance,
    r: nonceforge::Result<[u8; N]>,
) -> NifResult<Term<'a>> {
    match r {
        Ok(n) => Ok(binary(env, &n)),
        Err(e) => Err(instance_error(i, e)),
    }
}

thread_local! {
    /// Per scheduler thread: a block-reserving handle per instance (by address),
    /// so counter and encrypted nonces write nothing shared per call and
    /// schedulers do not fight over the counter's cache line. A handle checks
    /// the instance's enabled flag on every call (a lease's deadline or
    /// `disable/1` stop it at once); ticks left in a block are never issued.
    static LOCAL: RefCell<Vec<(usize, LocalNonces)>> = const { RefCell::new(Vec::new()) };
}

#[inline(always)]
fn with_local<R>(i: &'static Instance, f: impl FnOnce(&mut LocalNonces) -> R) -> R {
    LOCAL.with(|cell| {
        let mut handles = cell.borrow_mut();
        let key = i as *const Instance as usize;
        let at = match handles.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                handles.push((key, i.generator.local()));
                handles.len() - 1
            }
        };
        f(&mut handles[at].1)
    })
}

#[inline(always)]
pub(crate) fn counter<'a>(
    env: Env<'a>,
    i: &'static Instance,
    bits: Term<'a>,
) -> NifResult<Term<'a>> {
    match size_of(bits) {
        Some(Bits::B64) => out(env, i, with_local(i, |l| l.counter_64())),
        Some(Bits::B96) => out(env, i, with_local(i, |l| l.counter_96())),
        Some(Bits::B128) => out(env, i, with_local(i, |l| l.counter_128())),
        None => Err(bad_bits(bits, "nonce")),
    }
}

#[inline(always)]
pub(crate) fn sortable<'a>(env: Env<'a>, i: &Instance, bits: Term<'a>) -> NifResult<Term<'a>> {
    let g = &i.generator;
    match size_of(bits) {
        Some(Bits::B64) => out(env, i, g.sortable_64()),
        Some(Bits::B96) => out(env, i, g.sortable_96()),
        Some(Bits::B128) => out(env, i, g.sortable_128()),
        None => Err(bad_bits(bits, "sortable_nonce")),
    }
}

pub(crate) fn binary<'a>(env: Env<'a>, bytes: &[u8]) -> Term<'a> {
    let mut b = NewBinary::new(env, bytes.len());
    b.as_mut_slice().copy_from_slice(bytes);
    Binary::from(b).to_term(env)
}

/// An encrypted nonce of `bits` over a `base` (counter or sortable) nonce.
pub(crate) fn encrypted<'a>(
    env: Env<'a>,
    i: &'static Instance,
    bits: Bits,
    base: NonceKind,
) -> NifResult<Term<'a>> {
    match &i.crypt {
        Crypt::Native if base == NonceKind::Counter => match bits {
            Bits::B64 => out(env, i, with_local(i, |l| l.encrypted_64())),
            Bits::B96 => out(env, i, with_local(i, |l| l.encrypted_96())),
            Bits::B128 => out(env, i, with_local(i, |l| l.encrypted_128())),
        },
        Crypt::Native => {
            let mut n = [0u8; 16];
            let len = bits.bytes();
            let p = i
                .generator
                .next(base, bits)
                .map_err(|e| instance_error(i, e))?;
            p.write_to(&mut n[..len]).map_err(core_error)?;
            let e = i.generator.encrypt(&n[..len]).map_err(core_error)?;
            e.write_to(&mut n[..len]).map_err(core_error)?;
            Ok(binary(env, &n[..len]))
        }
        Crypt::Compat(c) => {
            // NoNoncense: a padded 96-bit nonce is a 64-bit nonce, encrypted,
            // with 32 zero bits after.
            let source_bits = c.plain_bits(bits).map_err(core_error)?;
            let mut n = [0u8; 16];
            if base == NonceKind::Counter {
                with_local(i, |l| match source_bits {
                    Bits::B64 => l.counter_64().map(|b| n[..8].copy_from_slice(&b)),
                    Bits::B96 => l.counter_96().map(|b| n[..12].copy_from_slice(&b)),
                    Bits::B128 => l.counter_128().map(|b| n[..16].copy_from_slice(&b)),
                })
                .map_err(core_error)?;
            } else {
                let p = i.generator.next(base, source_bits).map_err(core_error)?;
                p.write_to(&mut n[..source_bits.bytes()])
                    .map_err(core_error)?;
            }
            let out = &mut n[..bits.bytes()];
            c.crypt(out, true).map_err(core_error)?;
            Ok(binary(env, out))
        }
    }
}

#[rustler::nif(name = "nonce")]
pub(crate) fn nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, default_instance()?, bits)
}

#[rustler::nif(name = "nonce")]
pub(crate) fn nonce_2<'a>(env: Env<'a>, name: Term<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, instance(name)?, bits)
}

#[rustler::nif(name = "sortable_nonce")]
pub(crate) fn sortable_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    sortable(env, default_instance()?, bits)
}

#[rustler::nif(name = "sortable_nonce")]
pub(crate) fn sortable_nonce_2<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
) -> NifResult<Term<'a>> {
    sortable(env, instance(name)?, bits)
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    let bits = bits_of(bits, "encrypted_nonce")?;
    encrypted(env, default_instance()?, bits, NonceKind::Counter)
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_2<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
) -> NifResult<Term<'a>> {
    let bits = bits_of(bits, "encrypted_nonce")?;
    encrypted(env, instance(name)?, bits, NonceKind::Counter)
}

fn base_kind(base: Term<'_>) -> NifResult<NonceKind> {
    match base.decode::<Atom>() {
        Ok(a) if a == atoms::counter() => Ok(NonceKind::Counter),
        Ok(a) if a == atoms::sortable() => Ok(NonceKind::Sortable),
        _ => Err(arg_error(format!(
            "encrypted_nonce: base_type must be :counter or :sortable, got: {base:?}"
        ))),
    }
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_3<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
    base: Term<'a>,
) -> NifResult<Term<'a>> {
    let bits = bits_of(bits, "encrypted_nonce")?;
    let base = base_kind(base)?;
    encrypted(env, instance(name)?, bits, base)
}

pub(crate) fn crypt<'a>(
    env: Env<'a>,
    i: &Instance,
    nonce: Term<'a>,
    encrypt: bool,
) -> NifResult<Term<'a>> {
    let function = if encrypt { "encrypt" } else { "decrypt" };
    let bin: Binary = nonce.decode().map_err(|_| {
        arg_error(format!(
            "{function}: nonce must be a binary of 8, 12 or 16 bytes, got: {nonce:?}"
        ))
    })?;
    let mut n = [0u8; 16];
    let len = bin.len();
    if !matches!(len, 8 | 12 | 16) {
        return Err(arg_error(format!(
            "{function}: nonce must be 8, 12 or 16 bytes (64, 96 or 128 bits), got {len} bytes"
        )));
    }
    n[..len].copy_from_slice(bin.as_slice());
    let out = &mut n[..len];
    match &i.crypt {
        Crypt::Compat(c) => c.crypt(out, encrypt).map_err(core_error)?,
        Crypt::Native => {
            let r = if encrypt {
                i.generator.encrypt(out)
            } else {
                i.generator.decrypt(out)
            };
            r.map_err(core_error)?.write_to(out).map_err(core_error)?;
        }
    }
    Ok(binary(env, out))
}

#[rustler::nif(name = "encrypt")]
pub(crate) fn encrypt_1<'a>(env: Env<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, default_instance()?, nonce, true)
}

#[rustler::nif(name = "encrypt")]
pub(crate) fn encrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, true)
}

#[rustler::nif(name = "decrypt")]
pub(crate) fn decrypt_1<'a>(env: Env<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, default_instance()?, nonce, false)
}

#[rustler::nif(name = "decrypt")]
pub(crate) fn decrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, false)
}
