//! The nonce sanitizer: AEADs that refuse to seal twice under one (key, nonce).
//!
//! Reusing a nonce under one key destroys AES-GCM and ChaCha20-Poly1305 (the
//! XOR of two plaintexts leaks, and GCM's authentication key can be recovered).
//! A sanitized AEAD produces byte-identical output to the one it wraps, and
//! checks every seal *before* any ciphertext leaves: on a repeat the output
//! buffer is wiped and, by [`Policy`], the call panics (the default, a hard
//! assert like AddressSanitizer's), returns an error, or calls your callback.
//!
//! ```
//! use aes_gcm::{Aes256Gcm, KeyInit, aead::{Aead, Nonce}};
//! use nonceforge::aead::Sanitized;
//!
//! let key = [7u8; 32];
//! let cipher = Sanitized::<Aes256Gcm>::new(&key.into());
//! let nonce = Nonce::<Aes256Gcm>::from([1u8; 12]);
//! let sealed = cipher.encrypt(&nonce, &b"attack at dawn"[..]).unwrap();
//! // Byte-identical to the unwrapped cipher:
//! assert_eq!(sealed, Aes256Gcm::new(&key.into()).encrypt(&nonce, &b"attack at dawn"[..]).unwrap());
//! // The same nonce again, under the same key, in any instance: refused.
//! let again = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
//!     cipher.encrypt(&nonce, &b"retreat"[..])
//! }));
//! assert!(again.is_err());
//! ```
//!
//! # What is checked
//!
//! State is per key, not per instance: a salted fingerprint of the key (never the
//! key) is computed once, at construction, and a process-wide registry gives every
//! instance with that key (and algorithm) one shared [`NonceGuard`] state, which
//! lives while any of them does.
//!
//! * Counter nonces ([`NonceMode::Counter`], or detected in [`NonceMode::Auto`]
//!   when a nonce XOR the key's first nonce is a big-endian counter, as with
//!   TLS's IV XOR sequence number): a high-water mark and an out-of-order bitmap,
//!   exact over all history in O(1) memory, lock-free for the next in order.
//! * Any nonce: an exact window of the last [`GuardConfig::window`] seals
//!   (default 1024): a nonce sealed fewer than that many seals ago is always
//!   caught. Sharded, so threads do not serialise on one lock; nothing is
//!   allocated per seal (a seal withdrawn with `cancel_seal`, or a hash bucket
//!   that overflows, is listed in a small vector that may grow).
//! * Optionally, a long tail: a Bloom filter sized for `n` nonces at a stated
//!   false-positive rate; a hit there is reported as *suspected*.
//! * Optionally, the same (key, nonce, plaintext, AAD) sealed again is not a
//!   violation ([`GuardConfig::allow_identical`]): under one key and nonce, equal
//!   tags mean the same message, so the tag kept with each remembered nonce
//!   decides, at no extra hashing.
//! * Limits per key: seals (default 2^32, NIST SP 800-38D's bound for random
//!   96-bit nonces) and bytes.
//! * Optionally, on open: replay detection with a keyed hash (SipHash with a
//!   random key), so a peer who picks nonces cannot flood the table.
//!
//! # What is not
//!
//! A nonce sealed more than the window ago (and outside the counter path) is not
//! remembered unless the Bloom filter is on; state is per process, so two
//! processes sharing a key are not cross-checked; and a key whose instances have
//! all been dropped starts afresh. The sanitizer is a seat belt for bugs, not a
//! nonce scheme: pick nonces with [`crate::NonceGenerator`].

mod bias;
mod bloom;
mod counter;
mod guard;
mod registry;
#[cfg(feature = "ring")]
mod ring_adapter;
#[cfg(feature = "rustcrypto-aead")]
mod rustcrypto;
mod spin;
mod stats;
mod window;

pub use crate::violation::{Violation, ViolationKind};
pub use guard::{NonceGuard, SealTicket};
pub use registry::{RETAIN_FOR, RETAIN_KEYS, RegistryStats, registry_stats};
#[cfg(feature = "ring")]
pub use ring_adapter::SanitizedLessSafeKey;
#[cfg(feature = "rustcrypto-aead")]
pub use rustcrypto::{Aes192Gcm, NamedAead, Sanitized};
pub use stats::{GuardStats, SANITIZER_METRICS, VIOLATION_KINDS};

