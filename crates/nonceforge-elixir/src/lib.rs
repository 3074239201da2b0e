//! The NIF of the `nonceforge` Elixir package (elixir/): thin rustler bindings
//! over the core crate, in the module `Nonceforge` itself.
//!
//! **The hot path takes no resource argument.** A call such as
//! `Nonceforge.nonce(128)` *is* the NIF: no Elixir wrapper, no
//! `:persistent_term` lookup, no resource to decode. Instances live in a
//! registry in this library keyed by the name atom's term (atoms are never
//! collected, so the term is stable for the VM's life): the default name has
//! its own pointer, other names a lock-free open-addressing table read with
//! one atomic load per probe. An instance replaced by a later `init/1` under
//! the same name is kept (a caller may still be using it) — a few hundred
//! bytes per `init`, the way `:persistent_term` keeps NoNoncense's state.
//!
//! **Nothing crosses into the VM but terms.** Errors are raised as the
//! package's exception structs (`Nonceforge.Errors.UninitializedError`,
//! `DisabledError`) or `ArgumentError`, with a message naming the argument
//! and the rule; rustler turns a panic into an exception too. No call holds a
//! scheduler long: a nonce is tens of nanoseconds; `init` (PBKDF2), batches
//! above ~1 ms of work and everything that talks to a lease store run on dirty
//! schedulers (see elixir/lib/nonceforge.ex).

mod extid;
mod lease;

use nonceforge::LocalNonces;
use nonceforge::cipher::nononcense::{NoNoncenseCiphers, NoNoncenseKeys, SmallCipher, WideCipher};
use nonceforge::{Bits, MachineId, NonceGenerator, NonceKind};
use rustler::types::atom::Atom;
use rustler::{Binary, Encoder, Env, Error, NewBinary, NifException, NifResult, Term};
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

mod atoms {
    rustler::atoms! {
        ok,
        counter,
        sortable,
        encrypted,
        blowfish,
        des3,
        speck,
        aes,
        nononcense,
        nonceforge,
    }
}

#[derive(NifException)]
#[module = "Nonceforge.Errors.UninitializedError"]
struct UninitializedError {
    message: String,
}

#[derive(NifException)]
#[module = "Nonceforge.Errors.DisabledError"]
struct DisabledError {
    message: String,
}

#[derive(NifException)]
#[module = "RuntimeError"]
struct RuntimeError {
    message: String,
}

#[derive(NifException)]
#[module = "ArgumentError"]
pub(crate) struct ArgumentError {
    message: String,
}

/// `ArgumentError` with `message`.
pub(crate) fn arg_error(message: impl Into<String>) -> Error {
    Error::RaiseTerm(Box::new(ArgumentError {
        message: message.into(),
    }))
}

/// A core error of the instance `i`: a disabled one names it.
fn instance_error(i: &Instance, e: nonceforge::Error) -> Error {
    match e {
        nonceforge::Error::Disabled => Error::RaiseTerm(Box::new(DisabledError {
            message: format!(
                "instance {} is disabled: its lease lapsed or was lost, or it was disabled (ConflictGuard)",
                i.name
            ),
        })),
        other => core_error(other),
    }
}

/// A core error as the exception Elixir code expects.
pub(crate) fn core_error(e: nonceforge::Error) -> Error {
    match e {
        // NoNoncense's module and words, ours after them.
        nonceforge::Error::NoKey => Error::RaiseTerm(Box::new(RuntimeError {
            message: "no key set at NoNoncense initialization: pass base_key (32 bytes or more) to Nonceforge.init/1".into(),
        })),
        nonceforge::Error::Disabled => Error::RaiseTerm(Box::new(DisabledError {
            message: "this Nonceforge instance is disabled: its lease lapsed or was lost, or it was disabled (ConflictGuard)".into(),
        })),
        other => arg_error(other.to_string()),
    }
}

/// How an instance encrypts.
pub(crate) enum Crypt {
    /// The core's ciphers and HKDF keys (the generator holds them), shared by
    /// every face of nonceforge.
    Native,
    /// NoNoncense 2.0's ciphers and PBKDF2 keys.
    Compat(Box<NoNoncenseCiphers>),
}

/// One `Nonceforge.init/1`.
pub(crate) struct Instance {
    pub(crate) generator: NonceGenerator,
    crypt: Crypt,
    pub(crate) lease: Mutex<Option<lease::Held>>,
    /// The name as Elixir writes it (`Nonceforge`, `:ids`), for messages.
    pub(crate) name: String,
}

