//! The Rust side of the `nonceforge` npm package: thin napi-rs bindings over
//! the core crate. The JavaScript in node/ validates arguments, shapes the API
//! and owns the documentation; see node/README.md.
//!
//! Every exported function catches panics (`catch_unwind`), so none crosses
//! into Node: a bug surfaces as a thrown Error, never an abort.

pub mod bulk;
pub mod lease;
pub mod openssl;

use aes_gcm::aead::array::typenum::Unsigned;
use aes_gcm::aead::{AeadInOut, Key, KeyInit, Nonce, Tag};
use napi::bindgen_prelude::*;
use napi::{Env, Unknown};
use napi_derive::napi;
use nonceforge::Bits;
use nonceforge::aead::{GuardConfig, NamedAead, NonceMode, Policy, Sanitized};
use nonceforge::extid::{ExtId, ExtIdCodec, Keyring};
use nonceforge::nonce::NonceKind;
use nonceforge::{MachineId, NonceGenerator};

fn invalid(msg: impl Into<String>) -> Error {
    Error::new(Status::InvalidArg, msg.into())
}

/// A core error: a bad argument (napi's InvalidArg; node/lib/errors.js names the
/// argument), or one with a Node error code before its message, which
/// node/lib/errors.js turns into the `code` property.
fn core_err(e: nonceforge::Error) -> Error {
    match e {
        nonceforge::Error::Disabled => coded("ERR_NONCEFORGE_DISABLED", e),
        nonceforge::Error::NonceReuse(_) => coded("ERR_NONCE_REUSE", e),
        nonceforge::Error::ClockBehind { .. } => coded("ERR_NONCEFORGE_CLOCK_BEHIND", e),
        // In Node's words (the core's say `.key(...)`, the Rust builder's).
        nonceforge::Error::NoKey => Error::new(
            Status::InvalidArg,
            "encrypted nonces need a base key: pass options.key (a Buffer of at least 32 bytes) to new NonceGenerator",
        ),
        _ => Error::new(Status::InvalidArg, e.to_string()),
    }
}

fn coded(code: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, format!("{code}: {message}"))
}

/// The kind and size a JS call names by one number, `kind * 3 + size` (kind:
/// 0 counter, 1 sortable, 2 encrypted; size: 0 = 64, 1 = 96, 2 = 128 bits):
/// numbers, not strings, because `next` is called once a nonce. node/lib/nonce.js
/// makes the code (`nonceCode`) after checking the names.
fn kind_bits(code: u32) -> Result<(NonceKind, Bits)> {
    const KINDS: [NonceKind; 3] = [
        NonceKind::Counter,
        NonceKind::Sortable,
        NonceKind::Encrypted,
    ];
    let k = *KINDS
        .get(code as usize / 3)
        .ok_or_else(|| invalid(format!("nonce code must be in 0..9, got {code}")))?;
    Ok((k, Bits::ALL[code as usize % 3]))
}

/// A nonce generator (one per process and machine id).
#[napi]
pub struct Generator {
    inner: NonceGenerator,
}

#[napi]
impl Generator {
    /// `machineId` in 0..=511; `key` (≥ 32 bytes) for encrypted nonces;
    /// `epochUnixMs` to move the epoch.
    #[napi(constructor, catch_unwind)]
    pub fn new(machine_id: u32, key: Option<&[u8]>, epoch_unix_ms: Option<f64>) -> Result<Self> {
        let b = NonceGenerator::builder(MachineId::new(machine_id as u64).map_err(core_err)?);
        Self::build(b, key, epoch_unix_ms)
    }

    /// A generator on a leased machine id: started above the previous
    /// holder's floor and held to the lease's deadline.
    #[napi(factory, catch_unwind)]
    pub fn leased(
        lease: &lease::LeaseHandle,
        key: Option<&[u8]>,
        epoch_unix_ms: Option<f64>,
    ) -> Result<Self> {
        lease.with(|l| {
            let g = Self::build(l.builder(), key, epoch_unix_ms)?;
            l.attach(&g.inner).map_err(lease::lease_err)?;
            Ok(g)
        })
    }

