//! The sanitizer: AES-GCM and ChaCha20-Poly1305 that refuse a repeated (key, nonce).

use crate::{coded, core_err, invalid};
use aes_gcm::aead::array::typenum::Unsigned;
use aes_gcm::aead::{AeadInOut, Key, KeyInit, Nonce, Tag};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use nonceforge::aead::{GuardConfig, NamedAead, NonceMode, Policy, Sanitized};

enum AnyAead {
    Aes128(Sanitized<aes_gcm::Aes128Gcm>),
    Aes192(Sanitized<nonceforge::aead::Aes192Gcm>),
    Aes256(Sanitized<aes_gcm::Aes256Gcm>),
    ChaCha(Sanitized<chacha20poly1305::ChaCha20Poly1305>),
    XChaCha(Sanitized<chacha20poly1305::XChaCha20Poly1305, 24>),
}

/// Runs `$body` with `$a` bound to whichever sanitized AEAD `$inner` holds.
macro_rules! with_aead {
    ($inner:expr, $a:ident => $body:expr) => {
        match $inner {
            AnyAead::Aes128($a) => $body,
            AnyAead::Aes192($a) => $body,
            AnyAead::Aes256($a) => $body,
            AnyAead::ChaCha($a) => $body,
            AnyAead::XChaCha($a) => $body,
        }
    };
}

/// `SanitizedAead`'s options, checked (types, ranges, unknown names) by
/// lib/sanitizer.js before they get here; the core's names.
#[napi(object)]
pub struct SanitizerOptions {
    /// 'auto' (default), 'counter' or 'random'.
    pub mode: Option<String>,
    pub window: Option<u32>,
    pub counter_window: Option<u32>,
    pub allow_identical: Option<bool>,
    pub check_open: Option<bool>,
    pub max_seals: Option<f64>,
    pub max_bytes: Option<f64>,
}

fn guard_config(o: Option<SanitizerOptions>) -> Result<GuardConfig> {
    let mut cfg = GuardConfig::default().policy(Policy::Error);
    let Some(o) = o else { return Ok(cfg) };
    if let Some(m) = o.mode.as_deref() {
        cfg = cfg.mode(match m {
            "auto" => NonceMode::Auto,
            "counter" => NonceMode::Counter,
            "random" => NonceMode::Random,
            other => {
                return Err(invalid(format!(
                    "options.mode must be 'auto', 'counter' or 'random', got {other:?}"
                )));
            }
        });
    }
    if let Some(w) = o.window {
        cfg = cfg.window(w as usize);
    }
    if let Some(w) = o.counter_window {
        cfg = cfg.counter_window(w as usize);
    }
    if let Some(b) = o.allow_identical {
        cfg = cfg.allow_identical(b);
    }
    if let Some(b) = o.check_open {
        cfg = cfg.check_open(b);
    }
    // Safe integers >= 1, checked in JavaScript.
    if let Some(n) = o.max_seals {
        cfg = cfg.max_seals(n as u64);
    }
    if let Some(n) = o.max_bytes {
        cfg = cfg.max_bytes(n as u64);
    }
    Ok(cfg)
}

fn sanitized<A: AeadInOut + KeyInit + NamedAead, const N: usize>(
    key: &[u8],
    cfg: GuardConfig,
) -> Result<Sanitized<A, N>> {
    let k = Key::<A>::try_from(key).map_err(|_| {
        invalid(format!(
            "key must be {} bytes, got {}",
            A::KeySize::USIZE,
            key.len()
        ))
    })?;
    Sanitized::with_config(&k, cfg).map_err(core_err)
}

fn nonce_of<A: AeadInOut>(nonce: &[u8]) -> Result<Nonce<A>> {
    Nonce::<A>::try_from(nonce).map_err(|_| {
        invalid(format!(
            "nonce must be {} bytes, got {}",
            A::NonceSize::USIZE,
            nonce.len()
        ))
    })
}

