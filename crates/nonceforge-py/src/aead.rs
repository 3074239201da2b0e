//! The sanitizer as drop-ins for `cryptography`'s AEADs: `AESGCM`,
//! `ChaCha20Poly1305` and `AESGCMSIV` with their constructors, methods and
//! `InvalidTag`, byte-identical output, refusing a repeated (key, nonce) with
//! `NonceReuseError`. AES-128/256-GCM and ChaCha20-Poly1305 run on ring (the
//! same assembly as BoringSSL's), AES-192-GCM and AES-GCM-SIV on RustCrypto.

use crate::{InvalidTag, RELEASE_GIL_FROM, bad_value, bytes_like, core_err, int_in, type_error};
use aes_gcm::aead::{AeadInOut, Key, KeyInit, Nonce, Tag};
use nonceforge::aead::{
    Aes192Gcm, GuardConfig, NamedAead, NonceMode, Policy, Sanitized, SanitizedLessSafeKey,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ring::aead::{self as ring_aead, Aad};
use std::borrow::Cow;
use zeroize::Zeroize;

/// The sanitizer's settings, keyword-only after the key in every class.
fn config(
    mode: &str,
    window: Option<&Bound<'_, PyAny>>,
    counter_window: Option<&Bound<'_, PyAny>>,
    allow_identical: bool,
    check_open: bool,
    max_seals: Option<&Bound<'_, PyAny>>,
    max_bytes: Option<&Bound<'_, PyAny>>,
) -> PyResult<GuardConfig> {
    let mut cfg = GuardConfig::default()
        .policy(Policy::Error)
        .allow_identical(allow_identical)
        .check_open(check_open)
        .mode(match mode {
            "auto" => NonceMode::Auto,
            "counter" => NonceMode::Counter,
            "random" => NonceMode::Random,
            other => {
                return Err(bad_value(
                    "mode",
                    format!("must be 'auto', 'counter' or 'random', got {other:?}"),
                ));
            }
        });
    let positive = |name: &str, v: &Bound<'_, PyAny>, max: u64| -> PyResult<u64> {
        match int_in(name, v, max)? {
            0 => Err(bad_value(name, "must be at least 1")),
            n => Ok(n),
        }
    };
    // The windows' bounds are the core's: it clamps (testdata/vectors/sanitizer-defaults.json).
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if let Some(w) = window {
        cfg = cfg.window(size(positive("window", w, u64::MAX)?));
    }
    if let Some(w) = counter_window {
        cfg = cfg.counter_window(size(positive("counter_window", w, u64::MAX)?));
    }
    if let Some(n) = max_seals {
        cfg = cfg.max_seals(positive("max_seals", n, u64::MAX)?);
    }
    if let Some(n) = max_bytes {
        cfg = cfg.max_bytes(positive("max_bytes", n, u64::MAX)?);
    }
    Ok(cfg)
}

enum Engine {
    Ring(SanitizedLessSafeKey),
    Aes192(Sanitized<Aes192Gcm>),
    Siv128(Sanitized<aes_gcm_siv::Aes128GcmSiv>),
    Siv256(Sanitized<aes_gcm_siv::Aes256GcmSiv>),
}

fn rust_crypto<A: AeadInOut + KeyInit + NamedAead>(
    key: &[u8],
    cfg: GuardConfig,
) -> PyResult<Sanitized<A>> {
    let k = Key::<A>::try_from(key).map_err(|_| PyValueError::new_err("key has the wrong size"))?;
    Sanitized::with_config(&k, cfg).map_err(core_err)
}

fn nonce12(nonce: &[u8]) -> PyResult<[u8; 12]> {
    nonce.try_into().map_err(|_| {
        PyValueError::new_err(format!(
            "Nonce must be 12 bytes (nonceforge sanitizes 96-bit nonces only), got {}",
            nonce.len()
        ))
    })
}

fn seal_rc<A: AeadInOut + KeyInit + NamedAead>(
    a: &Sanitized<A>,
    n: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
) -> nonceforge::Result<[u8; 16]> {
    let nonce = Nonce::<A>::try_from(&n[..]).expect("12-byte nonce");
    let t = a.seal_in_place_detached(&nonce, aad, buf)?;
    Ok(t.as_slice().try_into().expect("16-byte tag"))
}

