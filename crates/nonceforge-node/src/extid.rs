//! External ids: the codec class over the core's `ExtIdCodec`.

use crate::{core_err, invalid};
use napi::bindgen_prelude::*;
use napi_derive::napi;
use nonceforge::extid::{ExtId, ExtIdCodec, Keyring};

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
