//! The calls that run on the libuv pool.
//!
//! JavaScript keeps running while a job does, and may detach a buffer
//! (`structuredClone(…, { transfer })`, `postMessage` to a worker), shrink a
//! resizable ArrayBuffer, or drop it and let it be collected. Two ways to
//! stay memory-safe, chosen per job:
//!
//! - **Zero-copy** (where `pin` is open and no buffer of the message is
//!   resizable): the source and target are pinned (V8's backing store keeps
//!   their memory allocated until the task is dropped) and the job reads and
//!   writes them where they are. Small inputs (key, IV, AAD, an expected tag)
//!   are still copied at the call; a seal's tag and a digest are written into
//!   the task and delivered at the end. When the job ends, on the JS thread,
//!   every buffer it used in place must still be attached and as long as it
//!   was, else the result is an error (`E_TARGET_DETACHED`, or
//!   `E_SOURCE_DETACHED`: what it read may have been overwritten by a new
//!   owner) and nothing is delivered.
//! - **Copying** (Node-API alone): every input is copied into memory this
//!   task owns at the call, on the JS thread; the job works on that; and when
//!   it ends the output is copied into the caller's target (and a seal's tag)
//!   only if each is still there as long as it was — found afresh through a
//!   reference to the view, never through a pointer kept from the call.

use super::evp::EvpJob;
use super::job::{CipherJob, DigestJob};
use super::pin::{Pin, pin};
use super::span::{Arg, CipherArgs, DigestArgs, Span};
use super::{E_SOURCE_DETACHED, E_TARGET_DETACHED, cipher_alg, digest_alg, spare};
use napi::bindgen_prelude::*;
use napi::{Env, Unknown, sys};
use napi_derive::napi;
use zeroize::Zeroizing;

/// One job for the pool, with everything it touches.
pub struct PoolTask {
    work: Work,
    /// Keys (and HMAC keys): zeroized when the task is dropped.
    _secret: Zeroizing<Vec<u8>>,
    /// IV, AAD and an expected tag.
    _public: Vec<u8>,
    /// Copying: the message (then room for a seal's tag). Empty when zero-copy.
    data: Vec<u8>,
    /// A digest, or a seal's tag when zero-copy.
    _small: Box<[u8; 64]>,
    /// Zero-copy: the source's and target's memory, kept until the task is dropped.
    _pins: Vec<Pin>,
    /// Zero-copy: the views used in place, checked when the job ends.
    watched: Vec<Watch>,
    /// What the job made in the task's memory, delivered when it ends…
    output: Span,
    /// …into these `(view, offset, bytes)` in order, all of them or none.
    deliver: Vec<(ViewRef, u32, usize)>,
}

enum Work {
    Cipher(CipherJob),
    Digest(DigestJob),
    /// crypto-async 1.0.2's cipher: delivers as many bytes as it wrote.
    Evp(EvpJob),
}

/// A view a zero-copy job reads or writes in place, as it was at the call,
/// and the code to give when it is not so at the end.
struct Watch {
    view: ViewRef,
    at_call: (*mut u8, usize),
    code: i32,
}

// SAFETY: as for `ViewRef`; the pointer is only compared, never dereferenced.
unsafe impl Send for Watch {}

/// A strong reference to a JS buffer view, made and used on the JS thread only.
struct ViewRef(sys::napi_ref);

// SAFETY: the reference is created at the call and read and deleted in
// `resolve`/`finally`, all on the JS thread that owns it; the pool thread only
// carries it inside the task and never touches it.
unsafe impl Send for ViewRef {}

impl ViewRef {
    fn new(env: &Env, value: &Unknown<'_>) -> Result<ViewRef> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: env and value are live for this call.
        let status = unsafe { sys::napi_create_reference(env.raw(), value.raw(), 1, &mut raw) };
        if status != sys::Status::napi_ok {
            return Err(Error::new(
                Status::GenericFailure,
                "could not reference a buffer",
            ));
        }
        Ok(ViewRef(raw))
    }

