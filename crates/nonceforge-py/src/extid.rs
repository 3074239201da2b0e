//! External ids: `ExtIdCodec` over the core's codec — internal (seq, rand) ⇄
//! an opaque, UUID-shaped id, under a keyring with rotation.

use crate::records::{Decoded, DecodedUnverified};
use crate::uuid::{to_uuid, uuid_bytes};
use crate::{UnknownIdError, bad_value, core_err, int_in, type_error};
use nonceforge::extid::{ExtId, ExtIdCodec as Codec, Keyring, MAX_KEY_VERSION, TextForm};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// The external-id codec for one type of id under a keyring.
///
/// Without a random half, `encode(seq)` derives it from `seq` under the key:
/// the id is stable, looks random, and `decode` refuses ids it did not make.
#[pyclass(frozen, module = "nonceforge", name = "ExtIdCodec")]
pub struct ExtIdCodec {
    inner: Codec,
}

fn version_of(name: &str, v: &Bound<'_, PyAny>) -> PyResult<u8> {
    Ok(int_in(name, v, u64::from(MAX_KEY_VERSION))? as u8)
}

fn u64_arg(name: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    int_in(name, v, u64::MAX)
}

fn keyring(key: &Bound<'_, PyAny>, version: Option<&Bound<'_, PyAny>>) -> PyResult<Keyring> {
    let Ok(keys) = key.cast::<PyDict>() else {
        let v = version
            .map(|v| version_of("version", v))
            .transpose()?
            .unwrap_or(0);
        return Keyring::new(v, &crate::secret_bytes("key", key)?).map_err(core_err);
    };
    let Some(current) = version else {
        return Err(bad_value(
            "version",
            "is required with a keyring (a dict {version: key}): the version new ids are made with",
        ));
    };
    let current = version_of("version", current)?;
    if keys.is_empty() {
        return Err(bad_value(
            "key",
            "holds no key: a keyring is {version: key, ...}",
        ));
    }
    let mut ring: Option<Keyring> = None;
    for (v, k) in keys.iter() {
        let v = version_of("key's versions", &v)?;
        let k = crate::secret_bytes(&format!("key[{v}]"), &k)?;
        match &mut ring {
            None => ring = Some(Keyring::new(v, &k).map_err(core_err)?),
            Some(r) => r.add(v, &k).map_err(core_err)?,
        }
    }
    let mut ring = ring.expect("checked non-empty");
    if !ring.versions().any(|v| v == current) {
        return Err(bad_value(
            "version",
            format!("must be one of the keyring's versions, got {current}"),
        ));
    }
    ring.set_current(current).map_err(core_err)?;
    Ok(ring)
}

impl ExtIdCodec {
    /// The core's checked lookup (`find`), or `UnknownIdError`.
    fn checked(
        &self,
        id: &Bound<'_, PyAny>,
        key_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<nonceforge::extid::Decoded> {
        let ext = self.id(id)?;
        let v = key_version
            .map(|v| version_of("key_version", v))
            .transpose()?;
        self.inner.find(&ext, v).map_err(core_err)?.ok_or_else(|| {
            UnknownIdError::new_err(
                "id was not made by this codec: its random half is not the one encode(seq) derives",
            )
        })
    }

    fn id(&self, id: &Bound<'_, PyAny>) -> PyResult<ExtId> {
        if let Ok(s) = id.cast::<PyString>() {
            return self.inner.parse(&s.to_cow()?).map_err(core_err);
        }
        uuid_bytes("id", id).map(ExtId)
    }
}

#[pymethods]
impl ExtIdCodec {
    /// `key`: a master key (bytes, at least 32) of key version `version`
    /// (default 0), or a keyring `{version: key}` with `version` the one new
    /// ids are made with (ids of every version held decode). `type_name`:
    /// e.g. 'user' (lower-case letters and underscores, as TypeID's).
    /// `mode`: 'feistel-uuid' (default), 'aes128' or 'cycle-walk'.
    #[new]
    #[pyo3(signature = (key, type_name, *, version=None, mode=None, rounds=None, uuid_version=None, key_version_in_band=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        key: &Bound<'_, PyAny>,
        type_name: &Bound<'_, PyAny>,
        version: Option<&Bound<'_, PyAny>>,
        mode: Option<&str>,
        rounds: Option<&Bound<'_, PyAny>>,
        uuid_version: Option<&Bound<'_, PyAny>>,
        key_version_in_band: Option<bool>,
    ) -> PyResult<Self> {
        let ring = keyring(key, version)?;
        let Ok(type_name) = type_name.cast::<PyString>() else {
            return Err(type_error("type_name", "a str", type_name));
        };
        let mut b = Codec::builder(&ring, &type_name.to_cow()?);
        if let Some(m) = mode {
            b = b.mode(m.parse().map_err(|_| {
                bad_value(
                    "mode",
                    format!("must be 'feistel-uuid', 'aes128' or 'cycle-walk', got {m:?}"),
                )
            })?);
        }
        if let Some(r) = rounds {
            b = b.rounds(int_in("rounds", r, 255)? as u8);
        }
        if let Some(u) = uuid_version {
            b = b.uuid_version(int_in("uuid_version", u, 255)? as u8);
        }
        if let Some(in_band) = key_version_in_band {
            b = b.key_version_in_band(in_band);
        }
        Ok(ExtIdCodec {
            inner: b.build().map_err(core_err)?,
        })
    }

