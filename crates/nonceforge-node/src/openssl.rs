//! The OpenSSL inside the Node process, asked about algorithm names.
//!
//! @ronomon/crypto-async classifies a name by asking Node's OpenSSL
//! (`EVP_get_cipherbyname`, `EVP_get_digestbyname`), which knows many more
//! names than `crypto.getCiphers()` lists: aliases, OIDs, any letter case,
//! legacy ciphers such as `rc4`. To classify every name exactly as the
//! original does on the same Node, the drop-in asks the same OpenSSL: Node
//! exports its OpenSSL symbols to addons (a Node linked to a shared libcrypto
//! has it in the global scope), so they are looked up once with `dlsym`.
//! Where they cannot be found (a runtime without OpenSSL) the JavaScript side
//! falls back to the addon's own name table.
//!
//! Only name lookups and one trial `EVP_DigestInit_ex` (for digests OpenSSL 3
//! keeps in its legacy provider, which the original fails at run time) are
//! made; the answers are cached by the caller.

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

type ByName = unsafe extern "C" fn(*const c_char) -> *const c_void;
type GetInt = unsafe extern "C" fn(*const c_void) -> c_int;
type Nid2Sn = unsafe extern "C" fn(c_int) -> *const c_char;
type CtxNew = unsafe extern "C" fn() -> *mut c_void;
type CtxFree = unsafe extern "C" fn(*mut c_void);
type DigestInit = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
type Mark = unsafe extern "C" fn() -> c_int;

/// The OpenSSL 3 functions used, all found or none.
struct Api {
    get_cipherbyname: ByName,
    cipher_nid: GetInt,
    cipher_mode: GetInt,
    get_digestbyname: ByName,
    md_type: GetInt,
    md_size: GetInt,
    nid2sn: Nid2Sn,
    md_ctx_new: CtxNew,
    md_ctx_free: CtxFree,
    digest_init_ex: DigestInit,
    err_set_mark: Mark,
    err_pop_to_mark: Mark,
}

#[cfg(unix)]
fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT searches the symbols already loaded in
    // the process; `name` is NUL-terminated. It has no other effect.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

#[cfg(not(unix))]
fn symbol(_: &CStr) -> Option<*mut c_void> {
    None
}

macro_rules! func {
    ($name:literal, $ty:ty) => {{
        let p = symbol($name)?;
        // SAFETY: the symbol is OpenSSL 3's function of this name, whose C
        // signature is `$ty` (openssl/evp.h, objects.h, err.h).
        unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
    }};
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        Some(Api {
            get_cipherbyname: func!(c"EVP_get_cipherbyname", ByName),
            cipher_nid: func!(c"EVP_CIPHER_get_nid", GetInt),
            cipher_mode: func!(c"EVP_CIPHER_get_mode", GetInt),
            get_digestbyname: func!(c"EVP_get_digestbyname", ByName),
            md_type: func!(c"EVP_MD_get_type", GetInt),
            md_size: func!(c"EVP_MD_get_size", GetInt),
            nid2sn: func!(c"OBJ_nid2sn", Nid2Sn),
            md_ctx_new: func!(c"EVP_MD_CTX_new", CtxNew),
            md_ctx_free: func!(c"EVP_MD_CTX_free", CtxFree),
            digest_init_ex: func!(c"EVP_DigestInit_ex", DigestInit),
            err_set_mark: func!(c"ERR_set_mark", Mark),
            err_pop_to_mark: func!(c"ERR_pop_to_mark", Mark),
        })
    })
    .as_ref()
}

/// The name as the original hands it to OpenSSL: `napi_get_value_string_utf8`
/// into a 32-byte buffer keeps at most 31 bytes (whole characters), and C
/// stops at the first NUL.
pub fn c_name(name: &str) -> CString {
    let mut end = name.len().min(31);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &name[..end];
    let cut = cut.split('\0').next().unwrap_or("");
    CString::new(cut).expect("no NUL after the cut")
}

/// What OpenSSL says of a cipher name.
pub enum CipherName {
    /// `EVP_get_cipherbyname` knows no such name.
    Unknown,
    /// A cipher that is not CTR, GCM, ChaCha20 or ChaCha20-Poly1305.
    Disabled,
    /// A supported cipher, by OpenSSL's short name (lower case).
    Supported(String),
}

