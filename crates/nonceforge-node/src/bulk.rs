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
use nonceforge::bulk::{self, BulkError, CipherAlg, Data, DigestAlg, Tag};
use zeroize::Zeroizing;

/// Result codes below zero (the wrapper's `ERRORS` table maps them to messages).
const E_CORRUPT: i32 = -1;
const E_INIT: i32 = -2;
const E_UPDATE: i32 = -3;
const E_ARGS: i32 = -4;

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

// SAFETY: a Span points into a JS buffer that the job keeps alive with a
// reference (napi `Buffer`) until the job is dropped on the JS thread; JS must
// not touch those bytes meanwhile (the documented contract, as the original's).
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

enum Work {
    Cipher(CipherJob),
    Digest(DigestJob),
}

/// A job for the libuv pool. The `Buffer`s hold references that keep the JS
/// buffers (and so the spans) alive until the task is dropped, on the JS thread.
pub struct PoolTask {
    work: Work,
    _pins: Vec<Buffer>,
}

impl Task for PoolTask {
    type Output = i32;
    type JsValue = i32;

    fn compute(&mut self) -> Result<i32> {
        // SAFETY: the pins keep every span's buffer alive; the caller promised not
        // to touch the buffers until the promise settles.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            match &self.work {
                Work::Cipher(j) => j.run(),
                Work::Digest(j) => j.run(),
            }
        }));
        r.map_err(|_| Error::from_reason("nonceforge: internal error (panic) in a pool task"))
    }

    fn resolve(&mut self, _env: Env, output: i32) -> Result<i32> {
        Ok(output)
    }
}

fn pinned(b: &mut Buffer) -> (*mut u8, usize) {
    let s = b.as_mut();
    (s.as_mut_ptr(), s.len())
}

/// The cipher on the libuv pool; resolves to the bytes written or a negative code.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn cipher_pool(
    alg: u32,
    encrypt: u32,
    mut key: Buffer,
    key_offset: u32,
    key_size: u32,
    mut iv: Buffer,
    iv_offset: u32,
    iv_size: u32,
    mut source: Buffer,
    source_offset: u32,
    source_size: u32,
    mut target: Buffer,
    target_offset: u32,
    mut aad: Buffer,
    aad_offset: u32,
    aad_size: u32,
    mut tag: Buffer,
    tag_offset: u32,
    tag_size: u32,
    signal: Option<AbortSignal>,
) -> Result<AsyncTask<PoolTask>> {
    let job = cipher_job(
        alg,
        encrypt,
        pinned(&mut key),
        key_offset,
        key_size,
        pinned(&mut iv),
        iv_offset,
        iv_size,
        pinned(&mut source),
        source_offset,
        source_size,
        pinned(&mut target),
        target_offset,
        pinned(&mut aad),
        aad_offset,
        aad_size,
        pinned(&mut tag),
        tag_offset,
        tag_size,
    )?;
    let task = PoolTask {
        work: Work::Cipher(job),
        _pins: vec![key, iv, source, target, aad, tag],
    };
    Ok(AsyncTask::with_optional_signal(task, signal))
}

/// A hash (no key) or HMAC on the libuv pool.
#[napi(catch_unwind)]
#[allow(clippy::too_many_arguments)]
pub fn digest_pool(
    alg: u32,
    key: Option<Buffer>,
    key_offset: u32,
    key_size: u32,
    mut source: Buffer,
    source_offset: u32,
    source_size: u32,
    mut target: Buffer,
    target_offset: u32,
    signal: Option<AbortSignal>,
) -> Result<AsyncTask<PoolTask>> {
    let mut pins = Vec::with_capacity(3);
    let key = key.map(|mut k| {
        let base = pinned(&mut k);
        pins.push(k);
        (base, key_offset, key_size)
    });
    let job = digest_job(
        alg,
        key,
        pinned(&mut source),
        source_offset,
        source_size,
        pinned(&mut target),
        target_offset,
    )?;
    pins.push(source);
    pins.push(target);
    Ok(AsyncTask::with_optional_signal(
        PoolTask {
            work: Work::Digest(job),
            _pins: pins,
        },
        signal,
    ))
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