fn open_rc<A: AeadInOut + KeyInit + NamedAead>(
    a: &Sanitized<A>,
    n: &[u8; 12],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> nonceforge::Result<()> {
    let nonce = Nonce::<A>::try_from(&n[..]).expect("12-byte nonce");
    let tag = Tag::<A>::try_from(tag).expect("16-byte tag");
    a.open_in_place_detached(&nonce, aad, buf, &tag)
}

impl Engine {
    fn seal(&self, n: [u8; 12], aad: &[u8], buf: &mut [u8]) -> nonceforge::Result<[u8; 16]> {
        match self {
            Engine::Ring(k) => k
                .seal(
                    ring_aead::Nonce::assume_unique_for_key(n),
                    Aad::from(aad),
                    buf,
                )
                .map(|t| t.as_ref().try_into().expect("16-byte tag")),
            Engine::Aes192(a) => seal_rc(a, &n, aad, buf),
            Engine::Siv128(a) => seal_rc(a, &n, aad, buf),
            Engine::Siv256(a) => seal_rc(a, &n, aad, buf),
        }
    }

    /// Opens `buf` (ciphertext ‖ tag) in place: `Ok(len)` of the plaintext
    /// at its start. A forgery is `Aead { operation: "open" }`; a replay
    /// (with `check_open`) `NonceReuse`; on either the buffer is wiped.
    fn open(&self, n: [u8; 12], aad: &[u8], buf: &mut [u8]) -> nonceforge::Result<usize> {
        let len = buf.len() - 16;
        let forged = |name| nonceforge::Error::Aead {
            algorithm: name,
            operation: "open",
        };
        match self {
            Engine::Ring(k) => {
                // ring's open (its adapter folds a replay into the same
                // opaque error): the replay check made here, typed.
                let r = k
                    .inner_key_tmp()
                    .open_in_place(
                        ring_aead::Nonce::assume_unique_for_key(n),
                        Aad::from(aad),
                        buf,
                    )
                    .map(|p| p.len());
                match r {
                    Ok(len) => match k.guard().check_open(&n) {
                        Ok(()) => Ok(len),
                        Err(e) => {
                            buf.zeroize();
                            Err(e)
                        }
                    },
                    Err(_) => {
                        buf.zeroize();
                        Err(forged(k.guard().algorithm()))
                    }
                }
            }
            Engine::Aes192(a) => {
                let (ct, tag) = buf.split_at_mut(len);
                open_rc(a, &n, aad, ct, tag).map(|()| len)
            }
            Engine::Siv128(a) => {
                let (ct, tag) = buf.split_at_mut(len);
                open_rc(a, &n, aad, ct, tag).map(|()| len)
            }
            Engine::Siv256(a) => {
                let (ct, tag) = buf.split_at_mut(len);
                open_rc(a, &n, aad, ct, tag).map(|()| len)
            }
        }
    }
}

fn aad_of<'a>(aad: &'a Option<Bound<'_, PyAny>>) -> PyResult<Cow<'a, [u8]>> {
    match aad {
        None => Ok(Cow::Borrowed(&[])),
        Some(a) if a.is_none() => Ok(Cow::Borrowed(&[])),
        Some(a) => bytes_like("associated_data", a),
    }
}

/// The 96-bit nonce, the data and the associated data of a call.
type Arguments<'a> = ([u8; 12], Cow<'a, [u8]>, Cow<'a, [u8]>);

/// `encrypt`'s and `decrypt`'s arguments, checked: the 96-bit nonce, the
/// data, the associated data (None: empty).
fn arguments<'a>(
    nonce: &Bound<'_, PyAny>,
    data: &'a Bound<'_, PyAny>,
    associated_data: &'a Option<Bound<'_, PyAny>>,
) -> PyResult<Arguments<'a>> {
    Ok((
        nonce12(&bytes_like("nonce", nonce)?)?,
        bytes_like("data", data)?,
        aad_of(associated_data)?,
    ))
}

fn encrypt<'py>(
    e: &Engine,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    associated_data: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (n, data, aad) = arguments(nonce, data, &associated_data)?;
    let len = data.len();
    if len > (i32::MAX as usize) - 16 {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "Data or associated data too long. Max 2**31 - 1 bytes",
        ));
    }
    PyBytes::new_with(py, len + 16, |out| {
        let (body, tag) = out.split_at_mut(len);
        body.copy_from_slice(&data);
        let t = if len >= RELEASE_GIL_FROM {
            py.detach(|| e.seal(n, &aad, body))
        } else {
            e.seal(n, &aad, body)
        }
        .map_err(core_err)?;
        tag.copy_from_slice(&t);
        Ok(())
    })
}

fn decrypt<'py>(
    e: &Engine,
    py: Python<'py>,
    nonce: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    associated_data: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (n, data, aad) = arguments(nonce, data, &associated_data)?;
    if data.len() < 16 {
        return Err(InvalidTag::new_err(()));
    }
    let mut buf = data.into_owned();
    let r = if buf.len() >= RELEASE_GIL_FROM {
        py.detach(|| e.open(n, &aad, &mut buf))
    } else {
        e.open(n, &aad, &mut buf)
    };
    let len = r.map_err(core_err)?;
    let out = PyBytes::new(py, &buf[..len]);
    buf.zeroize();
    Ok(out)
}

fn generate_key<'py>(
    py: Python<'py>,
    bit_length: &Bound<'py, PyAny>,
    sizes: &[u64],
    rule: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    if bit_length.is_instance_of::<pyo3::types::PyBool>()
        || !bit_length.is_instance_of::<pyo3::types::PyInt>()
    {
        return Err(type_error("bit_length", "an integer", bit_length));
    }
    let bits: u64 = bit_length.extract().unwrap_or(0);
    if !sizes.contains(&bits) {
        return Err(PyValueError::new_err(rule.to_owned()));
    }
    let mut key = vec![0u8; (bits / 8) as usize];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut key).map_err(|_| {
        crate::NonceforgeError::new_err("the operating system's random source failed")
    })?;
    let out = PyBytes::new(py, &key);
    key.zeroize();
    Ok(out)
}