/// The default name's instance (`Nonceforge`).
static DEFAULT: AtomicPtr<Instance> = AtomicPtr::new(std::ptr::null_mut());
/// The default name's atom term, set at load.
static DEFAULT_NAME: AtomicU64 = AtomicU64::new(0);

const TABLE: usize = 1024;
struct Named {
    key: AtomicU64,
    instance: AtomicPtr<Instance>,
}
static NAMES: [Named; TABLE] = [const {
    Named {
        key: AtomicU64::new(0),
        instance: AtomicPtr::new(std::ptr::null_mut()),
    }
}; TABLE];
static NAMES_WRITE: Mutex<()> = Mutex::new(());
/// Names beyond the table's `TABLE` slots: no fixed cap, a lock on their lookups.
static MORE_NAMES: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn slot_of(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 54) as usize % TABLE
}

fn name_key(name: Term<'_>) -> NifResult<u64> {
    if !name.is_atom() {
        return Err(arg_error(format!(
            "name must be an atom (the instance's name), got: {name:?}"
        )));
    }
    Ok(term_bits(name))
}

/// The bits of a term (`ErlNifTerm` is a transparent word): for an atom, a
/// value that stays the same for the life of the VM.
fn term_bits(term: Term<'_>) -> u64 {
    // SAFETY: ErlNifTerm is #[repr(transparent)] over ERL_NIF_UINT (usize).
    unsafe { std::mem::transmute::<rustler::sys::ErlNifTerm, usize>(term.as_c_arg()) as u64 }
}

fn uninitialized(name: &str) -> Error {
    Error::RaiseTerm(Box::new(UninitializedError {
        message: format!(
            "instance {name} is not initialized: call Nonceforge.init(name: {name}, machine_id: ...) first"
        ),
    }))
}

/// The default name's instance.
fn default_instance() -> NifResult<&'static Instance> {
    // SAFETY: pointers in the registry come from Box::into_raw and are never freed.
    unsafe { DEFAULT.load(Ordering::Acquire).as_ref() }.ok_or_else(|| uninitialized("Nonceforge"))
}

/// The instance registered under `name`.
pub(crate) fn instance(name: Term<'_>) -> NifResult<&'static Instance> {
    let key = name_key(name)?;
    let ptr = if key == DEFAULT_NAME.load(Ordering::Relaxed) {
        DEFAULT.load(Ordering::Acquire)
    } else {
        let mut i = slot_of(key);
        let mut found = std::ptr::null_mut();
        let mut full = true;
        for _ in 0..TABLE {
            let k = NAMES[i].key.load(Ordering::Acquire);
            if k == key {
                found = NAMES[i].instance.load(Ordering::Acquire);
                full = false;
                break;
            }
            if k == 0 {
                full = false;
                break;
            }
            i = (i + 1) % TABLE;
        }
        if full {
            let more = MORE_NAMES.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(&(_, p)) = more.iter().find(|(k, _)| *k == key) {
                found = p as *mut Instance;
            }
        }
        found
    };
    // SAFETY: pointers in the registry come from Box::into_raw and are never freed.
    unsafe { ptr.as_ref() }.ok_or_else(|| uninitialized(&display_name(name)))
}

/// Registers `instance` under `name`, replacing (and keeping) an earlier one.
fn register(name: Term<'_>, instance: Instance) -> NifResult<Option<&'static Instance>> {
    let key = name_key(name)?;
    let ptr = Box::into_raw(Box::new(instance));
    let _guard = NAMES_WRITE.lock().unwrap_or_else(|p| p.into_inner());
    if key == DEFAULT_NAME.load(Ordering::Relaxed) {
        // SAFETY: as in instance().
        return Ok(unsafe { DEFAULT.swap(ptr, Ordering::AcqRel).as_ref() });
    }
    let mut i = slot_of(key);
    for _ in 0..TABLE {
        let k = NAMES[i].key.load(Ordering::Acquire);
        if k == key || k == 0 {
            let old = NAMES[i].instance.swap(ptr, Ordering::AcqRel);
            NAMES[i].key.store(key, Ordering::Release);
            // SAFETY: as in instance().
            return Ok(unsafe { old.as_ref() });
        }
        i = (i + 1) % TABLE;
    }
    // The table is full: the overflow list.
    let mut more = MORE_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let old = match more.iter_mut().find(|(k, _)| *k == key) {
        Some(entry) => std::mem::replace(&mut entry.1, ptr as usize),
        None => {
            more.push((key, ptr as usize));
            0
        }
    };
    // SAFETY: as in instance().
    Ok(unsafe { (old as *const Instance).as_ref() })
}

/// An instance's name as Elixir writes it: `Nonceforge`, `:ids`.
fn display_name(name: Term<'_>) -> String {
    match name.atom_to_string() {
        Ok(a) => a
            .strip_prefix("Elixir.")
            .map_or(format!(":{a}"), str::to_string),
        Err(_) => format!("{name:?}"),
    }
}

/// The terms of the integers 64, 96 and 128 (immediates: the same bits in
/// every process), set at load, so that the hot path compares words instead
/// of decoding an integer (measured: ~4 ns a call).
static SIZE_TERMS: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];

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

fn bits_of(bits: Term<'_>, function: &str) -> NifResult<Bits> {
    size_of(bits).ok_or_else(|| bad_bits(bits, function))
}

/// A nonce from the core as a binary, or its error as an exception.
#[inline(always)]
fn out<'a, const N: usize>(
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
fn counter<'a>(env: Env<'a>, i: &'static Instance, bits: Term<'a>) -> NifResult<Term<'a>> {
    match size_of(bits) {
        Some(Bits::B64) => out(env, i, with_local(i, |l| l.counter_64())),
        Some(Bits::B96) => out(env, i, with_local(i, |l| l.counter_96())),
        Some(Bits::B128) => out(env, i, with_local(i, |l| l.counter_128())),
        None => Err(bad_bits(bits, "nonce")),
    }
}

