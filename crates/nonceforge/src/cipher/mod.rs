//! Small-block permutations that turn counter nonces into encrypted nonces.
//!
//! A block cipher is a permutation of its block: distinct inputs give distinct
//! outputs, so encrypting unique counter nonces gives unique, unpredictable
//! nonces of the same width, and decrypting gives the counter nonce back.
//!
//! | nonce | default | also selectable | per-size key (HKDF-SHA256 label) |
//! |---|---|---|---|
//! | 64  | Speck64/128 | Blowfish (128-bit key), 3DES (EDE3) | `nonceforge/encrypted-nonce/v1/<cipher>/64` |
//! | 96  | Speck96/144 (a true 96-bit block) | — | `nonceforge/encrypted-nonce/v1/speck96-144/96` |
//! | 128 | AES-256 (AES-NI/VAES when present, portable otherwise) | Speck128/256 | `nonceforge/encrypted-nonce/v1/<cipher>/128` |
//!
//! Blowfish and 3DES are there for compatibility with systems that already use
//! them; their 64-bit blocks are no weaker here than Speck64's, since every
//! block is a distinct counter value.

pub mod nononcense;
mod speck;

use crate::error::{Error, Result};
use crate::nonce::layout::Bits;
use aes::Aes256;
use blowfish::Blowfish;
use cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use des::TdesEde3;
use hkdf::Hkdf;
use sha2::Sha256;
pub(crate) use speck::LANES;
use speck::{Speck64, Speck96};
use speck_cipher::Speck128_256;
use zeroize::Zeroizing;

/// The cipher for 64-bit encrypted nonces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Cipher64 {
    /// Speck64/128 (NSA, 2013): 27 add-rotate-xor rounds; fast in software.
    #[default]
    Speck64_128,
    /// Blowfish with a 128-bit key, for compatibility.
    Blowfish,
    /// Triple DES (EDE, three keys), for compatibility.
    TripleDes,
}

/// The cipher for 128-bit encrypted nonces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Cipher128 {
    /// AES-256.
    #[default]
    Aes256,
    /// Speck128/256.
    Speck128_256,
}

impl Cipher64 {
    /// The cipher's name as the CLI and the key labels spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Cipher64::Speck64_128 => "speck64-128",
            Cipher64::Blowfish => "blowfish",
            Cipher64::TripleDes => "3des",
        }
    }
}

impl Cipher64 {
    /// Bytes of key the cipher takes here.
    const fn key_len(self) -> usize {
        match self {
            Cipher64::TripleDes => 24,
            _ => 16,
        }
    }
}

impl Cipher128 {
    /// The cipher's name as the CLI and the key labels spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Cipher128::Aes256 => "aes256",
            Cipher128::Speck128_256 => "speck128-256",
        }
    }
}

impl std::str::FromStr for Cipher64 {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "speck64-128" | "speck" => Ok(Cipher64::Speck64_128),
            "blowfish" => Ok(Cipher64::Blowfish),
            "3des" | "tdes" => Ok(Cipher64::TripleDes),
            _ => Err(Error::UnknownCipher {
                name: s.to_owned(),
                bits: 64,
                expected: "speck64-128, blowfish or 3des",
            }),
        }
    }
}

impl std::str::FromStr for Cipher128 {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "aes256" | "aes" => Ok(Cipher128::Aes256),
            "speck128-256" | "speck" => Ok(Cipher128::Speck128_256),
            _ => Err(Error::UnknownCipher {
                name: s.to_owned(),
                bits: 128,
                expected: "aes256 or speck128-256",
            }),
        }
    }
}

/// The label from which a per-size key is derived.
fn label(cipher: &str, bits: u32) -> String {
    format!("nonceforge/encrypted-nonce/v1/{cipher}/{bits}")
}

/// Derives `N` key bytes for `cipher` at `bits` from the base key.
fn derive<const N: usize>(base_key: &[u8], cipher: &str, bits: u32) -> Zeroizing<[u8; N]> {
    let mut okm = Zeroizing::new([0u8; N]);
    Hkdf::<Sha256>::new(None, base_key)
        .expand(label(cipher, bits).as_bytes(), okm.as_mut())
        .expect("HKDF-SHA256 gives up to 8160 bytes; we ask for at most 32");
    okm
}

