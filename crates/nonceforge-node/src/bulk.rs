//! cipher / hash / HMAC over caller-owned buffers, sync and on the libuv pool.
//!
//! node/crypto-async.js validates every argument first (the checks and messages
//! of @ronomon/crypto-async, in its order); what reaches these functions is
//! in range. They still re-check what memory safety depends on (ranges and
//! algorithm ids) and return a negative code rather than throw: the wrapper
//! turns it into the Error the original would give.

use napi::bindgen_prelude::*;
use napi::{Env, Unknown, sys};
use napi_derive::napi;
use nonceforge_bulk::{self as bulk, BulkError, CipherAlg, Data, DigestAlg, Tag};
use zeroize::Zeroizing;

/// Result codes below zero (the wrapper's `ERRORS` table maps them to messages).
const E_CORRUPT: i32 = -1;
const E_INIT: i32 = -2;
const E_UPDATE: i32 = -3;
const E_ARGS: i32 = -4;
/// A pool job's target (or a seal's tag) was detached, transferred or shrunk
/// before the job ended; nothing was written.
const E_DETACHED: i32 = -5;

fn code(e: BulkError) -> i32 {
    match e {
        BulkError::Corrupt => E_CORRUPT,
        BulkError::InitializationFailed => E_INIT,
        BulkError::TooLong => E_UPDATE,
        _ => E_ARGS,
    }
}

/// A byte range of a JS buffer: a raw pointer, because the same buffer may be
/// passed as several arguments (source and target, say) and Rust references to
/// overlapping memory may not coexist. Slices are made only where they cannot
/// overlap a mutable one.
#[derive(Clone, Copy)]
struct Span {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Span points either into a JS buffer, only during a synchronous
// call (JS is blocked in it; the span dies with the call), or into heap memory
// a `PoolTask` owns and nothing else touches (see `PoolTask`).
unsafe impl Send for Span {}

impl Span {
    /// `[off, off + size)` of a buffer `(ptr, len)`, or None when out of range.
    fn new(base: (*mut u8, usize), off: u32, size: u32) -> Option<Span> {
        let (off, size) = (off as usize, size as usize);
        if off.checked_add(size)? > base.1 {
            return None;
        }
        let ptr = if size == 0 {
            std::ptr::NonNull::dangling().as_ptr()
        } else {
            // SAFETY: off + size <= len, so off is within the buffer.
            unsafe { base.0.add(off) }
        };
        Some(Span { ptr, len: size })
    }

    fn end(&self) -> usize {
        self.ptr as usize + self.len
    }

    fn overlaps(&self, other: &Span) -> bool {
        self.len != 0
            && other.len != 0
            && (self.ptr as usize) < other.end()
            && (other.ptr as usize) < self.end()
    }

    /// A copy of the bytes.
    ///
    /// # Safety
    /// The span must be valid for reads and not written during the call.
    unsafe fn to_vec(self) -> Zeroizing<Vec<u8>> {
        // SAFETY: per the caller.
        Zeroizing::new(unsafe { self.slice() }.to_vec())
    }