    fn build(
        mut b: nonceforge::NonceGeneratorBuilder,
        key: Option<&[u8]>,
        epoch_unix_ms: Option<f64>,
    ) -> Result<Self> {
        if let Some(k) = key {
            b = b.key(k);
        }
        if let Some(e) = epoch_unix_ms {
            if !(e >= 0.0 && e.fract() == 0.0 && e <= 9_007_199_254_740_991.0) {
                return Err(invalid("epochUnixMs must be a non-negative integer"));
            }
            b = b.epoch_unix_ms(e as u64);
        }
        Ok(Self {
            inner: b.build().map_err(core_err)?,
        })
    }

    /// A handle on the same generator (shared state) for [`next_nonce_into`].
    #[napi]
    pub fn handle(&self) -> External<NonceGenerator> {
        External::new(self.inner.clone())
    }

    /// `count` nonces, back to back, in one new Buffer (one reservation).
    #[napi(catch_unwind)]
    pub fn fill(&self, code: u32, count: u32) -> Result<Buffer> {
        let (k, b) = kind_bits(code)?;
        let mut out = vec![0u8; b.bytes() * count as usize];
        self.inner.fill(k, b, &mut out).map_err(core_err)?;
        Ok(out.into())
    }

    /// Fill `out` (a whole number of nonces) in place.
    #[napi(catch_unwind)]
    pub fn fill_into(&self, code: u32, out: Unknown<'_>) -> Result<()> {
        let (k, b) = kind_bits(code)?;
        let mut view = BufferSlice::from_unknown(out)?;
        if view.len() % b.bytes() != 0 {
            return Err(invalid(format!(
                "out.length must be a multiple of {} (the nonce size)",
                b.bytes()
            )));
        }
        self.inner.fill(k, b, &mut view).map_err(core_err)
    }

    /// Decrypt an encrypted nonce back to its counter form.
    #[napi(catch_unwind)]
    pub fn decrypt(&self, nonce: &[u8]) -> Result<Buffer> {
        Ok(self.inner.decrypt(nonce).map_err(core_err)?.to_vec().into())
    }

    /// The parts of a counter or sortable nonce: `[unixMs, machineId, counter]`.
    #[napi(catch_unwind)]
    pub fn decompose(&self, nonce: &[u8]) -> Result<(f64, u32, BigInt)> {
        let p = self.inner.decompose(nonce).map_err(core_err)?;
        Ok((
            p.unix_ms as f64,
            p.machine_id as u32,
            BigInt::from(p.counter),
        ))
    }

    /// The machine id.
    #[napi(getter)]
    pub fn machine_id(&self) -> u32 {
        self.inner.machine_id().get() as u32
    }

    /// Stop issuing: every call fails until `enable()`.
    #[napi]
    pub fn disable(&self) {
        self.inner.disable();
    }

    /// Issue again.
    #[napi]
    pub fn enable(&self) {
        self.inner.enable();
    }

    /// Whether it issues.
    #[napi(getter)]
    pub fn enabled(&self) -> bool {
        self.inner.is_enabled()
    }
}

/// The core's default nonce epoch (Unix ms): lib/nonce.js's default, read
/// from here rather than restated. (2^53 holds it exactly.)
#[napi]
pub fn default_epoch_unix_ms() -> f64 {
    nonceforge::layout::DEFAULT_EPOCH_UNIX_MS as f64
}

/// A UUIDv7 (RFC 9562), 16 bytes.
#[napi]
pub fn uuidv7_bytes() -> Buffer {
    nonceforge::uuid::uuidv7().to_vec().into()
}

/// A tuid6 (time-prefixed, version 6 layout), 16 bytes.
#[napi]
pub fn tuid6_bytes() -> Buffer {
    nonceforge::uuid::tuid6().to_vec().into()
}

