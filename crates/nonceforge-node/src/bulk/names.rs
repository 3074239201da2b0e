//! The algorithm tables, and what Node's OpenSSL says of a name.

use napi_derive::napi;
use nonceforge_bulk::{CipherAlg, DigestAlg};

/// Every accepted name with its id and sizes, for the JS lookup tables:
/// ciphers as `[name, id, keyLength, ivLength, isAead]`, digests as `[name, id, length]`.
#[napi(object)]
pub struct Algorithms {
    /// `[name, id, keyLength, ivLength, isAead]` rows.
    pub ciphers: Vec<(String, u32, u32, u32, bool)>,
    /// `[name, id, length]` rows.
    pub digests: Vec<(String, u32, u32)>,
}

/// The algorithm tables.
#[napi]
pub fn algorithms() -> Algorithms {
    Algorithms {
        ciphers: CipherAlg::names()
            .map(|(n, a)| {
                (
                    n.to_string(),
                    a as u32,
                    a.key_len() as u32,
                    a.iv_len() as u32,
                    a.is_aead(),
                )
            })
            .collect(),
        digests: DigestAlg::names()
            .map(|(n, a)| (n.to_string(), a as u32, a.output_len() as u32))
            .collect(),
    }
}

/// What Node's OpenSSL says of an algorithm name (see `openssl.rs`):
/// `status` 0 unknown, 1 known but not supported ("algorithm disabled"),
/// 2 supported, 3 known but `EVP_DigestInit_ex` fails ("initialization
/// failed" at run time); `short` is OpenSSL's short name in lower case and
/// `size` a digest's length.
#[napi(object)]
pub struct NameInfo {
    /// 0 unknown, 1 disabled, 2 supported, 3 init fails.
    pub status: u32,
    /// OpenSSL's short name, lower case ("" when unknown).
    pub short: String,
    /// A digest's length in bytes (0 for ciphers).
    pub size: u32,
}

/// Asks Node's OpenSSL what `name` is, as a cipher (`digest` false) or a
/// digest; `null` where this process has no OpenSSL to ask.
#[napi(catch_unwind)]
pub fn openssl_name(name: String, digest: bool) -> Option<NameInfo> {
    use crate::openssl::{CipherName, DigestName};
    let info = |status, short, size| NameInfo {
        status,
        short,
        size,
    };
    if digest {
        Some(match crate::openssl::digest(&name)? {
            DigestName::Unknown => info(0, String::new(), 0),
            DigestName::Known { short, size, init } => info(if init { 2 } else { 3 }, short, size),
        })
    } else {
        Some(match crate::openssl::cipher(&name)? {
            CipherName::Unknown => info(0, String::new(), 0),
            CipherName::Disabled => info(1, String::new(), 0),
            CipherName::Supported(short) => info(2, short, 0),
        })
    }
}