    /// The type name ids of this codec carry.
    #[getter]
    fn type_name(&self) -> &str {
        self.inner.type_name()
    }

    /// The external id (`uuid.UUID`) of internal id `seq`. Without `rand` the
    /// random half is derived from `seq`; with it, it must be fresh and random
    /// per row and stored beside it (never a constant).
    #[pyo3(signature = (seq, rand=None))]
    fn encode<'py>(
        &self,
        seq: &Bound<'py, PyAny>,
        rand: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = u64_arg("seq", seq)?;
        let id = match rand {
            Some(r) => self.inner.encode(s, u64_arg("rand", r)?),
            None => self.inner.encode_seq(s),
        }
        .map_err(core_err)?;
        to_uuid(seq.py(), &id.0)
    }

    /// `encode(seq)` in a text form: 'uuid' (default), 'base64url' (22
    /// characters) or 'base32' (26, Crockford's), the latter with the type as
    /// prefix (`user_…`, TypeID-like) when `prefix` and a check character
    /// when `check`.
    #[pyo3(signature = (seq, *, form="uuid", prefix=false, check=false))]
    fn encode_text(
        &self,
        seq: &Bound<'_, PyAny>,
        form: &str,
        prefix: bool,
        check: bool,
    ) -> PyResult<String> {
        let form: TextForm = form.parse().map_err(|_| {
            bad_value(
                "form",
                format!("must be 'uuid', 'base64url' or 'base32', got {form:?}"),
            )
        })?;
        let id = self
            .inner
            .encode_seq(u64_arg("seq", seq)?)
            .map_err(core_err)?;
        Ok(self.inner.format(&id, form, prefix, check))
    }

    /// `Decoded(seq, rand, key_version)` of an id made by `encode(seq)`
    /// (`uuid.UUID`, 16 bytes, or any text form this codec writes). Any other
    /// id — made up, of another type or key, or made with a stored `rand` —
    /// raises `UnknownIdError` (a made-up id passes 1 time in 2^62). Without
    /// `key_version`, the id's own, or each version held for ids that carry
    /// none.
    #[pyo3(signature = (id, *, key_version=None))]
    fn decode(
        &self,
        id: &Bound<'_, PyAny>,
        key_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Decoded> {
        let d = self.checked(id, key_version)?;
        Ok(Decoded {
            seq: d.seq,
            rand: d.rand,
            key_version: d.key_version,
        })
    }

    /// `decode(id).seq`, with decode's refusals.
    #[pyo3(signature = (id, *, key_version=None))]
    fn decode_seq(
        &self,
        id: &Bound<'_, PyAny>,
        key_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        Ok(self.checked(id, key_version)?.seq)
    }

    /// The id a text in any form this codec writes stands for (`uuid.UUID`;
    /// base32 with a prefix must carry this codec's type). Nothing is
    /// decoded or checked: `decode` does that.
    fn parse<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
        to_uuid(py, &self.inner.parse(text).map_err(core_err)?.0)
    }

    /// The random half `encode(seq)` uses.
    fn derived_rand(&self, seq: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.inner.derived_rand(u64_arg("seq", seq)?))
    }

    /// `DecodedUnverified(seq, rand, key_version, derived)` of any well-formed
    /// id, **unverified**: a made-up id decodes to an unrelated seq. For ids
    /// made with a stored `rand`: look the row up by seq and compare its
    /// stored rand (`hmac.compare_digest` of the two) before trusting it.
    #[pyo3(signature = (id, *, key_version=None))]
    fn decode_unverified(
        &self,
        id: &Bound<'_, PyAny>,
        key_version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<DecodedUnverified> {
        let ext = self.id(id)?;
        let d = match key_version {
            Some(v) => self
                .inner
                .decode_unverified_with_key_version(&ext, version_of("key_version", v)?),
            None => self.inner.decode_unverified(&ext),
        }
        .map_err(core_err)?;
        Ok(DecodedUnverified {
            seq: d.seq,
            rand: d.rand,
            key_version: d.key_version,
            derived: self.inner.is_derived(&d),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "ExtIdCodec(type_name={:?}, mode={:?})",
            self.inner.type_name(),
            self.inner.mode().name()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ExtIdCodec>()
}