macro_rules! drop_in {
    ($(#[$doc:meta])* $name:ident, $py_name:literal, $make:expr, $sizes:expr, $key_rule:literal) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "nonceforge.aead", name = $py_name)]
        pub struct $name {
            engine: Engine,
        }

        #[pymethods]
        impl $name {
            /// The key (bytes-like), then the sanitizer's settings: `mode`
            /// ('auto', 'counter', 'random'), `window` (random nonces
            /// remembered exactly, default 1024), `counter_window`,
            /// `allow_identical` (a repeat of the same message and data is
            /// not a reuse), `check_open` (refuse replays on decrypt),
            /// `max_seals`, `max_bytes`. The first object made for a key sets
            /// its settings; later ones share its state.
            #[new]
            #[pyo3(signature = (key, *, mode="auto", window=None, counter_window=None, allow_identical=false, check_open=false, max_seals=None, max_bytes=None))]
            #[allow(clippy::too_many_arguments)]
            fn new(
                key: &Bound<'_, PyAny>,
                mode: &str,
                window: Option<&Bound<'_, PyAny>>,
                counter_window: Option<&Bound<'_, PyAny>>,
                allow_identical: bool,
                check_open: bool,
                max_seals: Option<&Bound<'_, PyAny>>,
                max_bytes: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<Self> {
                let k = crate::secret_bytes("key", key)?;
                let cfg = config(mode, window, counter_window, allow_identical, check_open, max_seals, max_bytes);
                let made = cfg.and_then(|cfg| {
                    let make: fn(&[u8], GuardConfig) -> PyResult<Option<Engine>> = $make;
                    make(&k, cfg)?.ok_or_else(|| PyValueError::new_err($key_rule))
                });
                Ok($name { engine: made? })
            }

            /// A new random key of `bit_length` bits.
            #[staticmethod]
            fn generate_key<'py>(py: Python<'py>, bit_length: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
                generate_key(py, bit_length, $sizes, concat!("bit_length must be ", $key_rule))
            }

            /// Ciphertext ‖ 16-byte tag. Raises `NonceReuseError` for a nonce
            /// this key sealed with before (nothing is returned).
            #[pyo3(signature = (nonce, data, associated_data))]
            fn encrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                encrypt(&self.engine, py, nonce, data, associated_data)
            }

            /// The plaintext, or `InvalidTag` (with `check_open`, a nonce
            /// opened before raises `NonceReuseError`).
            #[pyo3(signature = (nonce, data, associated_data))]
            fn decrypt<'py>(
                &self,
                py: Python<'py>,
                nonce: &Bound<'py, PyAny>,
                data: &Bound<'py, PyAny>,
                associated_data: Option<Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                decrypt(&self.engine, py, nonce, data, associated_data)
            }
        }
    };
}

fn ring_key(alg: &'static ring_aead::Algorithm, k: &[u8], cfg: GuardConfig) -> PyResult<Engine> {
    SanitizedLessSafeKey::new(alg, k, cfg)
        .map(Engine::Ring)
        .map_err(core_err)
}

drop_in!(
    /// AES-GCM (cryptography's `AESGCM`), refusing a repeated nonce.
    AesGcm,
    "AESGCM",
    |k, cfg| Ok(Some(match k.len() {
        16 => ring_key(&ring_aead::AES_128_GCM, k, cfg)?,
        24 => Engine::Aes192(rust_crypto(k, cfg)?),
        32 => ring_key(&ring_aead::AES_256_GCM, k, cfg)?,
        _ => return Ok(None),
    })),
    &[128, 192, 256],
    "AESGCM key must be 128, 192, or 256 bits."
);

drop_in!(
    /// ChaCha20-Poly1305 (cryptography's `ChaCha20Poly1305`), refusing a
    /// repeated nonce.
    ChaCha20Poly1305,
    "ChaCha20Poly1305",
    |k, cfg| Ok(match k.len() {
        32 => Some(ring_key(&ring_aead::CHACHA20_POLY1305, k, cfg)?),
        _ => None,
    }),
    &[256],
    "ChaCha20Poly1305 key must be 32 bytes."
);

drop_in!(
    /// AES-GCM-SIV (cryptography's `AESGCMSIV`), refusing a repeated nonce
    /// (SIV survives one, but a repeat still shows equal messages).
    AesGcmSiv,
    "AESGCMSIV",
    |k, cfg| Ok(Some(match k.len() {
        16 => Engine::Siv128(rust_crypto(k, cfg)?),
        32 => Engine::Siv256(rust_crypto(k, cfg)?),
        _ => return Ok(None),
    })),
    &[128, 256],
    "AESGCMSIV key must be 128 or 256 bits."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AesGcm>()?;
    m.add_class::<ChaCha20Poly1305>()?;
    m.add_class::<AesGcmSiv>()?;
    Ok(())
}
