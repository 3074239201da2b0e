//! Zero-copy pool jobs: the buffer's memory pinned through V8.
//!
//! A pool job reads and writes the caller's buffers from another thread while
//! JavaScript runs on. Node-API can keep a buffer *object* alive (a
//! reference) but not its memory: JavaScript may detach the ArrayBuffer
//! (`structuredClone` with transfer, `postMessage` to a worker,
//! `ArrayBuffer.prototype.transfer`) and its new owner may free it mid-job.
//! V8's `BackingStore` owns that memory; a shared owner taken at the call
//! keeps it allocated until the job is dropped, whatever happens to the
//! ArrayBuffer. That takes V8's C++ API, whose ABI changes with each Node
//! major, so it lives in a separate shared object built per
//! `NODE_MODULE_VERSION` (`v8/pin.cc`, built by node/scripts/build-v8.js)
//! that this addon opens with `dlopen` only when the running Node is the one
//! it was built for. Elsewhere — another Node major, no compiler at build
//! time, `NONCEFORGE_ZERO_COPY=0` — jobs copy their buffers (Node-API alone;
//! see `pool`).
//!
//! Pinning keeps memory valid; it does not keep it *attached*. A job whose
//! buffer was detached, transferred or shrunk before it ended therefore
//! reports it (`E_SOURCE_DETACHED`, `E_TARGET_DETACHED`) rather than a result
//! that may mix bytes a new owner wrote. Resizable ArrayBuffers are not
//! pinned (a shrink zeroes the tail V8 keeps mapped): their jobs copy.

use super::span::Span;
use napi::bindgen_prelude::*;
use napi::{Env, Unknown, sys};
use napi_derive::napi;
use std::ffi::{CString, c_int, c_void};
use std::sync::OnceLock;

type AbiFn = unsafe extern "C" fn() -> c_int;
type PinFn =
    unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut usize, *mut c_int) -> *mut c_void;
type UnpinFn = unsafe extern "C" fn(*mut c_void);

struct Api {
    pin: PinFn,
    unpin: UnpinFn,
}

static API: OnceLock<Api> = OnceLock::new();

/// Opens the V8 pin at `path`, which must have been built for the running
/// Node's `process.versions.modules` (`abi`). Returns "" when pool jobs are
/// zero-copy from now on, else why not (they copy). Called once, by
/// node/lib/binding.js, before any job.
#[napi(catch_unwind)]
pub fn zero_copy_init(path: String, abi: u32) -> String {
    if API.get().is_some() {
        return String::new();
    }
    match open(&path, abi) {
        Ok(api) => {
            let _ = API.set(api);
            String::new()
        }
        Err(why) => why,
    }
}

/// Whether pool jobs are zero-copy in this process.
#[napi]
pub fn zero_copy() -> bool {
    API.get().is_some()
}

#[cfg(unix)]
fn open(path: &str, abi: u32) -> std::result::Result<Api, String> {
    let c = CString::new(path).map_err(|_| "the path has a NUL byte".to_string())?;
    // SAFETY: dlopen of a shared object we built (v8/pin.cc): it has no
    // initialisers; RTLD_NOW resolves its V8 symbols against this Node now,
    // so a Node without them fails here, not at a call. Never closed.
    let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns NULL or a NUL-terminated message.
        let msg = unsafe { libc::dlerror() };
        let msg = if msg.is_null() {
            "dlopen failed".to_string()
        } else {
            // SAFETY: non-null, NUL-terminated (above).
            unsafe { std::ffi::CStr::from_ptr(msg) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(msg);
    }
    let sym = |name: &std::ffi::CStr| {
        // SAFETY: a live handle and a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!p.is_null())
            .then_some(p)
            .ok_or_else(|| format!("{} missing", name.to_string_lossy()))
    };
    // SAFETY (the three transmutes): the symbols are pin.cc's functions of
    // these names, with these C signatures.
    let built: AbiFn = unsafe { std::mem::transmute(sym(c"nonceforge_v8_abi")?) };
    // SAFETY: no arguments; returns a number.
    let built = unsafe { built() };
    if built as u32 != abi {
        return Err(format!(
            "built for NODE_MODULE_VERSION {built}, this Node is {abi}"
        ));
    }
    Ok(Api {
        pin: unsafe { std::mem::transmute::<*mut c_void, PinFn>(sym(c"nonceforge_v8_pin")?) },
        unpin: unsafe { std::mem::transmute::<*mut c_void, UnpinFn>(sym(c"nonceforge_v8_unpin")?) },
    })
}

#[cfg(not(unix))]
fn open(_: &str, _: u32) -> std::result::Result<Api, String> {
    Err("zero-copy jobs are built for Unix-like systems only".into())
}

/// A shared owner of a buffer's memory (V8's backing store), released when
/// dropped.
pub struct Pin(*mut c_void);

// SAFETY: the owner is a heap `std::shared_ptr<v8::BackingStore>`; its
// release is an atomic decrement, and the last one frees through the
// allocator the isolate shares with its stores, which is thread-safe.
unsafe impl Send for Pin {}

impl Drop for Pin {
    fn drop(&mut self) {
        if let Some(api) = API.get() {
            // SAFETY: an owner from `pin`, released once.
            unsafe { (api.unpin)(self.0) };
        }
    }
}

/// The ArrayBuffer (or SharedArrayBuffer) under a view, or None.
fn array_buffer(env: &Env, view: &Unknown<'_>) -> Option<sys::napi_value> {
    let (e, v) = (env.raw(), view.raw());
    let mut ab = std::ptr::null_mut();
    let mut yes = false;
    // SAFETY (all calls): env and value are live for this call; napi checks
    // the types and writes only the out-pointers given.
    unsafe {
        if sys::napi_is_typedarray(e, v, &mut yes) == sys::Status::napi_ok && yes {
            let (mut ty, mut n, mut data, mut off) = (0, 0usize, std::ptr::null_mut(), 0usize);
            (sys::napi_get_typedarray_info(e, v, &mut ty, &mut n, &mut data, &mut ab, &mut off)
                == sys::Status::napi_ok)
                .then_some(ab)
        } else if sys::napi_is_dataview(e, v, &mut yes) == sys::Status::napi_ok && yes {
            let (mut n, mut data, mut off) = (0usize, std::ptr::null_mut(), 0usize);
            (sys::napi_get_dataview_info(e, v, &mut n, &mut data, &mut ab, &mut off)
                == sys::Status::napi_ok)
                .then_some(ab)
        } else {
            None
        }
    }
}

/// Pins the memory under `span`, a range of the view `view` taken during
/// this call: `None` when zero-copy is off, the view's buffer is resizable,
/// or anything is not as expected (the job then copies).
pub fn pin(env: &Env, view: &Unknown<'_>, span: Span) -> Option<Pin> {
    let api = API.get()?;
    let ab = array_buffer(env, view)?;
    let (mut base, mut len, mut resizable) = (std::ptr::null_mut(), 0usize, 0);
    // SAFETY: `ab` is a napi_value of this call, an ArrayBuffer or
    // SharedArrayBuffer (pin.cc checks); a HandleScope is open.
    let owner = unsafe { (api.pin)(ab.cast(), &mut base, &mut len, &mut resizable) };
    if owner.is_null() {
        return None;
    }
    let pin = Pin(owner);
    (resizable == 0 && span.within(base.cast(), len)).then_some(pin)
}