use std::fmt;
use std::sync::Arc;

/// An AEAD tag (16 bytes for every AEAD here).
pub type Tag = [u8; 16];

/// How nonces are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NonceMode {
    /// Counter-shaped nonces (XOR with the key's first nonce is a big-endian
    /// counter) take the counter path; others, and counters more than the
    /// window below the highest, take the exact window.
    #[default]
    Auto,
    /// Every nonce is a counter (XOR with the first is a big-endian number that
    /// mostly goes up): exact over all history; a value more than the window
    /// below the highest is refused, since it cannot be proven fresh.
    Counter,
    /// Random nonces: the exact window (and the Bloom filter, if on).
    Random,
}

/// What happens on a violation (after the output is wiped).
#[derive(Clone, Default)]
pub enum Policy {
    /// Panic with a message that starts `nonceforge: nonce reuse` (default).
    #[default]
    Panic,
    /// Return an error.
    Error,
    /// Call this (for logs and metrics), then return an error.
    Callback(Arc<dyn Fn(&Violation) + Send + Sync>),
}

impl fmt::Debug for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Panic => "Panic",
            Policy::Error => "Error",
            Policy::Callback(_) => "Callback(..)",
        })
    }
}

/// The sanitizer's settings. The per-key state is made by the first instance
/// for a key, with its settings; later instances share that state and keep
/// their own [`Policy`].
#[derive(Debug, Clone)]
pub struct GuardConfig {
    pub(crate) window: usize,
    pub(crate) counter_window: usize,
    pub(crate) shards: usize,
    pub(crate) mode: NonceMode,
    pub(crate) allow_identical: bool,
    pub(crate) bloom: Option<(u64, f64)>,
    pub(crate) max_seals: Option<u64>,
    pub(crate) max_bytes: Option<u64>,
    pub(crate) check_open: bool,
    pub(crate) policy: Policy,
}

impl Default for GuardConfig {
    fn default() -> Self {
        GuardConfig {
            window: 1024,
            counter_window: 1 << 16,
            shards: default_shards(),
            mode: NonceMode::Auto,
            allow_identical: false,
            bloom: None,
            max_seals: None,
            max_bytes: None,
            check_open: false,
            policy: Policy::Panic,
        }
    }
}

/// One shard per CPU, 1 to 8. Asked once a process: the question reads cgroup
/// files (most of a key's set-up before it was cached: bench/RESULTS.md,
/// "The measurements behind the code").
fn default_shards() -> usize {
    static SHARDS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SHARDS.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(4, |n| n.get())
            .clamp(1, 8)
    })
}

/// The default seal limit for random nonces: 2^32 (NIST SP 800-38D §8.3).
pub const DEFAULT_MAX_SEALS: u64 = 1 << 32;

