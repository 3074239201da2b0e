//! NoNoncense 2.0's encrypted-nonce ciphers and keys, bit for bit, so a service
//! that moves from NoNoncense keeps what its encrypted nonces mean.
//!
//! | nonce | cipher (option) | key: PBKDF2-HMAC-SHA256(base key, salt, 1000 iterations) |
//! |---|---|---|
//! | 64  | Blowfish-ECB (`blowfish`, default) | salt `blowfish_64`, 16 bytes |
//! | 64  | 3DES-EDE, one block (`des3`) | salt `des3_64`, 24 bytes |
//! | 64  | Speck64/128 (`speck`) | salt `speck64_128`, 16 bytes |
//! | 96  | Blowfish (`blowfish`, default): a 64-bit nonce encrypted, 32 zero bits after | salt `blowfish_96`, 16 bytes |
//! | 96  | 3DES (`des3`): likewise | salt `des3_96`, 24 bytes |
//! | 96  | Speck96/144 (`speck`) | salt `speck96_144`, 18 bytes |
//! | 128 | AES-256-ECB (`aes`, default) | salt `aes`, 32 bytes |
//! | 128 | Speck128/256 (`speck`) | salt `speck128_256`, 32 bytes |
//!
//! A key given for one size (`key64`, `key96`, `key128`) is used as it is, and
//! must have that cipher's length. Without a base key or a key for a size, that
//! size has no cipher ([`Error::NoKey`]).
//!
//! These are raw block ciphers on single blocks: fit for turning unique nonces
//! into unique, unpredictable nonces, and for nothing else.

use super::speck::{Speck64, Speck96};
use crate::error::{Error, Result};
use crate::nonce::layout::Bits;
use aes::Aes256;
use blowfish::Blowfish;
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use des::TdesEde3;
use speck_cipher::Speck128_256;
use zeroize::Zeroizing;

/// NoNoncense's PBKDF2 iteration count (version 2.0).
pub const PBKDF2_ITERATIONS: u32 = 1000;

/// A cipher for 64- or 96-bit nonces, by NoNoncense's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SmallCipher {
    /// Blowfish (NoNoncense's default).
    #[default]
    Blowfish,
    /// 3DES-EDE with a 192-bit key.
    Des3,
    /// Speck64/128, or Speck96/144 for 96-bit nonces.
    Speck,
}

/// A cipher for 128-bit nonces, by NoNoncense's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WideCipher {
    /// AES-256 (NoNoncense's default).
    #[default]
    Aes,
    /// Speck128/256.
    Speck,
}

/// What NoNoncense's `init/1` takes for encryption.
#[derive(Default)]
pub struct NoNoncenseKeys<'a> {
    /// `base_key`: at least 32 bytes.
    pub base_key: Option<&'a [u8]>,
    /// `key64`, `key96`, `key128`: a key for one size, used as it is.
    pub key64: Option<&'a [u8]>,
    /// See `key64`.
    pub key96: Option<&'a [u8]>,
    /// See `key64`.
    pub key128: Option<&'a [u8]>,
    /// `cipher64`.
    pub cipher64: SmallCipher,
    /// `cipher96`.
    pub cipher96: SmallCipher,
    /// `cipher128`.
    pub cipher128: WideCipher,
}

enum Small {
    Blowfish(Box<Blowfish>),
    Des3(Box<TdesEde3>),
    Speck64(Speck64),
}

enum Ninety6 {
    /// A 64-bit nonce under a 64-bit cipher, 32 zero bits after.
    Padded(Small),
    Speck(Speck96),
}

enum Wide {
    Aes(Box<Aes256>),
    Speck(Box<Speck128_256>),
}

/// NoNoncense's three per-size ciphers. Round keys are wiped on drop (the
/// cipher crates' `zeroize` feature; Speck's own types wipe themselves).
pub struct NoNoncenseCiphers {
    c64: Option<Small>,
    c96: Option<Ninety6>,
    c128: Option<Wide>,
}

impl std::fmt::Debug for NoNoncenseCiphers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoNoncenseCiphers { .. }")
    }
}

fn pbkdf2(base: &[u8], salt: &str, len: usize) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(vec![0u8; len]);
    pbkdf2::pbkdf2_hmac::<sha2::Sha256>(base, salt.as_bytes(), PBKDF2_ITERATIONS, &mut out);
    out
}