/// A UUIDv7 in the canonical text form.
#[napi]
pub fn uuidv7() -> String {
    hyphenated(&nonceforge::uuid::uuidv7())
}

/// A tuid6 in the canonical text form.
#[napi]
pub fn tuid6() -> String {
    hyphenated(&nonceforge::uuid::tuid6())
}

/// A UUIDv7, compact (22 characters of base64url).
#[napi]
pub fn uuidv7_compact() -> String {
    nonceforge::uuid::to_compact(&nonceforge::uuid::uuidv7())
}

/// A tuid6, compact (22 characters of base64url).
#[napi]
pub fn tuid6_compact() -> String {
    nonceforge::uuid::to_compact(&nonceforge::uuid::tuid6())
}

/// The 16 bytes of a compact id.
#[napi(catch_unwind)]
pub fn from_compact(text: String) -> Result<Buffer> {
    Ok(nonceforge::uuid::from_compact::<16>(&text)
        .map_err(core_err)?
        .to_vec()
        .into())
}

/// The Unix milliseconds in the first 48 bits of a UUIDv7 or tuid6.
#[napi(catch_unwind)]
pub fn uuid_unix_ms(id: &[u8]) -> Result<f64> {
    let id: &[u8; 16] = id
        .try_into()
        .map_err(|_| invalid(format!("id must be 16 bytes, got {}", id.len())))?;
    Ok(nonceforge::uuid::unix_ms(id) as f64)
}

fn hyphenated(b: &[u8; 16]) -> String {
    ExtId(*b).to_uuid_string()
}

/// The external-id codec: internal (seq, rand) ⇄ opaque UUID-shaped id.
#[napi]
pub struct ExtIdCoder {
    inner: ExtIdCodec,
}

fn u64_of(v: Either<f64, BigInt>, name: &str) -> Result<u64> {
    match v {
        Either::A(f) if f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_991.0 => {
            Ok(f as u64)
        }
        Either::A(_) => Err(invalid(format!(
            "{name} must be a non-negative safe integer or a bigint"
        ))),
        Either::B(b) => {
            let (neg, v, lossless) = b.get_u64();
            if neg || !lossless {
                return Err(invalid(format!("{name} must be in 0..2^64")));
            }
            Ok(v)
        }
    }
}