// One per generator, kept inline: boxing would add a pointer chase per nonce.
#[allow(clippy::large_enum_variant)]
enum Impl64 {
    Speck(Speck64),
    Blowfish(Box<Blowfish>),
    Tdes(TdesEde3),
}

#[allow(clippy::large_enum_variant)]
enum Impl128 {
    Aes(Aes256),
    Speck(Speck128_256),
}

impl Impl64 {
    /// The cipher keyed with `key` (16 bytes; 24 for 3DES; 4..=56 for Blowfish).
    fn new(cipher: Cipher64, key: &[u8]) -> Self {
        match cipher {
            Cipher64::Speck64_128 => Impl64::Speck(Speck64::new(key.try_into().expect("16 bytes"))),
            Cipher64::Blowfish => Impl64::Blowfish(Box::new(
                Blowfish::new_from_slice(key).expect("Blowfish takes 4..=56-byte keys"),
            )),
            Cipher64::TripleDes => Impl64::Tdes(TdesEde3::new(key.try_into().expect("24 bytes"))),
        }
    }
}

impl Impl128 {
    fn new(cipher: Cipher128, key: &[u8]) -> Self {
        match cipher {
            Cipher128::Aes256 => Impl128::Aes(Aes256::new(key.try_into().expect("32 bytes"))),
            Cipher128::Speck128_256 => {
                Impl128::Speck(Speck128_256::new(key.try_into().expect("32 bytes")))
            }
        }
    }
}

/// The three per-size ciphers of one generator, keyed from its base key.
/// Round keys are wiped when this is dropped (the cipher crates' `zeroize` feature).
pub(crate) struct NonceCiphers {
    c64: Impl64,
    c96: Speck96,
    c128: Impl128,
}

impl std::fmt::Debug for NonceCiphers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NonceCiphers { .. }")
    }
}

impl NonceCiphers {
    pub(crate) fn new(base_key: &[u8], c64: Cipher64, c128: Cipher128) -> Result<Self> {
        if base_key.len() < 32 {
            return Err(Error::KeyTooShort {
                len: base_key.len(),
            });
        }
        let c64 = Impl64::new(
            c64,
            &derive::<24>(base_key, c64.name(), 64)[..c64.key_len()],
        );
        let c96 = Speck96::new(&derive::<18>(base_key, "speck96-144", 96));
        let c128 = Impl128::new(c128, &*derive::<32>(base_key, c128.name(), 128));
        Ok(NonceCiphers { c64, c96, c128 })
    }

    #[inline]
    pub(crate) fn encrypt64(&self, block: &mut [u8; 8]) {
        match &self.c64 {
            Impl64::Speck(c) => c.encrypt_block(block),
            Impl64::Blowfish(c) => c.encrypt_block(block.into()),
            Impl64::Tdes(c) => c.encrypt_block(block.into()),
        }
    }

    pub(crate) fn decrypt64(&self, block: &mut [u8; 8]) {
        match &self.c64 {
            Impl64::Speck(c) => c.decrypt_block(block),
            Impl64::Blowfish(c) => c.decrypt_block(block.into()),
            Impl64::Tdes(c) => c.decrypt_block(block.into()),
        }
    }

    #[inline]
    pub(crate) fn encrypt96(&self, block: &mut [u8; 12]) {
        self.c96.encrypt_block(block);
    }

    pub(crate) fn decrypt96(&self, block: &mut [u8; 12]) {
        self.c96.decrypt_block(block);
    }

    #[inline]
    pub(crate) fn encrypt128(&self, block: &mut [u8; 16]) {
        let b = block.into();
        match &self.c128 {
            Impl128::Aes(c) => c.encrypt_block(b),
            Impl128::Speck(c) => c.encrypt_block(b),
        }
    }

    pub(crate) fn decrypt128(&self, block: &mut [u8; 16]) {
        let b = block.into();
        match &self.c128 {
            Impl128::Aes(c) => c.decrypt_block(b),
            Impl128::Speck(c) => c.decrypt_block(b),
        }
    }

    /// Encrypts many 128-bit blocks; AES takes its pipelined (VAES) path.
    pub(crate) fn encrypt128_many(&self, blocks: &mut [[u8; 16]]) {
        match &self.c128 {
            Impl128::Aes(c) => c.encrypt_blocks(Array::cast_slice_from_core_mut(blocks)),
            Impl128::Speck(c) => blocks.iter_mut().for_each(|b| c.encrypt_block(b.into())),
        }
    }