/// The key for one size: the override (checked for `len`), else derived.
fn key_for(
    given: Option<&[u8]>,
    base: Option<&[u8]>,
    salt: &str,
    len: usize,
    option: &'static str,
) -> Result<Option<Zeroizing<Vec<u8>>>> {
    match (given, base) {
        (Some(k), _) if k.len() == len => Ok(Some(Zeroizing::new(k.to_vec()))),
        (Some(k), _) => Err(Error::InvalidOption {
            option,
            value: k.len() as u64 * 8,
            rule: match len {
                16 => "this cipher takes a 128-bit key",
                18 => "speck96 takes a 144-bit key",
                24 => "des3 takes a 192-bit key",
                _ => "this cipher takes a 256-bit key",
            },
        }),
        (None, Some(b)) => Ok(Some(pbkdf2(b, salt, len))),
        (None, None) => Ok(None),
    }
}

impl Small {
    fn new(cipher: SmallCipher, key: &[u8]) -> Self {
        match cipher {
            SmallCipher::Blowfish => Small::Blowfish(Box::new(
                Blowfish::new_from_slice(key).expect("16 bytes, checked"),
            )),
            SmallCipher::Des3 => Small::Des3(Box::new(
                TdesEde3::new_from_slice(key).expect("24 bytes, checked"),
            )),
            SmallCipher::Speck => {
                Small::Speck64(Speck64::new(key.try_into().expect("16 bytes, checked")))
            }
        }
    }

    fn crypt(&self, block: &mut [u8; 8], encrypt: bool) {
        match (self, encrypt) {
            (Small::Blowfish(c), true) => c.encrypt_block(block.into()),
            (Small::Blowfish(c), false) => c.decrypt_block(block.into()),
            (Small::Des3(c), true) => c.encrypt_block(block.into()),
            (Small::Des3(c), false) => c.decrypt_block(block.into()),
            (Small::Speck64(c), true) => c.encrypt_block(block),
            (Small::Speck64(c), false) => c.decrypt_block(block),
        }
    }
}

impl NoNoncenseCiphers {
    /// The ciphers NoNoncense 2.0's `init/1` would set up from these options.
    pub fn new(keys: &NoNoncenseKeys<'_>) -> Result<Self> {
        if let Some(b) = keys.base_key
            && b.len() < 32
        {
            return Err(Error::KeyTooShort { len: b.len() });
        }
        let small = |cipher: SmallCipher, bits: u32, given: Option<&[u8]>, option| {
            let (salt, len) = match (cipher, bits) {
                (SmallCipher::Blowfish, 64) => ("blowfish_64", 16),
                (SmallCipher::Blowfish, _) => ("blowfish_96", 16),
                (SmallCipher::Des3, 64) => ("des3_64", 24),
                (SmallCipher::Des3, _) => ("des3_96", 24),
                (SmallCipher::Speck, 64) => ("speck64_128", 16),
                (SmallCipher::Speck, _) => ("speck96_144", 18),
            };
            key_for(given, keys.base_key, salt, len, option)
        };
        let c64 =
            small(keys.cipher64, 64, keys.key64, "key64")?.map(|k| Small::new(keys.cipher64, &k));
        let c96 = small(keys.cipher96, 96, keys.key96, "key96")?.map(|k| match keys.cipher96 {
            SmallCipher::Speck => {
                Ninety6::Speck(Speck96::new(k.as_slice().try_into().expect("18 bytes")))
            }
            other => Ninety6::Padded(Small::new(other, &k)),
        });
        let (salt, len) = match keys.cipher128 {
            WideCipher::Aes => ("aes", 32),
            WideCipher::Speck => ("speck128_256", 32),
        };
        let c128 = key_for(keys.key128, keys.base_key, salt, len, "key128")?.map(|k| {
            match keys.cipher128 {
                WideCipher::Aes => {
                    Wide::Aes(Box::new(Aes256::new_from_slice(&k).expect("32 bytes")))
                }
                WideCipher::Speck => Wide::Speck(Box::new(
                    Speck128_256::new_from_slice(&k).expect("32 bytes"),
                )),
            }
        });
        Ok(NoNoncenseCiphers { c64, c96, c128 })
    }

    /// Whether 96-bit nonces are a 64-bit nonce encrypted with 32 zero bits
    /// after (Blowfish, 3DES) rather than a 96-bit block (Speck).
    pub fn pads_96(&self) -> bool {
        matches!(self.c96, Some(Ninety6::Padded(_)))
    }

    /// The size of the plain nonce an encrypted nonce of `bits` is made from:
    /// `bits`, except 64 for a padded 96-bit nonce; [`Error::NoKey`] when no key
    /// was given or derived for `bits`.
    pub fn plain_bits(&self, bits: Bits) -> Result<Bits> {
        match bits {
            Bits::B64 if self.c64.is_some() => Ok(Bits::B64),
            Bits::B96 if self.pads_96() => Ok(Bits::B64),
            Bits::B96 if self.c96.is_some() => Ok(Bits::B96),
            Bits::B128 if self.c128.is_some() => Ok(Bits::B128),
            _ => Err(Error::NoKey),
        }
    }