#[inline(always)]
fn sortable<'a>(env: Env<'a>, i: &Instance, bits: Term<'a>) -> NifResult<Term<'a>> {
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
fn encrypted<'a>(
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
fn nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, default_instance()?, bits)
}

#[rustler::nif(name = "nonce")]
fn nonce_2<'a>(env: Env<'a>, name: Term<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    counter(env, instance(name)?, bits)
}

#[rustler::nif(name = "sortable_nonce")]
fn sortable_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    sortable(env, default_instance()?, bits)
}

#[rustler::nif(name = "sortable_nonce")]
fn sortable_nonce_2<'a>(env: Env<'a>, name: Term<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    sortable(env, instance(name)?, bits)
}

#[rustler::nif(name = "encrypted_nonce")]
fn encrypted_nonce_1<'a>(env: Env<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
    let bits = bits_of(bits, "encrypted_nonce")?;
    encrypted(env, default_instance()?, bits, NonceKind::Counter)
}

#[rustler::nif(name = "encrypted_nonce")]
fn encrypted_nonce_2<'a>(env: Env<'a>, name: Term<'a>, bits: Term<'a>) -> NifResult<Term<'a>> {
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
fn encrypted_nonce_3<'a>(
    env: Env<'a>,
    name: Term<'a>,
    bits: Term<'a>,
    base: Term<'a>,
) -> NifResult<Term<'a>> {
    let bits = bits_of(bits, "encrypted_nonce")?;
    let base = base_kind(base)?;
    encrypted(env, instance(name)?, bits, base)
}

fn crypt<'a>(env: Env<'a>, i: &Instance, nonce: Term<'a>, encrypt: bool) -> NifResult<Term<'a>> {
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
fn encrypt_1<'a>(env: Env<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, default_instance()?, nonce, true)
}

#[rustler::nif(name = "encrypt")]
fn encrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, true)
}

#[rustler::nif(name = "decrypt")]
fn decrypt_1<'a>(env: Env<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, default_instance()?, nonce, false)
}

#[rustler::nif(name = "decrypt")]
fn decrypt_2<'a>(env: Env<'a>, name: Term<'a>, nonce: Term<'a>) -> NifResult<Term<'a>> {
    crypt(env, instance(name)?, nonce, false)
}