    /// # Safety
    /// Valid for reads, and no `&mut` to these bytes lives while it does.
    unsafe fn slice<'a>(self) -> &'a [u8] {
        // SAFETY: per the caller; a dangling pointer is fine for len 0.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// # Safety
    /// Valid for writes, and no other reference to these bytes lives while it does.
    unsafe fn slice_mut<'a>(self) -> &'a mut [u8] {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// `(data, length)` of a Buffer / TypedArray / DataView argument.
pub(crate) fn buffer_info(env: &Env, value: &Unknown<'_>) -> Result<(*mut u8, usize)> {
    let mut data = std::ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: env and value are live for this call; napi checks the type.
    let status = unsafe { sys::napi_get_buffer_info(env.raw(), value.raw(), &mut data, &mut len) };
    if status != sys::Status::napi_ok {
        return Err(Error::new(Status::InvalidArg, "expected a Buffer"));
    }
    Ok((data.cast(), len))
}

/// One cipher call, resolved to spans.
struct CipherJob {
    alg: CipherAlg,
    encrypt: bool,
    key: Span,
    iv: Span,
    source: Span,
    target: Span,
    aad: Span,
    tag: Span,
}

impl CipherJob {
    /// Runs the cipher. The source may be the target (in place) or overlap it
    /// (copied first); key, IV, AAD and an expected tag are copied when they
    /// overlap what is written, so every input is read as it was at the call.
    ///
    /// # Safety
    /// Every span is valid for the access it gets and untouched by others
    /// during the call.
    unsafe fn run(&self) -> i32 {
        // SAFETY (all blocks below): per this function's contract; each slice is
        // made only where no mutable slice of the same bytes lives.
        // Key and IV to the stack (no allocation per call): they may lie in the
        // target, which is written below. Longer ones are no cipher's.
        let (mut key_buf, mut iv_buf) = (Zeroizing::new([0u8; 32]), [0u8; 16]);
        if self.key.len > key_buf.len() || self.iv.len > iv_buf.len() {
            return E_ARGS;
        }
        let key = &mut key_buf[..self.key.len];
        key.copy_from_slice(unsafe { self.key.slice() });
        let iv = &mut iv_buf[..self.iv.len];
        iv.copy_from_slice(unsafe { self.iv.slice() });
        // The expected tag (decrypt) is read now, before the target is written.
        let made = if self.encrypt {
            Tag::new(self.tag.len)
        } else {
            Tag::from_slice(unsafe { self.tag.slice() })
        };
        let mut tag = match made {
            Ok(t) => t,
            Err(e) => return code(e),
        };
        let aad_copy;
        let aad: &[u8] = if self.aad.overlaps(&self.target) {
            aad_copy = unsafe { self.aad.to_vec() };
            &aad_copy
        } else {
            unsafe { self.aad.slice() }
        };
        if self.alg == CipherAlg::ChaCha20Poly1305
            && self.encrypt
            && self.source.len >= OPENSSL_SEAL_MIN
            && let Some(n) = unsafe { self.seal_openssl(key, iv, aad) }
        {
            return n;
        }
        let result = if self.source.ptr == self.target.ptr && self.source.len == self.target.len {
            let buf = unsafe { self.target.slice_mut() };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::InPlace(buf),
                aad,
                &mut tag,
            )
        } else if self.source.overlaps(&self.target) {
            let src = unsafe { self.source.to_vec() };
            let dst = unsafe { self.target.slice_mut() };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::Copy(&src, dst),
                aad,
                &mut tag,
            )
        } else {
            let (src, dst) = unsafe { (self.source.slice(), self.target.slice_mut()) };
            bulk::cipher(
                self.alg,
                self.encrypt,
                key,
                iv,
                Data::Copy(src, dst),
                aad,
                &mut tag,
            )
        };
        match result {
            Ok(()) => {
                if self.encrypt && self.tag.len > 0 {
                    // SAFETY: the tag span is valid for writes; no slice is live now.
                    unsafe { std::ptr::copy(tag.as_slice().as_ptr(), self.tag.ptr, self.tag.len) };
                }
                self.source.len as i32
            }
            Err(e) => code(e),
        }
    }
}

/// ChaCha20-Poly1305 messages of at least this many bytes are sealed by
/// Node's OpenSSL (see `openssl::aead`); below it the context set-up costs
/// more than OpenSSL's faster code saves, and ring seals them.
const OPENSSL_SEAL_MIN: usize = 4096;

impl CipherJob {
    /// Seals through Node's OpenSSL: the bytes written, or `None` to seal
    /// another way (no OpenSSL, or it failed).
    ///
    /// # Safety
    /// As [`run`](Self::run).
    unsafe fn seal_openssl(&self, key: &[u8], iv: &[u8], aad: &[u8]) -> Option<i32> {
        let key: &[u8; 32] = key.try_into().ok()?;
        let nonce: &[u8; 12] = iv.try_into().ok()?;
        let mut tag = [0u8; 16];
        let tag = tag.get_mut(..self.tag.len)?;
        let copy;
        let src = if self.source.ptr != self.target.ptr && self.source.overlaps(&self.target) {
            // SAFETY: per `run`'s contract.
            copy = unsafe { self.source.to_vec() };
            copy.as_ptr()
        } else {
            self.source.ptr
        };
        // SAFETY: src is the source (or a copy) and the target holds as many
        // bytes; they are equal or disjoint (checked above).
        unsafe {
            crate::openssl::aead::seal(key, nonce, aad, src, self.target.ptr, self.source.len, tag)?
        };
        // SAFETY: the tag span is valid for writes; no slice is live now.
        unsafe { std::ptr::copy(tag.as_ptr(), self.tag.ptr, self.tag.len) };
        Some(self.source.len as i32)
    }
}

/// One hash or HMAC call.
struct DigestJob {
    alg: DigestAlg,
    key: Option<Span>,
    source: Span,
    target: Span,
}

impl DigestJob {
    /// # Safety
    /// As [`CipherJob::run`].
    unsafe fn run(&self) -> i32 {
        let mut out = [0u8; 64];
        // SAFETY: read-only slices; the target is written after they are dead.
        let n = match self.key {
            None => bulk::hash(self.alg, unsafe { self.source.slice() }, &mut out),
            Some(key) => bulk::hmac(
                self.alg,
                unsafe { key.slice() },
                unsafe { self.source.slice() },
                &mut out,
            ),
        };
        match n {
            Ok(n) if n <= self.target.len => {
                // SAFETY: the target span holds at least n bytes.
                unsafe { std::ptr::copy_nonoverlapping(out.as_ptr(), self.target.ptr, n) };
                n as i32
            }
            Ok(_) => E_ARGS,
            Err(e) => code(e),
        }
    }
}

fn cipher_alg(id: u32) -> Result<CipherAlg> {
    CipherAlg::from_id(id)
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("algorithm id {id} unknown")))
}