#[napi]
impl ExtIdCoder {
    /// A codec for one type of id under a keyring: `keys[i]` (≥ 32 bytes
    /// each) is key version `versions[i]` (0..=15), `current` the one new ids
    /// are made with; every version held decodes. lib/extid.js checks the
    /// arguments first, in Node's words.
    #[napi(constructor, catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        versions: Vec<u32>,
        keys: Vec<Buffer>,
        current: u32,
        type_name: String,
        mode: Option<String>,
        rounds: Option<u32>,
        uuid_version: Option<u32>,
        key_version_in_band: Option<bool>,
    ) -> Result<Self> {
        let version = |v: u32| {
            u8::try_from(v)
                .ok()
                .filter(|v| *v <= nonceforge::extid::MAX_KEY_VERSION)
                .ok_or_else(|| invalid("key versions are in 0..=15"))
        };
        if versions.len() != keys.len() || versions.is_empty() {
            return Err(invalid("one key for each version, at least one"));
        }
        let mut ring: Option<Keyring> = None;
        for (v, k) in versions.iter().zip(&keys) {
            let v = version(*v)?;
            match &mut ring {
                None => ring = Some(Keyring::new(v, k).map_err(core_err)?),
                Some(r) => r.add(v, k).map_err(core_err)?,
            }
        }
        let mut ring = ring.expect("at least one key");
        ring.set_current(version(current)?).map_err(core_err)?;
        let mut b = ExtIdCodec::builder(&ring, &type_name);
        if let Some(m) = mode {
            b = b.mode(m.parse().map_err(core_err)?);
        }
        if let Some(r) = rounds {
            b = b.rounds(u8::try_from(r).unwrap_or(0));
        }
        if let Some(u) = uuid_version {
            b = b.uuid_version(u8::try_from(u).unwrap_or(0));
        }
        if let Some(in_band) = key_version_in_band {
            b = b.key_version_in_band(in_band);
        }
        Ok(Self {
            inner: b.build().map_err(core_err)?,
        })
    }

    /// Encode: the id as a UUID string; without `rand`, the random half is
    /// derived from `seq` (the core's `encode_seq`).
    #[napi(catch_unwind)]
    pub fn encode(
        &self,
        seq: Either<f64, BigInt>,
        rand: Option<Either<f64, BigInt>>,
    ) -> Result<String> {
        let seq = u64_of(seq, "seq")?;
        let id = match rand {
            Some(r) => self.inner.encode(seq, u64_of(r, "rand")?),
            None => self.inner.encode_seq(seq),
        };
        Ok(id.map_err(core_err)?.to_uuid_string())
    }

    /// The random half the codec derives for `seq`.
    #[napi(catch_unwind)]
    pub fn derived_rand(&self, seq: Either<f64, BigInt>) -> Result<BigInt> {
        Ok(BigInt::from(self.inner.derived_rand(u64_of(seq, "seq")?)))
    }

    /// Decode a UUID string, unverified: `[seq, rand, keyVersion, derived]`;
    /// `version` for ids that do not carry theirs.
    #[napi(catch_unwind)]
    pub fn decode_unverified(
        &self,
        id: String,
        version: Option<u32>,
    ) -> Result<(BigInt, BigInt, u32, bool)> {
        let ext = ExtId::parse_uuid(&id).map_err(core_err)?;
        let d = match version {
            Some(v) => self
                .inner
                .decode_unverified_with_key_version(&ext, u8::try_from(v).unwrap_or(u8::MAX)),
            None => self.inner.decode_unverified(&ext),
        }
        .map_err(core_err)?;
        Ok((
            BigInt::from(d.seq),
            BigInt::from(d.rand),
            d.key_version as u32,
            self.inner.is_derived(&d),
        ))
    }

    /// The core's checked decode (`find`: the id's key version, or each held
    /// version for ids that carry none; only `version` when given):
    /// `[seq, rand, keyVersion]`, or null for an id this codec did not make.
    #[napi(catch_unwind)]
    pub fn decode(
        &self,
        id: String,
        version: Option<u32>,
    ) -> Result<Option<(BigInt, BigInt, u32)>> {
        let ext = ExtId::parse_uuid(&id).map_err(core_err)?;
        let v = version.map(|v| u8::try_from(v).unwrap_or(u8::MAX));
        let d = self.inner.find(&ext, v).map_err(core_err)?;
        Ok(d.map(|d| {
            (
                BigInt::from(d.seq),
                BigInt::from(d.rand),
                d.key_version as u32,
            )
        }))
    }
}

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

/// One nonce into the start of `out`: the hot path of `NonceGenerator#next`,
/// a free function over an External because a napi-rs class method call costs
/// ~250 ns here and a free function ~130 ns. `code` as in `kind_bits`.
#[napi(catch_unwind)]
pub fn next_nonce_into(
    env: Env,
    generator: &External<NonceGenerator>,
    code: u32,
    out: Unknown<'_>,
) -> Result<()> {
    let (k, b) = kind_bits(code)?;
    let nonce = generator.next(k, b).map_err(core_err)?;
    let (ptr, len) = bulk::buffer_info(&env, &out)?;
    if len < b.bytes() {
        return Err(invalid(format!(
            "out is too short: {} bytes needed",
            b.bytes()
        )));
    }
    // SAFETY: `out` is a live buffer of at least `len` bytes and JS is blocked in this call.
    nonce
        .write_to(unsafe { &mut std::slice::from_raw_parts_mut(ptr, len)[..b.bytes()] })
        .map_err(core_err)
}
