//! Byte ranges of JS buffers.

use napi::bindgen_prelude::*;
use napi::{Env, Unknown, sys};
use zeroize::Zeroizing;

/// A byte range of a buffer: a raw pointer, because the same buffer may be
/// passed as several arguments (source and target, say) and Rust references to
/// overlapping memory may not coexist. Slices are made only where they cannot
/// overlap a mutable one.
#[derive(Clone, Copy)]
pub struct Span {
    pub ptr: *mut u8,
    pub len: usize,
}

// SAFETY: a Span points into a JS buffer during a synchronous call (JS is
// blocked in it; the span dies with the call), into memory a pool task owns
// (nothing else touches it), or into a JS buffer's memory a pool task pinned
// (`pin::Pin`: it stays allocated until the task is dropped).
unsafe impl Send for Span {}

impl Span {
    /// `[off, off + size)` of a buffer `(ptr, len)`, or None when out of range.
    pub fn new(base: (*mut u8, usize), off: u32, size: u32) -> Option<Span> {
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

    /// A span over `buf[range]`; `buf` is not resized while the span is used.
    pub fn of(buf: &mut [u8], range: std::ops::Range<usize>) -> Span {
        let part = &mut buf[range];
        Span {
            ptr: part.as_mut_ptr(),
            len: part.len(),
        }
    }

    pub fn end(&self) -> usize {
        self.ptr as usize + self.len
    }

    pub fn overlaps(&self, other: &Span) -> bool {
        self.len != 0
            && other.len != 0
            && (self.ptr as usize) < other.end()
            && (other.ptr as usize) < self.end()
    }

    /// Whether `self` lies inside `[base, base + len)`.
    pub fn within(&self, base: *mut u8, len: usize) -> bool {
        self.len == 0 || (base as usize <= self.ptr as usize && self.end() <= base as usize + len)
    }

    /// Where to read this span's bytes from while `target` is written: the
    /// span itself when the two are the same bytes (in place) or disjoint,
    /// else a copy, owned by the first value (keep it alive while reading).
    ///
    /// # Safety
    /// As [`to_vec`](Self::to_vec).
    pub unsafe fn read_beside(self, target: &Span) -> (Option<Zeroizing<Vec<u8>>>, *const u8) {
        if self.ptr != target.ptr && self.overlaps(target) {
            // SAFETY: per the caller.
            let copy = unsafe { self.to_vec() };
            let ptr = copy.as_ptr();
            (Some(copy), ptr)
        } else {
            (None, self.ptr)
        }
    }

    /// A copy of the bytes.
    ///
    /// # Safety
    /// The span must be valid for reads and not written during the call.
    pub unsafe fn to_vec(self) -> Zeroizing<Vec<u8>> {
        // SAFETY: per the caller.
        Zeroizing::new(unsafe { self.slice() }.to_vec())
    }

    /// # Safety
    /// Valid for reads, and no `&mut` to these bytes lives while it does.
    pub unsafe fn slice<'a>(self) -> &'a [u8] {
        // SAFETY: per the caller; a dangling pointer is fine for len 0.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// # Safety
    /// Valid for writes, and no other reference to these bytes lives while it does.
    pub unsafe fn slice_mut<'a>(self) -> &'a mut [u8] {
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

/// One `(buffer, offset, size)` argument of a call, as every entry point
/// takes them; `what` names it in errors ("source" → "sourceOffset +
/// sourceSize > source.length").
#[derive(Clone, Copy)]
pub struct Arg<'a, 'v> {
    pub value: &'a Unknown<'v>,
    pub offset: u32,
    pub size: u32,
    pub what: &'static str,
}

impl<'a, 'v> Arg<'a, 'v> {
    pub fn new(value: &'a Unknown<'v>, offset: u32, size: u32, what: &'static str) -> Self {
        Arg {
            value,
            offset,
            size,
            what,
        }
    }

    /// The range in the buffer as it is now, checked.
    pub fn span(&self, env: &Env) -> Result<Span> {
        Ok(self.place(env)?.1)
    }

    /// The buffer as it is now, `(data, length)`, and the range in it, checked.
    pub fn place(&self, env: &Env) -> Result<((*mut u8, usize), Span)> {
        let base = buffer_info(env, self.value)?;
        let span = Span::new(base, self.offset, self.size).ok_or_else(|| {
            Error::new(
                Status::InvalidArg,
                format!("{w}Offset + {w}Size > {w}.length", w = self.what),
            )
        })?;
        Ok((base, span))
    }

    /// The bytes appended to `into`; their range there.
    pub fn copy_onto(&self, env: &Env, into: &mut Vec<u8>) -> Result<std::ops::Range<usize>> {
        let s = self.span(env)?;
        let at = into.len();
        // SAFETY: in range of a live buffer; JS is blocked in this call.
        into.extend_from_slice(unsafe { s.slice() });
        Ok(at..into.len())
    }
}

/// The six buffers of a cipher call: key, IV, source, target (as long as the
/// source), AAD and tag.
pub struct CipherArgs<'a, 'v> {
    pub key: Arg<'a, 'v>,
    pub iv: Arg<'a, 'v>,
    pub source: Arg<'a, 'v>,
    pub target: Arg<'a, 'v>,
    pub aad: Arg<'a, 'v>,
    pub tag: Arg<'a, 'v>,
}

/// The buffers of a hash (`key` None) or HMAC call; the target range is as
/// long as the digest.
pub struct DigestArgs<'a, 'v> {
    pub key: Option<Arg<'a, 'v>>,
    pub source: Arg<'a, 'v>,
    pub target: Arg<'a, 'v>,
}