fn digest_alg(id: u32) -> Result<DigestAlg> {
    DigestAlg::from_id(id)
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("algorithm id {id} unknown")))
}

fn span(base: (*mut u8, usize), off: u32, size: u32, what: &str) -> Result<Span> {
    Span::new(base, off, size).ok_or_else(|| {
        Error::new(
            Status::InvalidArg,
            format!("{what}Offset + {what}Size > {what}.length"),
        )
    })
}

#[allow(clippy::too_many_arguments)]
fn cipher_job(
    alg: u32,
    encrypt: u32,
    key: (*mut u8, usize),
    key_offset: u32,
    key_size: u32,
    iv: (*mut u8, usize),
    iv_offset: u32,
    iv_size: u32,
    source: (*mut u8, usize),
    source_offset: u32,
    source_size: u32,
    target: (*mut u8, usize),
    target_offset: u32,
    aad: (*mut u8, usize),
    aad_offset: u32,
    aad_size: u32,
    tag: (*mut u8, usize),
    tag_offset: u32,
    tag_size: u32,
) -> Result<CipherJob> {
    Ok(CipherJob {
        alg: cipher_alg(alg)?,
        encrypt: encrypt == 1,
        key: span(key, key_offset, key_size, "key")?,
        iv: span(iv, iv_offset, iv_size, "iv")?,
        source: span(source, source_offset, source_size, "source")?,
        target: span(target, target_offset, source_size, "target")?,
        aad: span(aad, aad_offset, aad_size, "aad")?,
        tag: span(tag, tag_offset, tag_size, "tag")?,
    })
}

/// Synchronous cipher: the bytes written, or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn cipher_sync(
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
) -> Result<i32> {
    let job = cipher_job(
        alg,
        encrypt,
        buffer_info(&env, &key)?,
        key_offset,
        key_size,
        buffer_info(&env, &iv)?,
        iv_offset,
        iv_size,
        buffer_info(&env, &source)?,
        source_offset,
        source_size,
        buffer_info(&env, &target)?,
        target_offset,
        buffer_info(&env, &aad)?,
        aad_offset,
        aad_size,
        buffer_info(&env, &tag)?,
        tag_offset,
        tag_size,
    )?;
    // SAFETY: the spans are in range of live JS buffers, and JS is blocked in this call.
    Ok(unsafe { job.run() })
}