    /// Encrypts (or decrypts) a nonce of 8, 12 or 16 bytes in place, as
    /// NoNoncense's `encrypt/2` (`decrypt/2`) does. A padded 96-bit nonce must
    /// end in 32 zero bits.
    pub fn crypt(&self, nonce: &mut [u8], encrypt: bool) -> Result<()> {
        let no_key = |_bits: u32| Error::NoKey;
        match nonce.len() {
            8 => {
                let c = self.c64.as_ref().ok_or(no_key(64))?;
                c.crypt(nonce.try_into().expect("8 bytes"), encrypt);
            }
            12 => match self.c96.as_ref().ok_or(no_key(96))? {
                Ninety6::Speck(c) => {
                    let b: &mut [u8; 12] = nonce.try_into().expect("12 bytes");
                    if encrypt {
                        c.encrypt_block(b)
                    } else {
                        c.decrypt_block(b)
                    }
                }
                Ninety6::Padded(c) => {
                    if nonce[8..] != [0; 4] {
                        return Err(Error::InvalidOption {
                            option: "nonce",
                            value: 96,
                            rule: "a 96-bit nonce under blowfish or des3 is 64 bits and 32 zero bits",
                        });
                    }
                    c.crypt((&mut nonce[..8]).try_into().expect("8 bytes"), encrypt);
                }
            },
            16 => {
                let b: &mut [u8; 16] = nonce.try_into().expect("16 bytes");
                match self.c128.as_ref().ok_or(no_key(128))? {
                    Wide::Aes(c) if encrypt => c.encrypt_block(b.into()),
                    Wide::Aes(c) => c.decrypt_block(b.into()),
                    Wide::Speck(c) if encrypt => c.encrypt_block(b.into()),
                    Wide::Speck(c) => c.decrypt_block(b.into()),
                }
            }
            n => {
                return Err(Error::InvalidOption {
                    option: "nonce",
                    value: n as u64 * 8,
                    rule: "a nonce is 64, 96 or 128 bits",
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_key_rules() {
        let base = [7u8; 32];
        for (c64, c96, c128) in [
            (
                SmallCipher::Blowfish,
                SmallCipher::Blowfish,
                WideCipher::Aes,
            ),
            (SmallCipher::Des3, SmallCipher::Des3, WideCipher::Speck),
            (SmallCipher::Speck, SmallCipher::Speck, WideCipher::Aes),
        ] {
            let c = NoNoncenseCiphers::new(&NoNoncenseKeys {
                base_key: Some(&base),
                cipher64: c64,
                cipher96: c96,
                cipher128: c128,
                ..Default::default()
            })
            .unwrap();
            for len in [8usize, 12, 16] {
                let plain: Vec<u8> = (0..len as u8)
                    .map(|i| if len == 12 && i >= 8 { 0 } else { i + 1 })
                    .collect();
                let mut n = plain.clone();
                c.crypt(&mut n, true).unwrap();
                assert_ne!(n, plain);
                if len == 12 && c.pads_96() {
                    assert_eq!(n[8..], [0; 4]);
                    assert_eq!(c.plain_bits(Bits::B96).unwrap(), Bits::B64);
                }
                c.crypt(&mut n, false).unwrap();
                assert_eq!(n, plain);
            }
        }
        let short = NoNoncenseCiphers::new(&NoNoncenseKeys {
            base_key: Some(&[1; 31]),
            ..Default::default()
        });
        assert!(matches!(short, Err(Error::KeyTooShort { len: 31 })));
        let wrong = NoNoncenseCiphers::new(&NoNoncenseKeys {
            key64: Some(&[1; 15]),
            ..Default::default()
        });
        assert!(matches!(
            wrong,
            Err(Error::InvalidOption {
                option: "key64",
                ..
            })
        ));
        let none = NoNoncenseCiphers::new(&NoNoncenseKeys::default()).unwrap();
        assert!(matches!(none.plain_bits(Bits::B96), Err(Error::NoKey)));
        assert!(matches!(none.crypt(&mut [0; 8], true), Err(Error::NoKey)));
    }

    #[test]
    fn pbkdf2_matches_rfc_7914_vector() {
        // RFC 7914 §11: PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1, 64 bytes.
        let mut out = [0u8; 64];
        pbkdf2::pbkdf2_hmac::<sha2::Sha256>(b"passwd", b"salt", 1, &mut out);
        assert_eq!(out[..8], [0x55, 0xac, 0x04, 0x6e, 0x56, 0xe3, 0x08, 0x9f]);
    }
}