    pub(crate) fn encrypt64_many(&self, blocks: &mut [[u8; 8]]) {
        match &self.c64 {
            Impl64::Speck(c) => c.encrypt_blocks(blocks),
            _ => blocks.iter_mut().for_each(|b| self.encrypt64(b)),
        }
    }

    pub(crate) fn encrypt96_many(&self, blocks: &mut [[u8; 12]]) {
        self.c96.encrypt_blocks(blocks);
    }

    /// Encrypts `LANES` nonce values of one size in place, side by side.
    #[inline]
    pub(crate) fn encrypt_lanes(&self, bits: Bits, values: &mut [u128; LANES]) {
        match (bits, &self.c64) {
            (Bits::B64, Impl64::Speck(c)) => {
                let mut x = values.map(|v| (v >> 32) as u32);
                let mut y = values.map(|v| v as u32);
                c.encrypt_lanes(&mut x, &mut y);
                for i in 0..LANES {
                    values[i] = ((x[i] as u128) << 32) | y[i] as u128;
                }
            }
            (Bits::B64, _) => {
                for v in values.iter_mut() {
                    let mut b = (*v as u64).to_be_bytes();
                    self.encrypt64(&mut b);
                    *v = u64::from_be_bytes(b) as u128;
                }
            }
            (Bits::B96, _) => {
                const M: u128 = (1 << 48) - 1;
                let mut x = values.map(|v| ((v >> 48) & M) as u64);
                let mut y = values.map(|v| (v & M) as u64);
                self.c96.encrypt_lanes(&mut x, &mut y);
                for i in 0..LANES {
                    values[i] = ((x[i] as u128) << 48) | y[i] as u128;
                }
            }
            (Bits::B128, _) => {
                let mut blocks = values.map(u128::to_be_bytes);
                self.encrypt128_many(&mut blocks);
                *values = blocks.map(u128::from_be_bytes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_names() {
        assert_eq!("blowfish".parse::<Cipher64>().unwrap(), Cipher64::Blowfish);
        assert_eq!("aes256".parse::<Cipher128>().unwrap(), Cipher128::Aes256);
        let e = "rot13".parse::<Cipher64>().unwrap_err().to_string();
        assert!(e.contains("\"rot13\"") && e.contains("speck64-128"), "{e}");
        let e = "des".parse::<Cipher128>().unwrap_err().to_string();
        assert!(e.contains("128-bit") && e.contains("aes256"), "{e}");
    }

    #[test]
    fn key_must_be_32_bytes() {
        assert_eq!(
            NonceCiphers::new(&[0u8; 31], Cipher64::default(), Cipher128::default()).unwrap_err(),
            Error::KeyTooShort { len: 31 }
        );
        assert!(NonceCiphers::new(&[0u8; 32], Cipher64::default(), Cipher128::default()).is_ok());
    }

    #[test]
    fn every_cipher_round_trips() {
        for c64 in [
            Cipher64::Speck64_128,
            Cipher64::Blowfish,
            Cipher64::TripleDes,
        ] {
            for c128 in [Cipher128::Aes256, Cipher128::Speck128_256] {
                let c = NonceCiphers::new(&[7u8; 40], c64, c128).unwrap();
                let (mut a, mut b, mut d) = ([1u8; 8], [2u8; 12], [3u8; 16]);
                c.encrypt64(&mut a);
                c.encrypt96(&mut b);
                c.encrypt128(&mut d);
                assert_ne!((a, b, d), ([1u8; 8], [2u8; 12], [3u8; 16]));
                c.decrypt64(&mut a);
                c.decrypt96(&mut b);
                c.decrypt128(&mut d);
                assert_eq!((a, b, d), ([1u8; 8], [2u8; 12], [3u8; 16]));
                let mut many = [[3u8; 16]; 9];
                c.encrypt128_many(&mut many);
                let mut one = [3u8; 16];
                c.encrypt128(&mut one);
                assert!(many.iter().all(|m| *m == one));
                // The lane path agrees with one block at a time, for every size.
                for bits in Bits::ALL {
                    let mut lanes: [u128; LANES] = core::array::from_fn(|i| 1000 + i as u128);
                    let start = lanes;
                    c.encrypt_lanes(bits, &mut lanes);
                    for (p, e) in start.iter().zip(&lanes) {
                        let w = p.to_be_bytes();
                        let got = match bits {
                            Bits::B64 => {
                                let mut b: [u8; 8] = w[8..].try_into().unwrap();
                                c.encrypt64(&mut b);
                                b.to_vec()
                            }
                            Bits::B96 => {
                                let mut b: [u8; 12] = w[4..].try_into().unwrap();
                                c.encrypt96(&mut b);
                                b.to_vec()
                            }
                            Bits::B128 => {
                                let mut b = w;
                                c.encrypt128(&mut b);
                                b.to_vec()
                            }
                        };
                        assert_eq!(got, e.to_be_bytes()[16 - bits.bytes()..].to_vec(), "{bits}");
                    }
                }
            }
        }
    }

    /// The published vectors in testdata/vectors/ciphers.json, through the
    /// same cipher objects that encrypt nonces.
    #[test]
    fn published_known_answers() {
        let doc: serde_json::Value =
            serde_json::from_str(include_str!("../../../../testdata/vectors/ciphers.json"))
                .unwrap();
        let vectors = doc["vectors"].as_array().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for v in vectors {
            let hex = |f: &str| hex::decode(v[f].as_str().unwrap()).unwrap();
            let (name, key, pt, ct) = (
                v["cipher"].as_str().unwrap(),
                hex("key"),
                hex("plaintext"),
                hex("ciphertext"),
            );
            let filler =
                NonceCiphers::new(&[0; 32], Cipher64::default(), Cipher128::default()).unwrap();
            let c = match name {
                "speck64-128" | "blowfish" | "3des" => NonceCiphers {
                    c64: Impl64::new(name.parse().unwrap(), &key),
                    ..filler
                },
                "speck96-144" => NonceCiphers {
                    c96: Speck96::new(key.as_slice().try_into().unwrap()),
                    ..filler
                },
                "aes256" | "speck128-256" => NonceCiphers {
                    c128: Impl128::new(name.parse().unwrap(), &key),
                    ..filler
                },
                other => panic!("unknown cipher {other}"),
            };
            let mut out = pt.clone();
            match pt.len() {
                8 => c.encrypt64(out.as_mut_slice().try_into().unwrap()),
                12 => c.encrypt96(out.as_mut_slice().try_into().unwrap()),
                16 => c.encrypt128(out.as_mut_slice().try_into().unwrap()),
                n => panic!("block of {n} bytes"),
            }
            assert_eq!(
                hex::encode(&out),
                hex::encode(&ct),
                "{name}: {}",
                v["source"]
            );
            match pt.len() {
                8 => c.decrypt64(out.as_mut_slice().try_into().unwrap()),
                12 => c.decrypt96(out.as_mut_slice().try_into().unwrap()),
                _ => c.decrypt128(out.as_mut_slice().try_into().unwrap()),
            }
            assert_eq!(out, pt, "{name} decrypts");
            seen.insert(name);
        }
        assert_eq!(seen.len(), 6, "every cipher has a vector: {seen:?}");
    }

    proptest::proptest! {
        #[test]
        fn decrypt_inverts_encrypt(key: [u8; 32], b8: [u8; 8], b12: [u8; 12], b16: [u8; 16], c64 in 0usize..3, c128 in 0usize..2) {
            let c64 = [Cipher64::Speck64_128, Cipher64::Blowfish, Cipher64::TripleDes][c64];
            let c128 = [Cipher128::Aes256, Cipher128::Speck128_256][c128];
            let c = NonceCiphers::new(&key, c64, c128).unwrap();
            let (mut x, mut y, mut z) = (b8, b12, b16);
            c.encrypt64(&mut x);
            c.encrypt96(&mut y);
            c.encrypt128(&mut z);
            c.decrypt64(&mut x);
            c.decrypt96(&mut y);
            c.decrypt128(&mut z);
            proptest::prop_assert_eq!((x, y, z), (b8, b12, b16));
        }
    }

    #[test]
    fn sizes_and_ciphers_get_distinct_keys() {
        let a = derive::<16>(b"k", "speck64-128", 64);
        let b = derive::<16>(b"k", "blowfish", 64);
        let c = derive::<16>(b"k", "speck64-128", 96);
        assert!(*a != *b && *a != *c && *b != *c);
    }
}