/// What OpenSSL says of a digest name.
pub enum DigestName {
    /// `EVP_get_digestbyname` knows no such name.
    Unknown,
    /// Known, by its short name (lower case) and size; `init` is whether
    /// `EVP_DigestInit_ex` succeeds (false for MD4, Whirlpool, MDC2: OpenSSL
    /// 3's legacy provider is not loaded).
    Known {
        short: String,
        size: u32,
        init: bool,
    },
}

const EVP_CIPH_CTR_MODE: c_int = 0x5;
const EVP_CIPH_GCM_MODE: c_int = 0x6;

fn short_name(api: &Api, nid: c_int) -> String {
    // SAFETY: OBJ_nid2sn returns NULL or a static NUL-terminated string.
    let p = unsafe { (api.nid2sn)(nid) };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: non-null, static, NUL-terminated (above).
    unsafe { CStr::from_ptr(p) }
        .to_string_lossy()
        .to_ascii_lowercase()
}

/// Classifies a cipher name as the original does; `None` without OpenSSL.
pub fn cipher(name: &str) -> Option<CipherName> {
    let api = api()?;
    let c = c_name(name);
    // SAFETY: a NUL-terminated name; the result is NULL or a cipher object
    // OpenSSL owns (legacy static tables), only read here.
    let evp = unsafe { (api.get_cipherbyname)(c.as_ptr()) };
    if evp.is_null() {
        return Some(CipherName::Unknown);
    }
    // SAFETY: `evp` is a valid cipher (above).
    let (nid, mode) = unsafe { ((api.cipher_nid)(evp), (api.cipher_mode)(evp)) };
    let short = short_name(api, nid);
    let supported = mode == EVP_CIPH_CTR_MODE
        || mode == EVP_CIPH_GCM_MODE
        || short == "chacha20"
        || short == "chacha20-poly1305";
    Some(if supported {
        CipherName::Supported(short)
    } else {
        CipherName::Disabled
    })
}

/// Classifies a digest name as the original does; `None` without OpenSSL.
pub fn digest(name: &str) -> Option<DigestName> {
    let api = api()?;
    let c = c_name(name);
    // SAFETY: as in `cipher`.
    let md = unsafe { (api.get_digestbyname)(c.as_ptr()) };
    if md.is_null() {
        return Some(DigestName::Unknown);
    }
    // SAFETY: `md` is a valid digest (above).
    let (nid, size) = unsafe { ((api.md_type)(md), (api.md_size)(md)) };
    // SAFETY: a fresh context, initialised with `md` and freed; the error
    // mark keeps whatever a failed init queues off the thread's error queue,
    // which Node's own crypto calls read.
    let init = unsafe {
        (api.err_set_mark)();
        let ctx = (api.md_ctx_new)();
        let ok = !ctx.is_null() && (api.digest_init_ex)(ctx, md, std::ptr::null_mut()) == 1;
        (api.md_ctx_free)(ctx);
        (api.err_pop_to_mark)();
        ok
    };
    Some(DigestName::Known {
        short: short_name(api, nid),
        size: size.max(0) as u32,
        init,
    })
}

/// ChaCha20-Poly1305 sealing through Node's OpenSSL.
///
/// Measured here (2 vCPUs, AMD EPYC Zen 5, Node 20, OpenSSL 3.0.19;
/// `node bench/node/bench.js`, "more ciphers, sync"): OpenSSL seals at
/// 4.3–4.8 GB/s at 64 KiB–1 MiB with its AVX-512 ChaCha20 and AVX-512 IFMA
/// Poly1305; ring (BoringSSL's AVX2 code) stops at 2.5 GB/s, the RustCrypto
/// crates below that (chacha20 with AVX-512 at 5.5 GB/s, but poly1305 on AVX2
/// only). No crate has an AVX-512 IFMA Poly1305, and the OpenSSL the original
/// uses is already in the process, so the drop-in seals large messages with
/// it: the same bytes, 1.0× by construction. Opening stays in Rust, because
/// it checks the tag before writing (OpenSSL decrypts first).
pub mod aead {
    use super::{CipherName, Mark, c_int, c_void, symbol};
    use std::ffi::c_char;
    use std::sync::OnceLock;

