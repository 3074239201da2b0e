//! Instances and the registry of their names: the default name has its own
//! pointer, others a lock-free table read with one atomic load per probe.

use crate::errors::{DisabledError, UninitializedError, arg_error, core_error};
use nonceforge::NonceGenerator;
use nonceforge::cipher::nononcense::NoNoncenseCiphers;
use nonceforge_lease::Lease;
use rustler::{Error, NifResult, Term};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    pub(crate) crypt: Crypt,
    pub(crate) lease: Mutex<Option<Held>>,
    /// The name as Elixir writes it (`Nonceforge`, `:ids`), for messages.
    pub(crate) name: String,
}

/// The lease an instance holds (`init/1` with `{:lease, url, opts}`, made by
/// lease.rs) and its watcher's stop flag.
pub(crate) struct Held {
    pub(crate) lease: Arc<Mutex<Option<Lease>>>,
    pub(crate) stop: Arc<AtomicBool>,
}

/// Takes an instance's lease out of it (None: it holds none, or it was taken).
pub(crate) fn take(instance: &Instance) -> Option<Held> {
    instance
        .lease
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
}

/// Stops the watcher and releases the lease (the floor recorded, the id freed).
pub(crate) fn release(held: Held) -> Result<(), String> {
    held.stop.store(true, Ordering::Release);
    let lease = held.lease.lock().unwrap_or_else(|p| p.into_inner()).take();
    match lease {
        Some(l) => l.release().map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// Releases the lease of an instance that a new `init` replaced, off the
/// scheduler.
pub(crate) fn release_replaced(old: Option<&'static Instance>) {
    if let Some(held) = old.and_then(take) {
        std::thread::spawn(move || {
            let _ = release(held);
        });
    }
}

/// The default name's instance (`Nonceforge`).
static DEFAULT: AtomicPtr<Instance> = AtomicPtr::new(std::ptr::null_mut());
/// The default name's atom term, set at load.
pub(crate) static DEFAULT_NAME: AtomicU64 = AtomicU64::new(0);

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
pub(crate) fn term_bits(term: Term<'_>) -> u64 {
    // SAFETY: ErlNifTerm is #[repr(transparent)] over ERL_NIF_UINT (usize).
    unsafe { std::mem::transmute::<rustler::sys::ErlNifTerm, usize>(term.as_c_arg()) as u64 }
}

/// NoNoncense's words: `instance my_factory is not initialized`.
fn uninitialized(name: &str) -> Error {
    Error::RaiseTerm(Box::new(UninitializedError {
        message: format!("instance {name} is not initialized"),
    }))
}

/// The default name's instance.
pub(crate) fn default_instance() -> NifResult<&'static Instance> {
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
pub(crate) fn register(name: Term<'_>, instance: Instance) -> NifResult<Option<&'static Instance>> {
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

/// An instance's name as Elixir interpolates it (NoNoncense's messages do
/// `"instance #{name} …"`): `Nonceforge`, `ids`.
pub(crate) fn display_name(name: Term<'_>) -> String {
    match name.atom_to_string() {
        Ok(a) => a.strip_prefix("Elixir.").unwrap_or(&a).to_string(),
        Err(_) => format!("{name:?}"),
    }
}

/// A core error of the instance `i`: a disabled one names it.
pub(crate) fn instance_error(i: &Instance, e: nonceforge::Error) -> Error {
    match e {
        nonceforge::Error::Disabled => Error::RaiseTerm(Box::new(DisabledError {
            message: format!("instance {} is disabled", i.name),
        })),
        other => core_error(other),
    }
}
