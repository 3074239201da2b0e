//! The process's registry of key states: one state per key and algorithm,
//! shared by every guard made for it, retained a while after the last one
//! goes; keyed by a salted fingerprint of the key, never the key.

use super::stats::GuardStats;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long a key's state is kept after an instance of it was last made, even
/// with no instance left…
pub const RETAIN_FOR: Duration = Duration::from_secs(600);
/// …for this many keys at most (the most recently made ones): a repeat across
/// two instances of one key is caught whether or not the first was dropped (or,
/// in Node and Elixir, collected) before the second was made, within these
/// bounds — not only while the garbage collector happens to keep it.
pub const RETAIN_KEYS: usize = 128;

#[derive(Default)]
pub(super) struct Registry {
    /// Every key's state while an instance (or the retention) holds it.
    pub(super) states: HashMap<[u8; 32], Weak<dyn AnyState>>,
    /// States kept alive by the retention, with when their key was last made.
    retained: HashMap<[u8; 32], (Instant, Arc<dyn AnyState>)>,
    /// (when, key) in the order made; an entry whose time is no longer the
    /// key's in `retained` is stale and skipped.
    order: VecDeque<(Instant, [u8; 32])>,
}

impl Registry {
    /// Keeps `state` for `RETAIN_FOR` from `now`, dropping what is past the
    /// bounds (amortized O(1)).
    pub(super) fn retain(
        &mut self,
        fingerprint: [u8; 32],
        state: &Arc<dyn AnyState>,
        now: Instant,
    ) {
        self.retained.insert(fingerprint, (now, state.clone()));
        self.order.push_back((now, fingerprint));
        while let Some(&(when, fp)) = self.order.front() {
            let current = self.retained.get(&fp).map(|(t, _)| *t);
            if current != Some(when) {
                self.order.pop_front(); // stale: made again since
                continue;
            }
            if now.duration_since(when) < RETAIN_FOR && self.retained.len() <= RETAIN_KEYS {
                break;
            }
            self.order.pop_front();
            self.retained.remove(&fp);
        }
    }
}

/// A key's state of any nonce size, as the registry holds it.
pub(super) trait AnyState: Send + Sync {
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    fn stats(&self) -> GuardStats;
}

/// The nonce sanitizer across the process ([`registry_stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegistryStats {
    /// Keys whose state is held (by an instance, or by the retention:
    /// [`RETAIN_FOR`], [`RETAIN_KEYS`]).
    pub keys: usize,
    /// Bytes of memory their states hold.
    pub memory_bytes: usize,
    /// Seals checked since the process started, under every key (those
    /// whose state is gone included), as [`GuardStats::seals`] counts them.
    pub seals: u64,
    /// Refusals since the process started, by kind ([`VIOLATION_KINDS`](super::VIOLATION_KINDS)).
    pub refused: [u64; 6],
}

/// What the states dropped so far had counted (so the process's totals never
/// go down when a key's state goes).
static RETIRED_SEALS: AtomicU64 = AtomicU64::new(0);
static RETIRED_REFUSED: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

/// Adds a state's figures to the process's totals as it goes.
pub(super) fn retire(s: &GuardStats) {
    RETIRED_SEALS.fetch_add(s.seals, Ordering::Relaxed);
    for (total, n) in RETIRED_REFUSED.iter().zip(s.refused) {
        total.fetch_add(n, Ordering::Relaxed);
    }
}

/// The nonce sanitizer's figures for the process: keys held, their memory,
/// seals checked and refusals by kind since it started. Reads every key's
/// figures without its locks or bias (as [`NonceGuard::stats`](super::NonceGuard::stats)).
pub fn registry_stats() -> RegistryStats {
    let live: Vec<Arc<dyn AnyState>> = lock(registry())
        .states
        .values()
        .filter_map(Weak::upgrade)
        .collect();
    let mut out = RegistryStats {
        keys: live.len(),
        memory_bytes: 0,
        seals: RETIRED_SEALS.load(Ordering::Relaxed),
        refused: std::array::from_fn(|i| RETIRED_REFUSED[i].load(Ordering::Relaxed)),
    };
    for state in &live {
        let s = state.stats();
        out.memory_bytes += s.memory_bytes;
        out.seals += s.seals;
        for (total, n) in out.refused.iter_mut().zip(s.refused) {
            *total += n;
        }
    }
    out
}

pub(super) fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// A random salt per process: fingerprints are useless outside it.
fn salt() -> &'static [u8; 32] {
    static SALT: OnceLock<[u8; 32]> = OnceLock::new();
    SALT.get_or_init(|| {
        let mut s = [0; 32];
        // Without the OS's randomness a fixed salt still gives per-key state;
        // only unlinkability across processes is lost.
        let _ = getrandom::fill(&mut s);
        s
    })
}

/// HMAC-SHA-256 keyed with the salt and fed the domain string, once: each key
/// clones it (two compressions fewer a key than keying it again).
pub(super) fn salted_mac() -> &'static Hmac<Sha256> {
    static MAC: OnceLock<Hmac<Sha256>> = OnceLock::new();
    MAC.get_or_init(|| {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(salt())
            .expect("HMAC takes a key of any length");
        mac.update(b"nonceforge sanitizer v1\0");
        mac
    })
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic never happens while a guard's lock is held; recover regardless.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