    /// References to all of `values`, or none (a reference never deleted
    /// would keep its view alive for good).
    fn all(env: &Env, values: &[&Unknown<'_>]) -> Result<Vec<ViewRef>> {
        let mut refs = Vec::with_capacity(values.len());
        for value in values {
            match ViewRef::new(env, value) {
                Ok(r) => refs.push(r),
                Err(e) => {
                    refs.into_iter().for_each(|r| r.delete(env));
                    return Err(e);
                }
            }
        }
        Ok(refs)
    }

    /// The view's bytes as they are now: `(data, length)`, length 0 when its
    /// buffer was detached or shrunk out from under it.
    fn bytes_now(&self, env: &Env) -> Option<(*mut u8, usize)> {
        let mut value = std::ptr::null_mut();
        // SAFETY: a live reference of this env, on its thread.
        let status = unsafe { sys::napi_get_reference_value(env.raw(), self.0, &mut value) };
        if status != sys::Status::napi_ok || value.is_null() {
            return None;
        }
        let (mut data, mut len) = (std::ptr::null_mut(), 0usize);
        // SAFETY: as above; napi checks that the value is a view.
        let status = unsafe { sys::napi_get_buffer_info(env.raw(), value, &mut data, &mut len) };
        (status == sys::Status::napi_ok).then_some((data.cast(), len))
    }

    fn delete(self, env: &Env) {
        // SAFETY: deleted once, on the env's thread; the result does not matter.
        unsafe { sys::napi_delete_reference(env.raw(), self.0) };
    }
}

/// A message pinned in place: the pins, the watches of its views (target
/// first: a lost target is the error to report), and its spans as found at
/// the call.
struct InPlace {
    pins: Vec<Pin>,
    watched: Vec<Watch>,
    source: Span,
    target: Option<Span>,
}

/// The source (and target) pinned in place, or `None` to copy.
fn pin_in_place(
    env: &Env,
    source: &Arg<'_, '_>,
    target: Option<&Arg<'_, '_>>,
) -> Result<Option<InPlace>> {
    let mut pins = Vec::with_capacity(2);
    let mut places = Vec::with_capacity(2);
    let mut spans = Vec::with_capacity(2);
    for (arg, code) in target
        .map(|t| (t, E_TARGET_DETACHED))
        .into_iter()
        .chain([(source, E_SOURCE_DETACHED)])
    {
        let (at_call, span) = arg.place(env)?;
        let Some(p) = pin(env, arg.value, span) else {
            return Ok(None);
        };
        pins.push(p);
        places.push((arg.value, at_call, code));
        spans.push(span);
    }
    let views: Vec<&Unknown<'_>> = places.iter().map(|(v, _, _)| *v).collect();
    let refs = ViewRef::all(env, &views)?;
    let watched = refs
        .into_iter()
        .zip(places)
        .map(|(view, (_, at_call, code))| Watch {
            view,
            at_call,
            code,
        })
        .collect();
    let source = spans.pop().expect("the source was pinned last");
    Ok(Some(InPlace {
        pins,
        watched,
        source,
        target: spans.pop(),
    }))
}

/// `output_views` for a job whose views are watched already: if it fails,
/// the watches' references are deleted too.
fn outputs_beside(
    env: &Env,
    outputs: &[Arg<'_, '_>],
    watched: &mut Vec<Watch>,
) -> Result<Vec<(ViewRef, u32, usize)>> {
    output_views(env, outputs).inspect_err(|_| {
        std::mem::take(watched)
            .into_iter()
            .for_each(|w| w.view.delete(env))
    })
}

/// Where the output goes, `(view, offset, bytes)` each: all checked in range
/// now, then referenced for `resolve`.
fn output_views(env: &Env, outputs: &[Arg<'_, '_>]) -> Result<Vec<(ViewRef, u32, usize)>> {
    for arg in outputs {
        arg.span(env)?;
    }
    let values: Vec<&Unknown<'_>> = outputs.iter().map(|a| a.value).collect();
    Ok(ViewRef::all(env, &values)?
        .into_iter()
        .zip(outputs)
        .map(|(r, a)| (r, a.offset, a.size as usize))
        .collect())
}

impl PoolTask {
    fn new(work: Work, secret: Zeroizing<Vec<u8>>, public: Vec<u8>, small: Box<[u8; 64]>) -> Self {
        PoolTask {
            work,
            _secret: secret,
            _public: public,
            data: Vec::new(),
            _small: small,
            _pins: Vec::new(),
            watched: Vec::new(),
            output: Span {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
            },
            deliver: Vec::new(),
        }
    }
}

impl Task for PoolTask {
    type Output = i32;
    type JsValue = i32;

