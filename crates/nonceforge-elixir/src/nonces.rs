//! The hot path: `nonce/1,2`, `sortable_nonce/1,2`, `encrypted_nonce/1,2,3`,
//! `encrypt/1,2`, `decrypt/1,2`.

use crate::atoms;
use crate::errors::{arg_error, core_error, no_clause};
use crate::registry::{Crypt, Instance, default_instance, instance, instance_error, term_bits};
use nonceforge::LocalNonces;
use nonceforge::{Bits, NonceKind};
use rustler::types::atom::Atom;
use rustler::{Binary, Env, NewBinary, NifResult, Term};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The terms of the integers 64, 96 and 128 (immediates: the same bits in
/// every process), set at load, so that the hot path compares words instead
/// of decoding an integer (bench/RESULTS.md, "The measurements behind the
/// code").
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

/// A bit size other than 64, 96 or 128: NoNoncense's functions have no
/// clause for it.
pub(crate) fn bits_of(bits: Term<'_>, function: &'static str, arity: usize) -> NifResult<Bits> {
    size_of(bits).ok_or_else(|| no_clause(function, arity))
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
    arity: usize,
) -> NifResult<Term<'a>> {
    match size_of(bits) {
        Some(Bits::B64) => out(env, i, with_local(i, |l| l.counter_64())),
        Some(Bits::B96) => out(env, i, with_local(i, |l| l.counter_96())),
        Some(Bits::B128) => out(env, i, with_local(i, |l| l.counter_128())),
        None => Err(no_clause("nonce", arity)),
    }
}

#[inline(always)]
pub(crate) fn sortable<'a>(
    env: Env<'a>,
    i: &Instance,
    bits: Term<'a>,
    arity: usize,
) -> NifResult<Term<'a>> {
    let g = &i.generator;
    match size_of(bits) {
        Some(Bits::B64) => out(env, i, g.sortable_64()),
        Some(Bits::B96) => out(env, i, g.sortable_96()),
        Some(Bits::B128) => out(env, i, g.sortable_128()),
        None => Err(no_clause("sortable_nonce", arity)),
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
            p.write_to(&mut n[..len])
                .map_err(|e| instance_error(i, e))?;
            let e = i
                .generator
                .encrypt(&n[..len])
                .map_err(|e| instance_error(i, e))?;
            e.write_to(&mut n[..len])
                .map_err(|e| instance_error(i, e))?;
            Ok(binary(env, &n[..len]))
        }
        Crypt::Compat(c) => {
            // NoNoncense: a padded 96-bit nonce is a 64-bit nonce, encrypted,
            // with 32 zero bits after.
            let source_bits = c.plain_bits(bits).map_err(|e| instance_error(i, e))?;
            let mut n = [0u8; 16];
            if base == NonceKind::Counter {
                with_local(i, |l| match source_bits {
                    Bits::B64 => l.counter_64().map(|b| n[..8].copy_from_slice(&b)),
                    Bits::B96 => l.counter_96().map(|b| n[..12].copy_from_slice(&b)),
                    Bits::B128 => l.counter_128().map(|b| n[..16].copy_from_slice(&b)),
                })
                .map_err(|e| instance_error(i, e))?;
            } else {
                let p = i
                    .generator
                    .next(base, source_bits)
                    .map_err(|e| instance_error(i, e))?;
                p.write_to(&mut n[..source_bits.bytes()])
                    .map_err(|e| instance_error(i, e))?;
            }
            let out = &mut n[..bits.bytes()];
            c.crypt(out, true).map_err(|e| instance_error(i, e))?;
            Ok(binary(env, out))
        }
    }
}

/// The core's default epoch (Unix ms): `Nonceforge.init/1`'s default, read
/// from the core rather than restated.
#[rustler::nif]
fn nif_default_epoch() -> u64 {
    nonceforge::layout::DEFAULT_EPOCH_UNIX_MS
}

#[rustler::nif(name = "nonce")]
pub(crate) fn nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, default_instance()?, bits, 1)
}

#[rustler::nif(name = "nonce")]
pub(crate) fn nonce_2<'a>(env: Env<'a>, name: Term<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, instance(name)?, bits, 2)
}

#[rustler::nif(name = "sortable_nonce")]
pub(crate) fn sortable_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    sortable(env, default_instance()?, bits, 1)
}

#[rustler::nif(name = "sortable_nonce")]
pub(crate) fn sortable_nonce_2<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
) -> NifResult<Term<'a>> {
    sortable(env, instance(name)?, bits, 2)
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    let i = default_instance()?;
    encrypted(
        env,
        i,
        bits_of(bits, "encrypted_nonce", 1)?,
        NonceKind::Counter,
    )
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_2<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    encrypted(
        env,
        i,
        bits_of(bits, "encrypted_nonce", 2)?,
        NonceKind::Counter,
    )
}

/// `:counter` or `:sortable`; NoNoncense has no clause for another.
fn base_kind(base: Term<'_>) -> NifResult<NonceKind> {
    match base.decode::<Atom>() {
        Ok(a) if a == atoms::counter() => Ok(NonceKind::Counter),
        Ok(a) if a == atoms::sortable() => Ok(NonceKind::Sortable),
        _ => Err(no_clause("encrypted_nonce", 3)),
    }
}

#[rustler::nif(name = "encrypted_nonce")]
pub(crate) fn encrypted_nonce_3<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
    base: Term<'a>,
) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let bits = bits_of(bits, "encrypted_nonce", 3)?;
    encrypted(env, i, bits, base_kind(base)?)
}

pub(crate) fn crypt<'a>(
    env: Env<'a>,
    i: &Instance,
    nonce: Term<'a>,
    encrypt: bool,
    arity: usize,
) -> NifResult<Term<'a>> {
    let function = if encrypt { "encrypt" } else { "decrypt" };
    // A bitstring that is not whole bytes: no clause for its size either. Not
    // a bitstring at all: as NoNoncense's `bit_size/1` of it, an ArgumentError.
    let bin: Binary = nonce.decode().map_err(|_| {
        if nonce.get_type() == rustler::TermType::Binary {
            no_clause(function, arity)
        } else {
            arg_error(format!(
                "{function}: nonce must be a binary of 8, 12 or 16 bytes, got: {nonce:?}"
            ))
        }
    })?;
    let mut n = [0u8; 16];
    let len = bin.len();
    // Another size: NoNoncense has no clause for it.
    if !matches!(len, 8 | 12 | 16) || bin.as_slice().len() != len {
        return Err(no_clause(function, arity));
    }
    n[..len].copy_from_slice(bin.as_slice());
    let out = &mut n[..len];
    match &i.crypt {
        // A padded 96-bit nonce whose tail is not zero: no clause either.
        Crypt::Compat(c) if len == 12 && c.pads_96() && out[8..] != [0; 4] => {
            c.plain_bits(Bits::B96).map_err(core_error)?;
            return Err(no_clause(function, arity));
        }
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
    crypt(env, default_instance()?, nonce, true, 1)
}

#[rustler::nif(name = "encrypt")]
pub(crate) fn encrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, true, 2)
}

#[rustler::nif(name = "decrypt")]
pub(crate) fn decrypt_1<'a>(env: Env<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, default_instance()?, nonce, false, 1)
}

#[rustler::nif(name = "decrypt")]
pub(crate) fn decrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, false, 2)
}