    type Fetch = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
    type CtxNew = unsafe extern "C" fn() -> *mut c_void;
    type CtxFree = unsafe extern "C" fn(*mut c_void);
    type Init = unsafe extern "C" fn(
        *mut c_void,
        *const c_void,
        *mut c_void,
        *const u8,
        *const u8,
        c_int,
    ) -> c_int;
    type Update = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
    type Final = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
    type Ctrl = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void) -> c_int;
    type Version = unsafe extern "C" fn() -> std::ffi::c_ulong;

    const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;

    struct Api {
        cipher: usize,
        ctx_new: CtxNew,
        ctx_free: CtxFree,
        init: Init,
        update: Update,
        fin: Final,
        ctrl: Ctrl,
        set_mark: Mark,
        pop_to_mark: Mark,
    }

    fn api() -> Option<&'static Api> {
        static API: OnceLock<Option<Api>> = OnceLock::new();
        API.get_or_init(|| {
            let version = func!(c"OpenSSL_version_num", Version);
            // SAFETY: no arguments; returns a number.
            if unsafe { version() } < 0x3000_0000 {
                return None;
            }
            // The supported-cipher check of the original, on the same name.
            if !matches!(
                super::cipher("chacha20-poly1305")?,
                CipherName::Supported(_)
            ) {
                return None;
            }
            let fetch = func!(c"EVP_CIPHER_fetch", Fetch);
            // SAFETY: the default library context, a NUL-terminated name, no
            // properties. The cipher is kept for the life of the process.
            let cipher = unsafe {
                fetch(
                    std::ptr::null_mut(),
                    c"ChaCha20-Poly1305".as_ptr(),
                    std::ptr::null(),
                )
            };
            if cipher.is_null() {
                return None;
            }
            Some(Api {
                cipher: cipher as usize,
                ctx_new: func!(c"EVP_CIPHER_CTX_new", CtxNew),
                ctx_free: func!(c"EVP_CIPHER_CTX_free", CtxFree),
                init: func!(c"EVP_CipherInit_ex", Init),
                update: func!(c"EVP_CipherUpdate", Update),
                fin: func!(c"EVP_CipherFinal_ex", Final),
                ctrl: func!(c"EVP_CIPHER_CTX_ctrl", Ctrl),
                set_mark: func!(c"ERR_set_mark", Mark),
                pop_to_mark: func!(c"ERR_pop_to_mark", Mark),
            })
        })
        .as_ref()
    }

    /// Seals `len` bytes from `src` to `dst` (they may be the same pointer)
    /// under a 32-byte key and 12-byte nonce, and writes `tag.len()` (1..=16)
    /// bytes of the tag. `None`: OpenSSL is not available or failed (nothing
    /// to rely on in `dst`); the caller seals another way.
    ///
    /// # Safety
    /// `src` is valid for `len` reads and `dst` for `len` writes; they are
    /// equal or do not overlap.
    pub unsafe fn seal(
        key: &[u8; 32],
        nonce: &[u8; 12],
        aad: &[u8],
        src: *const u8,
        dst: *mut u8,
        len: usize,
        tag: &mut [u8],
    ) -> Option<()> {
        let api = api()?;
        let len = c_int::try_from(len).ok()?;
        let aad_len = c_int::try_from(aad.len()).ok()?;
        if tag.is_empty() || tag.len() > 16 {
            return None;
        }
        // SAFETY: a fresh context, freed below on every path; key, nonce, AAD,
        // tag are live slices; src/dst per this function's contract; the error
        // mark keeps a failure off the thread's error queue.
        unsafe {
            (api.set_mark)();
            let ctx = (api.ctx_new)();
            let (mut a, mut n, mut f): (c_int, c_int, c_int) = (0, 0, 0);
            let ok = !ctx.is_null()
                && (api.init)(
                    ctx,
                    api.cipher as *const c_void,
                    std::ptr::null_mut(),
                    key.as_ptr(),
                    nonce.as_ptr(),
                    1,
                ) == 1
                && (aad_len == 0
                    || (api.update)(ctx, std::ptr::null_mut(), &mut a, aad.as_ptr(), aad_len) == 1)
                && (len == 0 || (api.update)(ctx, dst, &mut n, src, len) == 1)
                && n == len
                && (api.fin)(ctx, dst.add(n as usize), &mut f) == 1
                && f == 0
                && (api.ctrl)(
                    ctx,
                    EVP_CTRL_AEAD_GET_TAG,
                    tag.len() as c_int,
                    tag.as_mut_ptr().cast(),
                ) == 1;
            (api.ctx_free)(ctx);
            (api.pop_to_mark)();
            ok.then_some(())
        }
    }
}