/// A hash (`key` None) or HMAC job over `(buffer, offset, size)` ranges; the
/// target range is as long as the digest.
fn digest_job(
    alg: u32,
    key: Option<((*mut u8, usize), u32, u32)>,
    source: (*mut u8, usize),
    source_offset: u32,
    source_size: u32,
    target: (*mut u8, usize),
    target_offset: u32,
) -> Result<DigestJob> {
    let alg = digest_alg(alg)?;
    Ok(DigestJob {
        alg,
        key: match key {
            Some((k, off, size)) => Some(span(k, off, size, "key")?),
            None => None,
        },
        source: span(source, source_offset, source_size, "source")?,
        target: span(target, target_offset, alg.output_len() as u32, "target")?,
    })
}

/// Synchronous hash: the digest's length, or a negative code.
#[napi(catch_unwind)]
pub fn hash_sync(
    env: Env,
    alg: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<i32> {
    let job = digest_job(
        alg,
        None,
        buffer_info(&env, &source)?,
        source_offset,
        source_size,
        buffer_info(&env, &target)?,
        target_offset,
    )?;
    // SAFETY: as in cipher_sync.
    Ok(unsafe { job.run() })
}

/// Synchronous HMAC: the MAC's length, or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn hmac_sync(
    env: Env,
    alg: u32,
    key: Unknown<'_>,
    key_offset: u32,
    key_size: u32,
    source: Unknown<'_>,
    source_offset: u32,
    source_size: u32,
    target: Unknown<'_>,
    target_offset: u32,
) -> Result<i32> {
    let job = digest_job(
        alg,
        Some((buffer_info(&env, &key)?, key_offset, key_size)),
        buffer_info(&env, &source)?,
        source_offset,
        source_size,
        buffer_info(&env, &target)?,
        target_offset,
    )?;
    // SAFETY: as in cipher_sync.
    Ok(unsafe { job.run() })
}

/// A job for the libuv pool, over its own copies of the bytes it reads.
///
/// JavaScript keeps running while the job does, and may detach a buffer
/// (`structuredClone(…, { transfer })`, `postMessage` to a worker), shrink a
/// resizable ArrayBuffer, or drop it and let it be collected; N-API has no
/// way to keep a backing store alive or attached (a reference keeps the view
/// object, not its memory). So every input is copied into memory this task
/// owns at the call, on the JS thread; the job reads and writes only that;
/// and when it ends, on the JS thread again, the output is copied into the
/// caller's target (and a seal's tag) only if each is still there as long as
/// it was — found afresh through a reference to the view, never through a
/// pointer kept from the call.
pub struct PoolTask {
    work: Work,
    /// Keys (and HMAC keys): zeroized when the task is dropped.
    _secret: Zeroizing<Vec<u8>>,
    /// IV, AAD and the expected tag.
    _public: Vec<u8>,
    /// The message: read by the job, and for a cipher transformed in place,
    /// followed by room for the tag a seal writes.
    data: Vec<u8>,
    /// Where the output goes: `(view, offset, bytes of the output)` in order
    /// (the message, then a seal's tag; or the digest).
    deliver: Vec<(ViewRef, u32, usize)>,
}

enum Work {
    Cipher(CipherJob),
    /// The job and the digest's output, on the heap so that its span stays
    /// put when the task moves.
    Digest(DigestJob, Box<[u8; 64]>),
}

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

impl Task for PoolTask {
    type Output = i32;
    type JsValue = i32;

