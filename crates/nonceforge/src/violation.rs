//! What the nonce sanitizer refuses, as a value: shared by the sanitizer
//! ([`crate::aead`]) and the crate's [`Error`](crate::Error), and so a leaf —
//! it imports nothing from the crate.

use std::fmt;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// The nonce was sealed before under this key (with another message).
    Reuse,
    /// The Bloom filter has (probably) seen the nonce.
    Suspected,
    /// A counter nonce more than the window below the highest ([`NonceMode::Counter`](crate::aead::NonceMode::Counter)).
    CounterTooOld,
    /// The key's seal limit is reached.
    SealLimit,
    /// The key's byte limit is reached.
    ByteLimit,
    /// The nonce was opened before (a replay, with `check_open`).
    Replay,
}

/// A refused seal (or open): what, under which key (a per-process id, never the
/// key), and which nonce.
#[derive(Clone, PartialEq, Eq)]
pub struct Violation {
    /// What went wrong.
    pub kind: ViolationKind,
    /// The AEAD, e.g. "AES-256-GCM".
    pub algorithm: &'static str,
    /// A short id of the key, from its salted fingerprint: equal ids mean one
    /// key within this process; meaningless outside it.
    pub key_id: u32,
    nonce: [u8; 24],
    nonce_len: u8,
    /// The limit, for SealLimit and ByteLimit; the window, for CounterTooOld.
    pub limit: u64,
}

impl Violation {
    pub(crate) fn new(
        kind: ViolationKind,
        algorithm: &'static str,
        key_id: u32,
        nonce: &[u8],
        limit: u64,
    ) -> Self {
        let mut n = [0; 24];
        let len = nonce.len().min(24);
        n[..len].copy_from_slice(&nonce[..len]);
        Violation {
            kind,
            algorithm,
            key_id,
            nonce: n,
            nonce_len: len as u8,
            limit,
        }
    }
    /// The nonce.
    pub fn nonce(&self) -> &[u8] {
        &self.nonce[..self.nonce_len as usize]
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (alg, key) = (self.algorithm, self.key_id);
        let nonce: String = self.nonce().iter().map(|b| format!("{b:02x}")).collect();
        match self.kind {
            ViolationKind::Reuse => write!(
                f,
                "nonceforge: nonce reuse: {alg} key #{key:08x} sealed a second message under nonce {nonce}"
            ),
            ViolationKind::Suspected => write!(
                f,
                "nonceforge: nonce reuse suspected: {alg} key #{key:08x}, nonce {nonce} is in the Bloom filter (a false positive at its stated rate)"
            ),
            ViolationKind::CounterTooOld => write!(
                f,
                "nonceforge: nonce reuse not ruled out: {alg} key #{key:08x}, counter nonce {nonce} is more than {} below the highest sealed",
                self.limit
            ),
            ViolationKind::SealLimit => write!(
                f,
                "nonceforge: nonce reuse risk: {alg} key #{key:08x} has sealed its limit of {} messages; use a new key",
                self.limit
            ),
            ViolationKind::ByteLimit => write!(
                f,
                "nonceforge: nonce reuse risk: {alg} key #{key:08x} has sealed its limit of {} bytes; use a new key",
                self.limit
            ),
            ViolationKind::Replay => write!(
                f,
                "nonceforge: nonce reuse by the sender: {alg} key #{key:08x} opened nonce {nonce} before (a replay?)"
            ),
        }
    }
}

impl fmt::Debug for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Violation {}