impl GuardConfig {
    /// The defaults: window 1024, auto mode, panic on violation.
    pub fn new() -> Self {
        Self::default()
    }
    /// Remember the last `seals` seals exactly (rounded up to a power of two,
    /// R); clamped to 64..=2^24. Memory, once the key has sealed R nonces a
    /// shard: `R × (N + 32) × shards` bytes, and 17 more a seal with
    /// [`allow_identical`](Self::allow_identical); before that, what it has
    /// sealed (the window starts empty and doubles as it fills).
    pub fn window(mut self, seals: usize) -> Self {
        self.window = seals.clamp(64, 1 << 24);
        self
    }
    /// How far below the highest counter value a counter nonce may arrive and
    /// still be checked exactly (default 65,536: threads that take counter
    /// values and seal later arrive out of order); clamped to 64..=2^30.
    /// Memory: one bit a value, made at the first value skipped (a counter
    /// that only goes up in order holds none).
    pub fn counter_window(mut self, values: usize) -> Self {
        self.counter_window = values.clamp(64, 1 << 30);
        self
    }
    /// Shards of the window (1..=64); each remembers a whole window, so more
    /// shards cost memory and buy less lock contention.
    pub fn shards(mut self, shards: usize) -> Self {
        self.shards = shards.clamp(1, 64);
        self
    }
    /// How nonces are checked.
    pub fn mode(mut self, mode: NonceMode) -> Self {
        self.mode = mode;
        self
    }
    /// Whether the same message sealed again under the same nonce is accepted.
    pub fn allow_identical(mut self, allow: bool) -> Self {
        self.allow_identical = allow;
        self
    }
    /// A Bloom filter behind the window for `n` nonces at false-positive rate
    /// `p` (0 < p < 1); a hit there is a *suspected* reuse. Memory:
    /// `-n·ln p / ln² 2` bits (1.2 MB for n = 10^6, p = 10^-6).
    pub fn bloom(mut self, n: u64, p: f64) -> Self {
        self.bloom = Some((n.max(1), p));
        self
    }
    /// At most this many seals per key (default 2^32, or 2^62 for counters).
    pub fn max_seals(mut self, seals: u64) -> Self {
        self.max_seals = Some(seals);
        self
    }
    /// At most this many plaintext bytes per key (default: no limit).
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = Some(bytes);
        self
    }
    /// Also refuse a nonce opened twice (replay detection on the receiving side).
    pub fn check_open(mut self, check: bool) -> Self {
        self.check_open = check;
        self
    }
    /// What happens on a violation.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }
    pub(crate) fn validate(&self) -> crate::Result<()> {
        if let Some((_, p)) = self.bloom
            && !(p > 0.0 && p < 1.0)
        {
            return Err(crate::Error::InvalidRate {
                option: "bloom false-positive rate",
                value: p.to_string(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// testdata/vectors/sanitizer-defaults.json: the defaults and bounds the
    /// Go port restates (go/sanitizer's TestDefaultsSharedVectors reads it too).
    #[test]
    fn the_shared_defaults() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/vectors/sanitizer-defaults.json"
        );
        let Ok(text) = std::fs::read_to_string(path) else {
            assert!(
                !std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata"))
                    .exists(),
                "cannot read {path}"
            );
            return; // outside the repository (a packaged crate)
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let n = |a: &str, b: &str| v[a][b].as_u64().unwrap() as usize;
        let d = GuardConfig::default();
        assert_eq!(d.window, n("window", "default"));
        assert_eq!(d.counter_window, n("counter_window", "default"));
        assert!((1..=n("shards", "default_at_most")).contains(&d.shards));
        assert_eq!(DEFAULT_MAX_SEALS, v["max_seals_default"].as_u64().unwrap());
        assert_eq!(RETAIN_FOR.as_secs(), v["retain_for_s"].as_u64().unwrap());
        assert_eq!(RETAIN_KEYS as u64, v["retain_keys"].as_u64().unwrap());
        for (option, bound) in [
            (
                "window",
                GuardConfig::window as fn(GuardConfig, usize) -> GuardConfig,
            ),
            ("counter_window", GuardConfig::counter_window),
            ("shards", GuardConfig::shards),
        ] {
            let get = |c: &GuardConfig| match option {
                "window" => c.window,
                "counter_window" => c.counter_window,
                _ => c.shards,
            };
            assert_eq!(
                get(&bound(GuardConfig::new(), 0)),
                n(option, "min"),
                "{option}"
            );
            assert_eq!(
                get(&bound(GuardConfig::new(), usize::MAX)),
                n(option, "max"),
                "{option}"
            );
        }
        let clamps = v["clamps"].as_array().unwrap();
        assert!(clamps.len() >= 9);
        for c in clamps {
            let given = c["given"].as_u64().unwrap() as usize;
            let cfg = GuardConfig::new();
            let got = match c["option"].as_str().unwrap() {
                "window" => cfg.window(given).window,
                "counter_window" => cfg.counter_window(given).counter_window,
                "shards" => cfg.shards(given).shards,
                other => panic!("sanitizer-defaults.json: unknown option {other}"),
            };
            assert_eq!(got as u64, c["becomes"].as_u64().unwrap(), "{c}");
        }
    }
}