    fn compute(&mut self) -> Result<i32> {
        let work = &mut self.work;
        // SAFETY: every span points into this task's own buffers, touched by
        // nothing else while the pool thread has `&mut self`.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            match work {
                Work::Cipher(j) => j.run(),
                Work::Digest(j, _) => j.run(),
            }
        }));
        r.map_err(|_| Error::from_reason("nonceforge: internal error (panic) in a pool task"))
    }

    /// Copies the output into its views — all of them, or none when any is
    /// gone (`E_DETACHED`) — and passes the job's code on. JS thread.
    fn resolve(&mut self, env: Env, code: i32) -> Result<i32> {
        if code < 0 {
            return Ok(code);
        }
        let output: &[u8] = match &self.work {
            Work::Cipher(_) => &self.data,
            Work::Digest(j, out) => &out[..j.alg.output_len()],
        };
        let mut places = Vec::with_capacity(self.deliver.len());
        for (view, offset, n) in &self.deliver {
            match view
                .bytes_now(&env)
                .and_then(|now| Span::new(now, *offset, *n as u32))
            {
                Some(place) => places.push(place),
                None => return Ok(E_DETACHED),
            }
        }
        let mut from = 0;
        for place in places {
            // SAFETY: `place` is in range of a view that is attached now, and JS is
            // blocked in this callback; the output is the task's own memory.
            unsafe {
                std::ptr::copy(
                    output[from..from + place.len].as_ptr(),
                    place.ptr,
                    place.len,
                )
            };
            from += place.len;
        }
        Ok(code)
    }

    fn finally(mut self, env: Env) -> Result<()> {
        for (view, _, _) in std::mem::take(&mut self.deliver) {
            view.delete(&env);
        }
        Ok(())
    }
}

impl Drop for PoolTask {
    fn drop(&mut self) {
        spare::give(std::mem::take(&mut self.data));
    }
}

/// The message buffers of finished pool jobs, kept for the next ones.
///
/// The copy a job makes at its call runs on the JS thread, and into a fresh
/// allocation it costs a page fault per 4 KiB touched (see bench/RESULTS.md,
/// "Node: the pool path's copies", for the figures). A few buffers are kept,
/// bounded in number and bytes; what they held is overwritten by the next
/// copy before anything reads it.
mod spare {
    use std::sync::Mutex;

    /// At most this many buffers are kept…
    const KEEP: usize = 4;
    /// …holding at most this many bytes in all (no single buffer larger).
    const KEEP_BYTES: usize = 128 << 20;
    /// Smaller ones are cheap to allocate and are not kept.
    const KEEP_FROM: usize = 64 << 10;

    static SPARE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

    /// An empty buffer with room for `n` bytes: the smallest spare that fits, or a new one.
    pub(super) fn take(n: usize) -> Vec<u8> {
        if n >= KEEP_FROM
            && let Ok(mut spare) = SPARE.lock()
            && let Some(i) = (0..spare.len())
                .filter(|&i| spare[i].capacity() >= n)
                .min_by_key(|&i| spare[i].capacity())
        {
            let mut buf = spare.swap_remove(i);
            buf.clear();
            return buf;
        }
        Vec::with_capacity(n)
    }

    /// Keeps `buf` for a later job within the bounds (dropping the smallest
    /// spares first: the large ones save the most), else frees it.
    pub(super) fn give(buf: Vec<u8>) {
        let cap = buf.capacity();
        if !(KEEP_FROM..=KEEP_BYTES).contains(&cap) {
            return;
        }
        let Ok(mut spare) = SPARE.lock() else { return };
        spare.push(buf);
        while spare.len() > KEEP || spare.iter().map(Vec::capacity).sum::<usize>() > KEEP_BYTES {
            let smallest = (0..spare.len())
                .min_by_key(|&i| spare[i].capacity())
                .unwrap_or(0);
            spare.swap_remove(smallest);
        }
    }
}

/// `value[offset .. offset + size]` copied onto `into`; its range there.
fn copy_in(
    env: &Env,
    value: &Unknown<'_>,
    offset: u32,
    size: u32,
    what: &str,
    into: &mut Vec<u8>,
) -> Result<std::ops::Range<usize>> {
    let s = span(buffer_info(env, value)?, offset, size, what)?;
    let at = into.len();
    // SAFETY: in range of a live buffer; JS is blocked in this call.
    into.extend_from_slice(unsafe { s.slice() });
    Ok(at..into.len())
}