/// The encryption options, checked by Nonceforge.init/1 first.
#[derive(rustler::NifMap)]
struct CryptOpts<'a> {
    mode: Atom,
    base_key: Option<Binary<'a>>,
    key64: Option<Binary<'a>>,
    key96: Option<Binary<'a>>,
    key128: Option<Binary<'a>>,
    cipher64: Atom,
    cipher96: Atom,
    cipher128: Atom,
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
    epoch_unix_ms: u64,
    opts: &CryptOpts<'_>,
) -> NifResult<(NonceGenerator, Crypt)> {
    let builder = builder.epoch_unix_ms(epoch_unix_ms);
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
fn nif_init<'a>(
    name: Term<'a>,
    machine_id: u64,
    epoch_unix_ms: u64,
    opts: CryptOpts<'a>,
) -> NifResult<Atom> {
    let machine = MachineId::new(machine_id).map_err(core_error)?;
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
    held: Option<lease::Held>,
) -> NifResult<()> {
    let instance = Instance {
        generator,
        crypt,
        lease: Mutex::new(held),
        name: display_name(name),
    };
    lease::release_replaced(register(name, instance)?);
    Ok(())
}

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
fn batch<'a>(
    env: Env<'a>,
    name: Term<'a>,
    kind: Term<'a>,
    bits: Term<'a>,
    count: Term<'a>,
) -> NifResult<Term<'a>> {
    let i = instance(name)?;
    let kind = kind_of(kind)?;
    let bits = bits_of(bits, "nonces")?;
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
fn nif_nonces<'a>(
    env: Env<'a>,
    name: Term<'a>,
    kind: Term<'a>,
    bits: Term<'a>,
    count: Term<'a>,
) -> NifResult<Term<'a>> {
    batch(env, name, kind, bits, count)
}

#[rustler::nif(schedule = "DirtyCpu")]
fn nif_nonces_dirty<'a>(
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
fn nif_decompose<'a>(name: Term<'a>, nonce: Binary<'a>) -> NifResult<(u64, u16, u64)> {
    let i = instance(name)?;
    let p = i
        .generator
        .decompose(nonce.as_slice())
        .map_err(core_error)?;
    Ok((p.unix_ms, p.machine_id, p.counter))
}

#[rustler::nif]
fn nif_machine_id(name: Term<'_>) -> NifResult<u16> {
    Ok(instance(name)?.generator.machine_id().get())
}

#[rustler::nif]
fn nif_set_enabled(name: Term<'_>, enabled: bool) -> NifResult<Atom> {
    let g = &instance(name)?.generator;
    if enabled {
        g.enable()
    } else {
        g.disable()
    }
    Ok(atoms::ok())
}

#[rustler::nif]
fn nif_enabled(name: Term<'_>) -> NifResult<bool> {
    Ok(instance(name)?.generator.is_enabled())
}

#[rustler::nif]
fn uuidv7<'a>(env: Env<'a>) -> Term<'a> {
    binary(env, &nonceforge::uuid::uuidv7())
}

#[rustler::nif]
fn tuid6<'a>(env: Env<'a>) -> Term<'a> {
    binary(env, &nonceforge::uuid::tuid6())
}

#[rustler::nif]
fn nif_to_compact(id: Binary<'_>) -> NifResult<String> {
    match id.len() {
        16 | 32 => Ok(nonceforge::uuid::to_compact(id.as_slice())),
        n => Err(arg_error(format!(
            "to_compact: id must be 16 bytes (a UUID, tuid6) or 32 bytes (a stuid), got {n} bytes"
        ))),
    }
}

#[rustler::nif]
fn nif_from_compact<'a>(env: Env<'a>, text: &str) -> NifResult<Term<'a>> {
    let r = match text.len() {
        22 => nonceforge::uuid::from_compact::<16>(text).map(|b| binary(env, &b)),
        _ => nonceforge::uuid::from_compact::<32>(text).map(|b| binary(env, &b)),
    };
    r.map_err(|e| arg_error(format!("from_compact: {e}")))
}

#[rustler::nif]
fn nif_uuid_unix_ms(id: Binary<'_>) -> NifResult<u64> {
    let id: &[u8; 16] = id
        .as_slice()
        .try_into()
        .map_err(|_| arg_error("uuid_unix_ms: id must be a 16-byte binary"))?;
    Ok(nonceforge::uuid::unix_ms(id))
}

fn load(env: Env, _info: Term) -> bool {
    let default = Atom::from_str(env, "Elixir.Nonceforge").expect("a valid atom");
    DEFAULT_NAME.store(term_bits(default.to_term(env)), Ordering::Relaxed);
    for (slot, n) in SIZE_TERMS.iter().zip([64i64, 96, 128]) {
        slot.store(term_bits(n.encode(env)), Ordering::Relaxed);
    }
    extid::load(env) && lease::load(env)
}

rustler::init!("Elixir.Nonceforge", load = load);