fn seal_with<A: AeadInOut + KeyInit + NamedAead, const N: usize>(
    a: &Sanitized<A, N>,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut Vec<u8>,
) -> Result<()> {
    let n = nonce_of::<A>(nonce)?;
    let tag = a.seal_in_place_detached(&n, aad, buf).map_err(aead_err)?;
    buf.extend_from_slice(&tag);
    Ok(())
}

fn open_with<A: AeadInOut + KeyInit + NamedAead, const N: usize>(
    a: &Sanitized<A, N>,
    nonce: &[u8],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8],
) -> Result<()> {
    let n = nonce_of::<A>(nonce)?;
    let t = Tag::<A>::try_from(tag).map_err(|_| invalid("the tag must be 16 bytes"))?;
    a.open_in_place_detached(&n, aad, buf, &t).map_err(aead_err)
}

/// An AEAD that refuses to seal twice under one (key, nonce).
#[napi]
pub struct SanitizedAead {
    inner: AnyAead,
}

#[napi]
impl SanitizedAead {
    /// `algorithm`: 'aes-128-gcm', 'aes-192-gcm', 'aes-256-gcm',
    /// 'chacha20-poly1305' or 'xchacha20-poly1305'.
    #[napi(constructor, catch_unwind)]
    pub fn new(algorithm: String, key: &[u8], options: Option<SanitizerOptions>) -> Result<Self> {
        let cfg = guard_config(options)?;
        let inner = match algorithm.to_ascii_lowercase().as_str() {
            "aes-128-gcm" => AnyAead::Aes128(sanitized(key, cfg)?),
            "aes-192-gcm" => AnyAead::Aes192(sanitized(key, cfg)?),
            "aes-256-gcm" => AnyAead::Aes256(sanitized(key, cfg)?),
            "chacha20-poly1305" => AnyAead::ChaCha(sanitized(key, cfg)?),
            "xchacha20-poly1305" => AnyAead::XChaCha(sanitized(key, cfg)?),
            other => {
                return Err(invalid(format!(
                    "algorithm must be 'aes-128-gcm', 'aes-192-gcm', 'aes-256-gcm', 'chacha20-poly1305' or 'xchacha20-poly1305', got {other:?}"
                )));
            }
        };
        Ok(Self { inner })
    }

    /// Seal: ciphertext ‖ 16-byte tag. Throws on a repeated nonce.
    #[napi(catch_unwind)]
    pub fn seal(&self, nonce: &[u8], plaintext: &[u8], aad: Option<&[u8]>) -> Result<Buffer> {
        let aad = aad.unwrap_or(&[]);
        let mut out = Vec::with_capacity(plaintext.len() + 16);
        out.extend_from_slice(plaintext);
        with_aead!(&self.inner, a => seal_with(a, nonce, aad, &mut out))?;
        Ok(out.into())
    }

    /// Open ciphertext ‖ tag: the plaintext, or throws (a forgery; with
    /// `checkOpen`, a nonce opened before).
    #[napi(catch_unwind)]
    pub fn open(&self, nonce: &[u8], sealed: &[u8], aad: Option<&[u8]>) -> Result<Buffer> {
        let aad = aad.unwrap_or(&[]);
        if sealed.len() < 16 {
            return Err(invalid("sealed must hold at least the 16-byte tag"));
        }
        let (ct, tag) = sealed.split_at(sealed.len() - 16);
        let mut out = ct.to_vec();
        with_aead!(&self.inner, a => open_with(a, nonce, aad, &mut out, tag))?;
        Ok(out.into())
    }
}

fn aead_err(e: nonceforge::Error) -> Error {
    match e {
        nonceforge::Error::Aead {
            operation: "open", ..
        } => coded(
            "ERR_NONCEFORGE_AUTH",
            "decryption failed: the message was forged or damaged",
        ),
        other => core_err(other),
    }
}