/// A span over `buf[range]`; `buf` is not resized while the span is used.
fn span_of(buf: &mut [u8], range: std::ops::Range<usize>) -> Span {
    let part = &mut buf[range];
    Span {
        ptr: part.as_mut_ptr(),
        len: part.len(),
    }
}

/// Where the output goes, `(view, offset, bytes)` each: all checked in range
/// now, then referenced for `resolve` — every reference or none (a reference
/// never deleted would keep its view alive for good).
fn output_views(
    env: &Env,
    outputs: &[(&Unknown<'_>, u32, u32, &str)],
) -> Result<Vec<(ViewRef, u32, usize)>> {
    for (value, offset, n, what) in outputs {
        span(buffer_info(env, value)?, *offset, *n, what)?;
    }
    let mut views = Vec::with_capacity(outputs.len());
    for (value, offset, n, _) in outputs {
        match ViewRef::new(env, value) {
            Ok(view) => views.push((view, *offset, *n as usize)),
            Err(e) => {
                views.into_iter().for_each(|(v, _, _)| v.delete(env));
                return Err(e);
            }
        }
    }
    Ok(views)
}

/// The cipher on the libuv pool, over copies of its inputs (see [`PoolTask`]);
/// resolves to the bytes written or a negative code.
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
    let alg = cipher_alg(alg)?;
    let encrypt = encrypt == 1;
    let mut secret = Zeroizing::new(Vec::with_capacity(key_size as usize));
    let key = copy_in(&env, &key, key_offset, key_size, "key", &mut secret)?;
    let mut public = Vec::new();
    let iv = copy_in(&env, &iv, iv_offset, iv_size, "iv", &mut public)?;
    let aad = copy_in(&env, &aad, aad_offset, aad_size, "aad", &mut public)?;
    let sealed_tag = if encrypt { tag_size } else { 0 };
    let mut data = spare::take(source_size as usize + sealed_tag as usize);
    let message = copy_in(
        &env,
        &source,
        source_offset,
        source_size,
        "source",
        &mut data,
    )?;
    // A seal's tag is made after the message and delivered after it; an
    // open's is read from a copy.
    let tag_range = if encrypt {
        data.resize(data.len() + tag_size as usize, 0);
        message.end..data.len()
    } else {
        copy_in(&env, &tag, tag_offset, tag_size, "tag", &mut public)?
    };
    let target = (&target, target_offset, source_size, "target");
    let deliver = if encrypt {
        output_views(&env, &[target, (&tag, tag_offset, tag_size, "tag")])?
    } else {
        output_views(&env, &[target])?
    };
    let job = CipherJob {
        alg,
        encrypt,
        key: span_of(&mut secret, key),
        iv: span_of(&mut public, iv),
        source: span_of(&mut data, message.clone()),
        target: span_of(&mut data, message),
        aad: span_of(&mut public, aad),
        tag: if encrypt {
            span_of(&mut data, tag_range)
        } else {
            span_of(&mut public, tag_range)
        },
    };
    Ok(AsyncTask::new(PoolTask {
        work: Work::Cipher(job),
        _secret: secret,
        _public: public,
        data,
        deliver,
    }))
}

/// A hash (no key) or HMAC on the libuv pool, over copies of its inputs;
/// resolves to the digest's length or a negative code.
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
    let mut secret = Zeroizing::new(Vec::new());
    let key = match key {
        Some(k) => Some(copy_in(&env, &k, key_offset, key_size, "key", &mut secret)?),
        None => None,
    };
    let mut data = spare::take(source_size as usize);
    let message = copy_in(
        &env,
        &source,
        source_offset,
        source_size,
        "source",
        &mut data,
    )?;
    let n = alg.output_len();
    let deliver = output_views(&env, &[(&target, target_offset, n as u32, "target")])?;
    let mut out = Box::new([0u8; 64]);
    let job = DigestJob {
        alg,
        key: key.map(|k| span_of(&mut secret, k)),
        source: span_of(&mut data, message),
        target: span_of(&mut out[..], 0..n),
    };
    Ok(AsyncTask::new(PoolTask {
        work: Work::Digest(job, out),
        _secret: secret,
        _public: Vec::new(),
        data,
        deliver,
    }))
}