    fn compute(&mut self) -> Result<i32> {
        let work = &mut self.work;
        // SAFETY: every span points into this task's own buffers or into
        // memory it pinned, touched by nothing else of ours while the pool
        // thread has `&mut self`.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            match work {
                Work::Cipher(j) => j.run(),
                Work::Digest(j) => j.run(),
                Work::Evp(j) => j.run(),
            }
        }));
        r.map_err(|_| Error::from_reason("nonceforge: internal error (panic) in a pool task"))
    }

    /// Checks the views used in place, then copies the output into its views —
    /// all of them, or none when any is gone (`E_TARGET_DETACHED`) — and
    /// passes the job's code on. JS thread.
    fn resolve(&mut self, env: Env, code: i32) -> Result<i32> {
        for w in &self.watched {
            if w.view.bytes_now(&env) != Some(w.at_call) {
                return Ok(w.code);
            }
        }
        if code < 0 {
            return Ok(code);
        }
        let mut output = self.output;
        if let Work::Evp(_) = self.work {
            output.len = output.len.min(code as usize);
        }
        let mut places = Vec::with_capacity(self.deliver.len());
        let mut from = 0;
        for (view, offset, n) in &self.deliver {
            let n = (*n).min(output.len - from);
            match view
                .bytes_now(&env)
                .and_then(|now| Span::new(now, *offset, n as u32))
            {
                Some(place) => places.push(place),
                None => return Ok(E_TARGET_DETACHED),
            }
            from += n;
        }
        let mut from = output.ptr;
        for place in places {
            // SAFETY: `place` is in range of a view that is attached now, and JS is
            // blocked in this callback; the output is the task's own memory.
            unsafe {
                std::ptr::copy(from, place.ptr, place.len);
                from = from.add(place.len);
            }
        }
        Ok(code)
    }

    fn finally(mut self, env: Env) -> Result<()> {
        for (view, _, _) in std::mem::take(&mut self.deliver) {
            view.delete(&env);
        }
        for w in std::mem::take(&mut self.watched) {
            w.view.delete(&env);
        }
        Ok(())
    }
}

impl Drop for PoolTask {
    fn drop(&mut self) {
        spare::give(std::mem::take(&mut self.data));
    }
}

/// The cipher on the libuv pool (see the module's doc); resolves to the bytes
/// written or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn cipher_pool(
    env: Env,
    alg: u32,
    encrypt: u32,
    key: Unknown<'_>,
    key_offset: u32,
    key_size: u32,
    iv: Unknown<'_>,
    iv_offset: u32,
    iv_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
    aad: Unknown<'_>,
    aad_offset: u32,
    aad_size: u32,
    tag: Unknown<'_>,
    tag_offset: u32,
    tag_size: u32,
) -> Result<AsyncTask<PoolTask>> {
    let a = CipherArgs {
        key: Arg::new(&key, key_offset, key_size, "key"),
        iv: Arg::new(&iv, iv_offset, iv_size, "iv"),
        source: Arg::new(&source, source_offset, source_size, "source"),
        target: Arg::new(&target, target_offset, source_size, "target"),
        aad: Arg::new(&aad, aad_offset, aad_size, "aad"),
        tag: Arg::new(&tag, tag_offset, tag_size, "tag"),
    };
    let alg = cipher_alg(alg)?;
    let encrypt = encrypt == 1;
    let mut secret = Zeroizing::new(Vec::with_capacity(key_size as usize));
    let key = a.key.copy_onto(&env, &mut secret)?;
    let mut public = Vec::new();
    let iv = a.iv.copy_onto(&env, &mut public)?;
    let aad = a.aad.copy_onto(&env, &mut public)?;
    // An open's tag is read from a copy; a seal's is made in the task.
    let expected = if encrypt {
        a.tag.span(&env)?;
        0..0
    } else {
        a.tag.copy_onto(&env, &mut public)?
    };
    let mut small = Box::new([0u8; 64]);
    let tag_len = if encrypt { tag_size as usize } else { 0 };
    if let Some(mut p) = pin_in_place(&env, &a.source, Some(&a.target))? {
        let deliver = if encrypt {
            outputs_beside(&env, &[a.tag], &mut p.watched)?
        } else {
            Vec::new()
        };
        let made = Span::of(&mut small[..], 0..tag_len.min(16));
        let job = CipherJob {
            alg,
            encrypt,
            key: Span::of(&mut secret, key),
            iv: Span::of(&mut public, iv),
            source: p.source,
            target: p.target.expect("pinned with its target"),
            aad: Span::of(&mut public, aad),
            tag: if encrypt {
                made
            } else {
                Span::of(&mut public, expected)
            },
        };
        let mut task = PoolTask::new(Work::Cipher(job), secret, public, small);
        task._pins = p.pins;
        task.watched = p.watched;
        task.output = made;
        task.deliver = deliver;
        return Ok(AsyncTask::new(task));
    }
    // Copying: the message, then room for a seal's tag, delivered in that order.
    let mut data = spare::take(source_size as usize + tag_len);
    let message = a.source.copy_onto(&env, &mut data)?;
    data.resize(data.len() + tag_len, 0);
    let deliver = if encrypt {
        output_views(&env, &[a.target, a.tag])?
    } else {
        output_views(&env, &[a.target])?
    };
    let job = CipherJob {
        alg,
        encrypt,
        key: Span::of(&mut secret, key),
        iv: Span::of(&mut public, iv),
        source: Span::of(&mut data, message.clone()),
        target: Span::of(&mut data, message.clone()),
        aad: Span::of(&mut public, aad),
        tag: if encrypt {
            Span::of(&mut data, message.end..message.end + tag_len)
        } else {
            Span::of(&mut public, expected)
        },
    };
    let output = Span::of(&mut data, 0..message.end + tag_len);
    let mut task = PoolTask::new(Work::Cipher(job), secret, public, small);
    task.data = data;
    task.output = output;
    task.deliver = deliver;
    Ok(AsyncTask::new(task))
}

