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

/// Ciphers through Node's OpenSSL `EVP_Cipher*` interface.
///
/// Used where OpenSSL is the faster code and the bytes are OpenSSL's by
/// definition: ChaCha20-Poly1305 seals and ChaCha20 of 4 KiB and more, and
/// crypto-async 1.0.2's ciphers, which take any OpenSSL cipher by name (CBC
/// and the other block modes, with OpenSSL's PKCS#7 padding).
///
/// OpenSSL seals ChaCha20-Poly1305 with its AVX-512 ChaCha20 and AVX-512 IFMA
/// Poly1305, well ahead of ring (BoringSSL's AVX2 code) and of the RustCrypto
/// crates (chacha20 has AVX-512, poly1305 AVX2 only); for plain ChaCha20 the
/// `chacha20` crate runs behind OpenSSL's too (figures: bench/RESULTS.md,
/// "The measurements behind the code" and "Node: large jobs"). No
/// crate has an AVX-512 IFMA Poly1305, and the OpenSSL the original uses is
/// already in the process, so the drop-in uses it for these: the same bytes,
/// 1.0× by construction. Opening stays in Rust, because it checks the tag
/// before writing (OpenSSL decrypts first).
pub mod evp {
    use super::{CipherName, Mark, c_int, c_void, symbol};
    use std::ffi::{CString, c_char};
    // `CipherName` classifies the fetched names as the original would.
    use std::sync::OnceLock;