/// A streaming hash (`createHash`-like): update as data comes, digest once.
#[napi]
pub struct StreamingHash {
    inner: Option<bulk::Hasher>,
}

#[napi]
impl StreamingHash {
    /// A new state for the digest with this id.
    #[napi(constructor, catch_unwind)]
    pub fn new(alg: u32) -> Result<Self> {
        Ok(Self {
            inner: Some(bulk::Hasher::new(digest_alg(alg)?)),
        })
    }

    /// Feed `data[offset .. offset + size]`.
    #[napi(catch_unwind)]
    pub fn update(&mut self, env: Env, data: Unknown<'_>, offset: u32, size: u32) -> Result<()> {
        let h = self
            .inner
            .as_mut()
            .ok_or_else(|| Error::new(Status::GenericFailure, "digest already called"))?;
        let s = span(buffer_info(&env, &data)?, offset, size, "data")?;
        // SAFETY: in range of a live buffer; JS is blocked in this call.
        h.update(unsafe { s.slice() });
        Ok(())
    }

    /// Finish: the digest. The state cannot be used afterwards.
    #[napi(catch_unwind)]
    pub fn digest(&mut self) -> Result<Buffer> {
        let h = self
            .inner
            .take()
            .ok_or_else(|| Error::new(Status::GenericFailure, "digest already called"))?;
        let mut out = vec![0u8; h.alg().output_len()];
        h.finalize_into(&mut out)
            .map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(out.into())
    }
}

/// Every accepted name with its id and sizes, for the JS lookup tables:
/// ciphers as `[name, id, keyLength, ivLength, isAead]`, digests as `[name, id, length]`.
#[napi(object)]
pub struct Algorithms {
    /// `[name, id, keyLength, ivLength, isAead]` rows.
    pub ciphers: Vec<(String, u32, u32, u32, bool)>,
    /// `[name, id, length]` rows.
    pub digests: Vec<(String, u32, u32)>,
}

/// The algorithm tables.
#[napi]
pub fn algorithms() -> Algorithms {
    Algorithms {
        ciphers: CipherAlg::names()
            .map(|(n, a)| {
                (
                    n.to_string(),
                    a as u32,
                    a.key_len() as u32,
                    a.iv_len() as u32,
                    a.is_aead(),
                )
            })
            .collect(),
        digests: DigestAlg::names()
            .map(|(n, a)| (n.to_string(), a as u32, a.output_len() as u32))
            .collect(),
    }
}

/// What Node's OpenSSL says of an algorithm name (see `openssl.rs`):
/// `status` 0 unknown, 1 known but not supported ("algorithm disabled"),
/// 2 supported, 3 known but `EVP_DigestInit_ex` fails ("initialization
/// failed" at run time); `short` is OpenSSL's short name in lower case and
/// `size` a digest's length.
#[napi(object)]
pub struct NameInfo {
    /// 0 unknown, 1 disabled, 2 supported, 3 init fails.
    pub status: u32,
    /// OpenSSL's short name, lower case ("" when unknown).
    pub short: String,
    /// A digest's length in bytes (0 for ciphers).
    pub size: u32,
}

/// Asks Node's OpenSSL what `name` is, as a cipher (`digest` false) or a
/// digest; `null` where this process has no OpenSSL to ask.
#[napi(catch_unwind)]
pub fn openssl_name(name: String, digest: bool) -> Option<NameInfo> {
    use crate::openssl::{CipherName, DigestName};
    let info = |status, short, size| NameInfo {
        status,
        short,
        size,
    };
    if digest {
        Some(match crate::openssl::digest(&name)? {
            DigestName::Unknown => info(0, String::new(), 0),
            DigestName::Known { short, size, init } => info(if init { 2 } else { 3 }, short, size),
        })
    } else {
        Some(match crate::openssl::cipher(&name)? {
            CipherName::Unknown => info(0, String::new(), 0),
            CipherName::Disabled => info(1, String::new(), 0),
            CipherName::Supported(short) => info(2, short, 0),
        })
    }
}