/// A hash (no key) or HMAC on the libuv pool; resolves to the digest's
/// length or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn digest_pool(
    env: Env,
    alg: u32,
    key: Option<Unknown<'_>>,
    key_offset: u32,
    key_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<AsyncTask<PoolTask>> {
    let alg = digest_alg(alg)?;
    let n = alg.output_len();
    let a = DigestArgs {
        key: key
            .as_ref()
            .map(|k| Arg::new(k, key_offset, key_size, "key")),
        source: Arg::new(&source, source_offset, source_size, "source"),
        target: Arg::new(&target, target_offset, n as u32, "target"),
    };
    let mut secret = Zeroizing::new(Vec::new());
    let key = a.key.map(|k| k.copy_onto(&env, &mut secret)).transpose()?;
    let mut small = Box::new([0u8; 64]);
    let made = Span::of(&mut small[..], 0..n);
    let (source, data, pins, mut watched) = match pin_in_place(&env, &a.source, None)? {
        Some(p) => (p.source, Vec::new(), p.pins, p.watched),
        None => {
            let mut data = spare::take(source_size as usize);
            let range = a.source.copy_onto(&env, &mut data)?;
            (Span::of(&mut data, range), data, Vec::new(), Vec::new())
        }
    };
    let deliver = outputs_beside(&env, &[a.target], &mut watched)?;
    let job = DigestJob {
        alg,
        key: key.map(|k| Span::of(&mut secret, k)),
        source,
        target: made,
    };
    let mut task = PoolTask::new(Work::Digest(job), secret, Vec::new(), small);
    task.data = data;
    task._pins = pins;
    task.watched = watched;
    task.output = made;
    task.deliver = deliver;
    Ok(AsyncTask::new(task))
}

/// crypto-async 1.0.2's cipher on the pool: any OpenSSL cipher by `name`,
/// with OpenSSL's padding; the target range is `room` bytes (checked by
/// node/lib/crypto-async-1.js with 1.0.2's rule). Resolves to the bytes
/// written, or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn evp_cipher_pool(
    env: Env,
    name: String,
    encrypt: u32,
    key: Unknown<'_>,
    key_offset: u32,
    key_size: u32,
    iv: Unknown<'_>,
    iv_offset: u32,
    iv_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<AsyncTask<PoolTask>> {
    let cipher = crate::openssl::evp::Named::find(&name)
        .ok_or_else(|| Error::new(Status::InvalidArg, "algorithm not supported"))?;
    if key_size as usize != cipher.key_len || iv_size as usize != cipher.iv_len {
        return Err(Error::new(Status::InvalidArg, "invalid key or iv size"));
    }
    let encrypt = encrypt == 1;
    let room = u32::try_from(cipher.room(encrypt, source_size as usize))
        .map_err(|_| Error::new(Status::InvalidArg, "source too large"))?;
    let key = Arg::new(&key, key_offset, key_size, "key");
    let iv = Arg::new(&iv, iv_offset, iv_size, "iv");
    let source = Arg::new(&source, source_offset, source_size, "source");
    let target = Arg::new(&target, target_offset, room, "target");
    let mut secret = Zeroizing::new(Vec::with_capacity(key_size as usize));
    let key = key.copy_onto(&env, &mut secret)?;
    let mut public = Vec::new();
    let iv = iv.copy_onto(&env, &mut public)?;
    let small = Box::new([0u8; 64]);
    if let Some(p) = pin_in_place(&env, &source, Some(&target))? {
        let job = EvpJob {
            cipher,
            encrypt,
            key: Span::of(&mut secret, key),
            iv: Span::of(&mut public, iv),
            source: p.source,
            target: p.target.expect("pinned with its target"),
        };
        let mut task = PoolTask::new(Work::Evp(job), secret, public, small);
        task._pins = p.pins;
        task.watched = p.watched;
        return Ok(AsyncTask::new(task));
    }
    let mut data = spare::take(room as usize);
    let message = source.copy_onto(&env, &mut data)?;
    data.resize(room as usize, 0);
    let deliver = output_views(&env, &[target])?;
    let job = EvpJob {
        cipher,
        encrypt,
        key: Span::of(&mut secret, key),
        iv: Span::of(&mut public, iv),
        source: Span::of(&mut data, message),
        target: Span::of(&mut data, 0..room as usize),
    };
    let output = Span::of(&mut data, 0..room as usize);
    let mut task = PoolTask::new(Work::Evp(job), secret, public, small);
    task.data = data;
    task.output = output;
    task.deliver = deliver;
    Ok(AsyncTask::new(task))
}