    type Fetch = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
    type ByName = unsafe extern "C" fn(*const c_char) -> *const c_void;
    type GetInt = unsafe extern "C" fn(*const c_void) -> c_int;
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
        fetch: Fetch,
        by_name: ByName,
        key_length: GetInt,
        iv_length: GetInt,
        block_size: GetInt,
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
            Some(Api {
                fetch: func!(c"EVP_CIPHER_fetch", Fetch),
                by_name: func!(c"EVP_get_cipherbyname", ByName),
                key_length: func!(c"EVP_CIPHER_get_key_length", GetInt),
                iv_length: func!(c"EVP_CIPHER_get_iv_length", GetInt),
                block_size: func!(c"EVP_CIPHER_get_block_size", GetInt),
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

    /// A cipher of OpenSSL's default provider, fetched once for the process
    /// (an explicit fetch: no per-call name lookup), if the original would
    /// accept it (its supported-cipher check on the same name).
    fn fetched(
        cell: &'static OnceLock<usize>,
        name: &std::ffi::CStr,
    ) -> Option<(&'static Api, *const c_void)> {
        let api = api()?;
        let p = *cell.get_or_init(|| {
            let short = name.to_str().unwrap_or("");
            if !matches!(super::cipher(short), Some(CipherName::Supported(_))) {
                return 0;
            }
            // SAFETY: the default library context, a NUL-terminated name, no
            // properties. The cipher is kept for the life of the process.
            unsafe { (api.fetch)(std::ptr::null_mut(), name.as_ptr(), std::ptr::null()) as usize }
        });
        (p != 0).then_some((api, p as *const c_void))
    }

    /// One `EVP_CipherInit_ex` … `EVP_CipherFinal_ex` run in a fresh context
    /// inside an error mark (nothing left on the thread's error queue, which
    /// Node's own crypto calls read): `aad` first, then `len` bytes from
    /// `src` to `dst`, then the final block after them. `with_ctx` runs last
    /// (a seal reads its tag there). The bytes written, or the step that
    /// failed: `Err(0)` init, `Err(1)` update, `Err(2)` final.
    ///
    /// # Safety
    /// `cipher` is a cipher object of `api`; `key` and `iv` are as long as it
    /// needs; `src` is valid for `len` reads and `dst` for `len` plus one
    /// block of writes; they are equal or do not overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        api: &Api,
        cipher: *const c_void,
        encrypt: bool,
        key: *const u8,
        iv: *const u8,
        aad: &[u8],
        src: *const u8,
        dst: *mut u8,
        len: usize,
        with_ctx: impl FnOnce(*mut c_void) -> bool,
    ) -> Result<usize, u8> {
        let len = c_int::try_from(len).map_err(|_| 1u8)?;
        let aad_len = c_int::try_from(aad.len()).map_err(|_| 1u8)?;
        // SAFETY: a fresh context, freed below on every path; the pointers per
        // this function's contract.
        unsafe {
            (api.set_mark)();
            let ctx = (api.ctx_new)();
            let (mut a, mut n, mut f): (c_int, c_int, c_int) = (0, 0, 0);
            let result = if ctx.is_null()
                || (api.init)(ctx, cipher, std::ptr::null_mut(), key, iv, encrypt as c_int) != 1
            {
                Err(0)
            } else if (aad_len != 0
                && (api.update)(ctx, std::ptr::null_mut(), &mut a, aad.as_ptr(), aad_len) != 1)
                || (len != 0 && (api.update)(ctx, dst, &mut n, src, len) != 1)
            {
                Err(1)
            } else if (api.fin)(ctx, dst.add(n as usize), &mut f) != 1 || !with_ctx(ctx) {
                Err(2)
            } else {
                Ok(n as usize + f as usize)
            };
            (api.ctx_free)(ctx);
            (api.pop_to_mark)();
            result
        }
    }

    /// Seals `len` bytes from `src` to `dst` (they may be the same pointer)
    /// with ChaCha20-Poly1305 under a 32-byte key and 12-byte nonce, and
    /// writes `tag.len()` (1..=16) bytes of the tag. `None`: OpenSSL is not
    /// available or failed (nothing to rely on in `dst`); the caller seals
    /// another way.
    ///
    /// # Safety
    /// `src` is valid for `len` reads and `dst` for `len` writes; they are
    /// equal or do not overlap.
    pub unsafe fn seal_chacha20_poly1305(
        key: &[u8; 32],
        nonce: &[u8; 12],
        aad: &[u8],
        src: *const u8,
        dst: *mut u8,
        len: usize,
        tag: &mut [u8],
    ) -> Option<()> {
        static CIPHER: OnceLock<usize> = OnceLock::new();
        let (api, cipher) = fetched(&CIPHER, c"ChaCha20-Poly1305")?;
        if tag.is_empty() || tag.len() > 16 {
            return None;
        }
        let tag_len = tag.len() as c_int;
        let get_tag = |ctx| {
            // SAFETY: a live context after a successful final; `tag` holds tag_len bytes.
            unsafe { (api.ctrl)(ctx, EVP_CTRL_AEAD_GET_TAG, tag_len, tag.as_mut_ptr().cast()) == 1 }
        };
        // SAFETY: per this function's contract; a stream cipher's final writes nothing.
        let n = unsafe {
            run(
                api,
                cipher,
                true,
                key.as_ptr(),
                nonce.as_ptr(),
                aad,
                src,
                dst,
                len,
                get_tag,
            )
        };
        (n == Ok(len)).then_some(())
    }

    /// ChaCha20 with OpenSSL's 16-byte IV (the layout `nonceforge_bulk`'s
    /// ChaCha20 follows), `len` bytes
    /// from `src` to `dst`. `None`: not available or failed.
    ///
    /// # Safety
    /// As [`seal_chacha20_poly1305`].
    pub unsafe fn chacha20(
        key: &[u8; 32],
        iv: &[u8; 16],
        src: *const u8,
        dst: *mut u8,
        len: usize,
    ) -> Option<()> {
        static CIPHER: OnceLock<usize> = OnceLock::new();
        let (api, cipher) = fetched(&CIPHER, c"ChaCha20")?;
        // SAFETY: per this function's contract; a stream cipher's final writes nothing.
        let n = unsafe {
            run(
                api,
                cipher,
                true,
                key.as_ptr(),
                iv.as_ptr(),
                &[],
                src,
                dst,
                len,
                |_| true,
            )
        };
        (n == Ok(len)).then_some(())
    }

    /// An OpenSSL cipher by any name `EVP_get_cipherbyname` knows, as
    /// crypto-async 1.0.2 takes them.
    #[derive(Clone, Copy)]
    pub struct Named {
        cipher: usize,
        pub key_len: usize,
        pub iv_len: usize,
        pub block_size: usize,
    }

    impl Named {
        /// The cipher of that name (cut as the original cuts it, see
        /// [`super::c_name`]), or `None`: unknown, or no OpenSSL here.
        pub fn find(name: &str) -> Option<Named> {
            let api = api()?;
            let c: CString = super::c_name(name);
            // SAFETY: a NUL-terminated name; the result is NULL or a static
            // cipher object OpenSSL owns for the life of the process.
            let cipher = unsafe { (api.by_name)(c.as_ptr()) };
            if cipher.is_null() {
                return None;
            }
            // SAFETY: a valid cipher (above).
            let (k, i, b) = unsafe {
                (
                    (api.key_length)(cipher),
                    (api.iv_length)(cipher),
                    (api.block_size)(cipher),
                )
            };
            Some(Named {
                cipher: cipher as usize,
                key_len: k.max(0) as usize,
                iv_len: i.max(0) as usize,
                block_size: b.max(1) as usize,
            })
        }

        /// The room a call on `len` bytes needs. Encrypting, exactly what it
        /// writes: `len` for a stream, else `len` rounded down to a block plus
        /// one block of padding. (crypto-async 1.0.2 asks for `len + block -
        /// 1`, one byte short when `len` is a multiple of the block: its
        /// final block then overruns the range it checked.) Decrypting, 1.0.2's
        /// `len + block` (`len` for a stream), which OpenSSL documents.
        pub fn room(&self, encrypt: bool, len: usize) -> usize {
            match (encrypt, self.block_size) {
                (_, 1) => len,
                (true, b) => len - len % b + b,
                (false, b) => len + b,
            }
        }

        /// Encrypts or decrypts `len` bytes from `src` into `dst`, with
        /// OpenSSL's PKCS#7 padding for block modes: the bytes written, or
        /// `Err(step)` (0 init, 1 update, 2 final: a decrypt with bad padding).
        ///
        /// # Safety
        /// `key` and `iv` hold `key_len` and `iv_len` bytes; `src` is valid for
        /// `len` reads and `dst` for [`room`](Self::room) writes, and they do
        /// not overlap.
        pub unsafe fn crypt(
            &self,
            encrypt: bool,
            key: *const u8,
            iv: *const u8,
            src: *const u8,
            len: usize,
            dst: *mut u8,
        ) -> Result<usize, u8> {
            let api = api().ok_or(0u8)?;
            // SAFETY: per this function's contract.
            unsafe {
                run(
                    api,
                    self.cipher as *const c_void,
                    encrypt,
                    key,
                    iv,
                    &[],
                    src,
                    dst,
                    len,
                    |_| true,
                )
            }
        }
    }
}
