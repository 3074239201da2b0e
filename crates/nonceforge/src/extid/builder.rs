//! The codec's options, and the key derivation they choose.

use super::aes128::Aes128Key;
use super::keyring::{Keyring, check_type_name};
use super::{ExtIdCodec, ExtIdMode, Keys, SelfCheckedCodec};
use crate::error::{Error, Result};

/// Builds an [`ExtIdCodec`] with options; see [`ExtIdCodec::builder`].
#[derive(Debug, Clone)]
pub struct ExtIdCodecBuilder<'k> {
    pub(super) keyring: &'k Keyring,
    pub(super) type_name: String,
    pub(super) mode: ExtIdMode,
    pub(super) rounds: u8,
    pub(super) uuid_version: u8,
    pub(super) in_band: bool,
}

impl ExtIdCodecBuilder<'_> {
    /// The construction (default `feistel-uuid`).
    pub fn mode(mut self, mode: ExtIdMode) -> Self {
        self.mode = mode;
        self
    }
    /// Feistel rounds: 2 (default) or 4.
    pub fn rounds(mut self, rounds: u8) -> Self {
        self.rounds = rounds;
        self
    }
    /// The UUID version `feistel-uuid` ids carry: 8 (default) or 4.
    pub fn uuid_version(mut self, version: u8) -> Self {
        self.uuid_version = version;
        self
    }
    /// Whether `feistel-uuid` ids carry their key version (default true: 4 bits,
    /// leaving 56 bits of sequence number; false: 60 bits, version out of band).
    pub fn key_version_in_band(mut self, in_band: bool) -> Self {
        self.in_band = in_band;
        self
    }

    /// Checks the options and derives the keys of every version in the keyring.
    pub fn build(self) -> Result<ExtIdCodec> {
        self.build_with(Aes128Key::new)
    }

    /// The codec with a self-check on every id it makes ([`SelfCheckedCodec`]):
    /// the keys are derived and expanded twice, the second time into a
    /// separate copy that runs on other code (the `aes` crate's, not the
    /// AES-NI path), so a fault in either copy or either path is caught.
    pub fn build_self_checked(self) -> Result<SelfCheckedCodec> {
        let check = self.clone().build_with(Aes128Key::portable_only)?;
        Ok(SelfCheckedCodec {
            codec: self.build()?,
            check,
        })
    }

    fn build_with(self, new_key: fn(&[u8; 16]) -> Aes128Key) -> Result<ExtIdCodec> {
        check_type_name(&self.type_name)?;
        if !matches!(self.rounds, 2 | 4) {
            return Err(Error::InvalidOption {
                option: "rounds",
                value: self.rounds as u64,
                rule: "a Feistel network here has 2 or 4 rounds",
            });
        }
        if !matches!(self.uuid_version, 4 | 8) {
            return Err(Error::InvalidOption {
                option: "uuid_version",
                value: self.uuid_version as u64,
                rule: "feistel-uuid ids are UUID version 8 or 4",
            });
        }
        let in_band = self.in_band && self.mode == ExtIdMode::FeistelUuid;
        let label = layout_label(self.mode, self.rounds, self.uuid_version, in_band);
        let rand_label = if label == "feistel-uuid" {
            "rand".to_owned() // the default layout's, as in 0.1.0
        } else {
            format!("rand-{label}")
        };
        let derive = |v: u8| -> Result<Keys> {
            Ok(match self.mode {
                ExtIdMode::Aes128 | ExtIdMode::CycleWalk => Keys::One(new_key(
                    &*self.keyring.derive::<16>(&label, &self.type_name, v)?,
                )),
                ExtIdMode::FeistelUuid => {
                    let k = self.keyring.derive::<64>(&label, &self.type_name, v)?;
                    Keys::Rounds(
                        k.chunks_exact(16)
                            .take(self.rounds as usize)
                            .map(|c| new_key(c.try_into().expect("16 bytes")))
                            .collect(),
                    )
                }
            })
        };
        let rand_key = |v: u8| -> Result<Aes128Key> {
            Ok(new_key(&*self.keyring.derive::<16>(
                &rand_label,
                &self.type_name,
                v,
            )?))
        };
        let mut keys: [Option<Keys>; 16] = Default::default();
        let mut rand_keys: [Option<Aes128Key>; 16] = Default::default();
        for v in self.keyring.versions() {
            keys[v as usize] = Some(derive(v)?);
            rand_keys[v as usize] = Some(rand_key(v)?);
        }
        let current_keys = derive(self.keyring.current())?;
        let current_rand = rand_key(self.keyring.current())?;
        Ok(ExtIdCodec {
            type_name: self.type_name,
            mode: self.mode,
            rounds: self.rounds,
            uuid_version: self.uuid_version,
            in_band,
            current: self.keyring.current(),
            keys,
            current_keys,
            rand_keys,
            current_rand,
            #[cfg(test)]
            inject_fault: false,
        })
    }
}

/// The name a layout's keys are derived under (HKDF info
/// `nonceforge/extid/v1/<label>/<type>/<version>`; the derived half's key under
/// `rand-<label>`, or `rand` for the default layout): every setting that
/// changes how an id is read is in it, so no two layouts share a key — an id
/// relabelled to another UUID version, or read by a codec that expects the key
/// version out of band, is an unrelated value, and one row's ids under two
/// layouts are unlinkable. `aes128`, `cycle-walk`; `feistel-uuid` with `-4`
/// for 4 rounds, `-v4` for UUID version 4, `-oob` for the key version out of
/// band, in that order. (docs/contracts.md, "External ids".)
pub(crate) fn layout_label(mode: ExtIdMode, rounds: u8, uuid_version: u8, in_band: bool) -> String {
    let mut label = mode.name().to_owned();
    if mode == ExtIdMode::FeistelUuid {
        if rounds == 4 {
            label.push_str("-4");
        }
        if uuid_version == 4 {
            label.push_str("-v4");
        }
        if !in_band {
            label.push_str("-oob");
        }
    }
    label
}
