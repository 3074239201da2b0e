//! The algorithms, by OpenSSL name and by numeric id.

use crate::names;

macro_rules! algs {
    ($(#[$m:meta])* $vis:vis enum $name:ident names $table:path { $($(#[$vm:meta])* $v:ident = $n:literal,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        $vis enum $name { $($(#[$vm])* $v = $n,)* }
        impl $name {
            /// Every algorithm, in id order.
            pub const ALL: &'static [Self] = &[$(Self::$v,)*];
            /// The algorithm with this numeric id (its discriminant).
            pub fn from_id(id: u32) -> Option<Self> {
                Self::ALL.get(id as usize).copied()
            }

            /// The algorithm with this OpenSSL name or alias, in any case
            /// (`aes-256-ctr`, `id-aes256-GCM`, `SHA2-256`, `RSA-SHA256`, the OIDs;
            /// and `blake3`, nonceforge's extra).
            pub fn from_name(name: &str) -> Option<Self> {
                lookup($table, name)
            }

            /// Every accepted name and alias, lower case, with its algorithm.
            pub fn names() -> impl Iterator<Item = (&'static str, Self)> {
                $table.iter().copied()
            }

            /// OpenSSL's name (the first in the table).
            pub fn name(self) -> &'static str {
                $table
                    .iter()
                    .find(|(_, a)| *a == self)
                    .map(|(n, _)| *n)
                    .unwrap_or("?")
            }
        }
    };
}

algs! {
    /// A cipher: a stream cipher (CTR mode or ChaCha20) or an AEAD.
    pub enum CipherAlg names names::CIPHERS {
        /// AES-128 in CTR mode.
        Aes128Ctr = 0,
        /// AES-192 in CTR mode.
        Aes192Ctr = 1,
        /// AES-256 in CTR mode.
        Aes256Ctr = 2,
        /// ARIA-128 in CTR mode.
        Aria128Ctr = 3,
        /// ARIA-192 in CTR mode.
        Aria192Ctr = 4,
        /// ARIA-256 in CTR mode.
        Aria256Ctr = 5,
        /// Camellia-128 in CTR mode.
        Camellia128Ctr = 6,
        /// Camellia-192 in CTR mode.
        Camellia192Ctr = 7,
        /// Camellia-256 in CTR mode.
        Camellia256Ctr = 8,
        /// SM4 in CTR mode.
        Sm4Ctr = 9,
        /// ChaCha20 with OpenSSL's 16-byte IV.
        ChaCha20 = 10,
        /// AES-128-GCM.
        Aes128Gcm = 11,
        /// AES-192-GCM.
        Aes192Gcm = 12,
        /// AES-256-GCM.
        Aes256Gcm = 13,
        /// ARIA-128-GCM.
        Aria128Gcm = 14,
        /// ARIA-192-GCM.
        Aria192Gcm = 15,
        /// ARIA-256-GCM.
        Aria256Gcm = 16,
        /// ChaCha20-Poly1305 (RFC 8439).
        ChaCha20Poly1305 = 17,
    }
}

algs! {
    /// A message digest.
    pub enum DigestAlg names names::DIGESTS {
        /// MD5 (broken; for compatibility).
        Md5 = 0,
        /// SHA-1 (broken for collisions; for compatibility).
        Sha1 = 1,
        /// SHA-224.
        Sha224 = 2,
        /// SHA-256.
        Sha256 = 3,
        /// SHA-384.
        Sha384 = 4,
        /// SHA-512.
        Sha512 = 5,
        /// SHA-512/224.
        Sha512_224 = 6,
        /// SHA-512/256.
        Sha512_256 = 7,
        /// SHA3-224.
        Sha3_224 = 8,
        /// SHA3-256.
        Sha3_256 = 9,
        /// SHA3-384.
        Sha3_384 = 10,
        /// SHA3-512.
        Sha3_512 = 11,
        /// SHAKE128 with OpenSSL's default 16-byte output.
        Shake128 = 12,
        /// SHAKE256 with OpenSSL's default 32-byte output.
        Shake256 = 13,
        /// BLAKE2b-512.
        Blake2b512 = 14,
        /// BLAKE2s-256.
        Blake2s256 = 15,
        /// RIPEMD-160.
        Ripemd160 = 16,
        /// MD5 ‖ SHA-1 (TLS 1.0's PRF hash).
        Md5Sha1 = 17,
        /// SM3.
        Sm3 = 18,
        /// BLAKE3 (32 bytes).
        Blake3 = 19,
    }
}

fn lookup<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    if name.len() > 64 {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    table.iter().find(|(n, _)| *n == lower).map(|&(_, a)| a)
}

impl CipherAlg {
    /// Key length in bytes.
    pub fn key_len(self) -> usize {
        use CipherAlg::*;
        match self {
            Aes128Ctr | Aria128Ctr | Camellia128Ctr | Sm4Ctr | Aes128Gcm | Aria128Gcm => 16,
            Aes192Ctr | Aria192Ctr | Camellia192Ctr | Aes192Gcm | Aria192Gcm => 24,
            Aes256Ctr | Aria256Ctr | Camellia256Ctr | Aes256Gcm | Aria256Gcm => 32,
            ChaCha20 | ChaCha20Poly1305 => 32,
        }
    }

    /// IV length in bytes (the only one accepted: OpenSSL's default).
    pub fn iv_len(self) -> usize {
        if self.is_aead() { 12 } else { 16 }
    }

    /// Whether the cipher authenticates (takes AAD and a tag).
    pub fn is_aead(self) -> bool {
        self as u32 >= CipherAlg::Aes128Gcm as u32
    }

    /// Whether `n` is an allowed tag length: 0 for stream ciphers; 4, 8 or
    /// 12–16 for GCM (NIST SP 800-38D); 1–16 for ChaCha20-Poly1305.
    pub fn tag_len_ok(self, n: usize) -> bool {
        match self {
            CipherAlg::ChaCha20Poly1305 => (1..=16).contains(&n),
            a if a.is_aead() => matches!(n, 4 | 8 | 12..=16),
            _ => n == 0,
        }
    }
}

impl DigestAlg {
    /// Output length in bytes.
    pub fn output_len(self) -> usize {
        use DigestAlg::*;
        match self {
            Md5 | Shake128 => 16,
            Sha1 | Ripemd160 => 20,
            Sha224 | Sha512_224 | Sha3_224 => 28,
            Sha256 | Sha512_256 | Sha3_256 | Shake256 | Blake2s256 | Sm3 | Blake3 => 32,
            Md5Sha1 => 36,
            Sha384 | Sha3_384 => 48,
            Sha512 | Sha3_512 | Blake2b512 => 64,
        }
    }

    /// Whether HMAC is defined over it (not for SHAKE).
    pub fn hmac_ok(self) -> bool {
        !matches!(self, DigestAlg::Shake128 | DigestAlg::Shake256)
    }
}
