//! `NonceGuard`, the detector: per-key state shared through a process-wide
//! registry, independent of any cipher. Adapters call [`NonceGuard::begin_seal`]
//! before encrypting and [`NonceGuard::finish_seal`] with the tag after.

use super::bias::Bias;
use super::bloom::Bloom;
use super::counter::{COUNTER_LIMIT, CounterSeen, CounterTrack};
use super::registry::{AnyState, lock, registry, salted_mac};
use super::spin::SpinLock;
use super::stats::GuardStats;
use super::window::{Place as WindowPlace, Seen, Window};
use super::{DEFAULT_MAX_SEALS, GuardConfig, NonceMode, Policy, Tag, Violation, ViolationKind};
use crate::error::{Error, Result};
use crossbeam_utils::CachePadded;
use hmac::Mac;
use std::any::Any;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;
use subtle::ConstantTimeEq;

/// Seals a shard takes from the key's budget at a time, so the budget's atomic
/// is touched once per this many seals, not once per seal — for limits of
/// 2^24 and more (the default is 2^32), where a key may then be refused up to
/// 256 × shards seals early (never late). Smaller limits are kept exactly.
const BUDGET_CHUNK: u64 = 256;

impl<const N: usize> AnyState for KeyState<N> {
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
    fn stats(&self) -> GuardStats {
        KeyState::stats(self)
    }
}

impl<const N: usize> Drop for KeyState<N> {
    fn drop(&mut self) {
        super::registry::retire(&KeyState::stats(self));
    }
}

/// The shard for hash `h` among `n`: the top 32 bits scaled to 0..n (a
/// multiply, not a division: a 64-bit division cost more than the rest of
/// the window lookup here).
#[inline]
fn shard_of(h: u64, n: usize) -> usize {
    (((h >> 32) * n as u64) >> 32) as usize
}

#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let r = a as u128 * b as u128;
    (r as u64) ^ ((r >> 64) as u64)
}

struct Shard<const N: usize> {
    window: Window<N>,
    /// Seals left in this shard's share of the key's budget.
    budget: u64,
}

type Shards<T> = Box<[CachePadded<SpinLock<T>>]>;

struct KeyState<const N: usize> {
    algorithm: &'static str,
    key_id: u32,
    mode: NonceMode,
    allow_identical: bool,
    first: OnceLock<[u8; N]>,
    counter: Option<CounterTrack>,
    counter_max: u64,
    /// New nonces may skip begin/finish: no tags kept, no bytes counted, no
    /// Bloom filter.
    fast: bool,
    bias: Bias,
    shards: Shards<Shard<N>>,
    seeds: [u64; 2],
    seals_left: AtomicU64,
    max_seals: u64,
    budget_chunk: u64,
    bytes: Option<(AtomicU64, u64)>,
    bloom: Option<Bloom>,
    open: Option<(Shards<Window<N>>, RandomState)>,
    /// Refusals by kind ([`ViolationKind`]'s order), counted as they are made.
    refused: [AtomicU64; 6],
    /// Bytes the windows hold (seal and open side): their size when made,
    /// plus each doubling — read without their locks ([`NonceGuard::stats`]).
    window_bytes: AtomicUsize,
}

/// Where a seal that is going ahead was recorded.
#[derive(Debug, Clone, Copy)]
enum Place {
    Counter(u64),
    Window {
        shard: u16,
        at: WindowPlace,
    },
    /// A repeat of a nonce whose first message had this tag.
    Repeat(Tag),
}

/// A seal the guard let through; hand it back with the tag
/// ([`NonceGuard::finish_seal`]) or, if the seal failed before any output,
/// withdraw it ([`NonceGuard::cancel_seal`]).
#[derive(Debug)]
#[must_use = "finish_seal or cancel_seal must follow"]
pub struct SealTicket<const N: usize> {
    nonce: [u8; N],
    place: Place,
    len: u64,
}

/// The detector for one key, nonces of `N` bytes. Clones and every other guard
/// made for the same key and algorithm in this process share one state.
pub struct NonceGuard<const N: usize> {
    state: Arc<KeyState<N>>,
    policy: Policy,
}

impl<const N: usize> Clone for NonceGuard<N> {
    fn clone(&self) -> Self {
        NonceGuard {
            state: self.state.clone(),
            policy: self.policy.clone(),
        }
    }
}

impl<const N: usize> std::fmt::Debug for NonceGuard<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NonceGuard")
            .field("algorithm", &self.state.algorithm)
            .field("key_id", &format_args!("#{:08x}", self.state.key_id))
            .field("mode", &self.state.mode)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<const N: usize> NonceGuard<N> {
    /// The guard for `key` under `algorithm` (a name such as "AES-256-GCM": the
    /// same name in two adapters means one algorithm, so their instances share
    /// state). The key is fingerprinted here, once, and not kept.
    ///
    /// ```
    /// use nonceforge::aead::{GuardConfig, NonceGuard, Policy};
    /// let config = GuardConfig::new().policy(Policy::Error);
    /// let a = NonceGuard::<12>::new("AES-256-GCM", &[1; 32], config.clone())?;
    /// let b = NonceGuard::<12>::new("AES-256-GCM", &[1; 32], config)?;
    /// a.check_seal(&[0; 12], 100)?;
    /// assert!(b.check_seal(&[0; 12], 100).is_err()); // one key, one state
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn new(algorithm: &'static str, key: &[u8], config: GuardConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self::new_valid(algorithm, key, config))
    }

    /// As `new`, for a config known to be valid (the defaults).
    pub(crate) fn new_valid(algorithm: &'static str, key: &[u8], config: GuardConfig) -> Self {
        const { assert!(N >= 8 && N <= 24, "nonces of 8 to 24 bytes") };
        let mut mac = salted_mac().clone();
        mac.update(algorithm.as_bytes());
        mac.update(&[0, N as u8]);
        mac.update(key);
        let fingerprint: [u8; 32] = mac.finalize().into_bytes().into();
        let mut reg = lock(registry());
        let now = Instant::now();
        if let Some(any) = reg.states.get(&fingerprint).and_then(Weak::upgrade)
            && let Ok(state) = any.clone().into_any().downcast::<KeyState<N>>()
        {
            reg.retain(fingerprint, &any, now);
            return NonceGuard {
                state,
                policy: config.policy,
            };
        }
        let key_id = u32::from_be_bytes(fingerprint[..4].try_into().expect("4 bytes"));
        // The window's hash keys: fingerprint bits that are shown nowhere (the
        // key id is the first 4 bytes), as secret as the process's salt.
        let word = |i: usize| u64::from_le_bytes(fingerprint[i..i + 8].try_into().expect("8"));
        let seeds = [word(16), word(24) | 1];
        let state = Arc::new(KeyState::<N>::new(algorithm, key_id, seeds, &config));
        let any = state.clone() as Arc<dyn AnyState>;
        if reg.states.len() >= 64 && reg.states.len().is_power_of_two() {
            reg.states.retain(|_, w| w.strong_count() > 0);
        }
        reg.states.insert(fingerprint, Arc::downgrade(&any));
        reg.retain(fingerprint, &any, now);
        NonceGuard {
            state,
            policy: config.policy,
        }
    }

    /// Checks a seal of `len` bytes under `nonce` before it happens. `Ok`: go
    /// ahead, then [`finish_seal`](Self::finish_seal) with the tag. `Err`: do not
    /// seal (and wipe the output); report it with [`refuse`](Self::refuse).
    #[inline]
    pub fn begin_seal(&self, nonce: &[u8; N], len: usize) -> Result<SealTicket<N>, Box<Violation>> {
        let s = &*self.state;
        s.bias.share();
        let len = len as u64;
        if let Some((left, limit)) = &s.bytes
            && left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| l.checked_sub(len))
                .is_err()
        {
            return Err(s.violation(ViolationKind::ByteLimit, nonce, *limit));
        }
        let place = s.place(nonce);
        if place.is_err()
            && let Some((left, _)) = &s.bytes
        {
            left.fetch_add(len, Ordering::Relaxed);
        }
        Ok(SealTicket {
            nonce: *nonce,
            place: place?,
            len,
        })
    }

    /// Completes a seal with its tag: records the tag (when identical messages
    /// are allowed), or, for a nonce sealed before, accepts the seal only if the
    /// tag equals the first message's (the same message).
    #[inline]
    pub fn finish_seal(&self, ticket: SealTicket<N>, tag: &Tag) -> Result<(), Box<Violation>> {
        let s = &*self.state;
        s.bias.share();
        match ticket.place {
            Place::Repeat(first) => {
                if bool::from(first.ct_eq(tag)) {
                    Ok(())
                } else {
                    Err(s.violation(ViolationKind::Reuse, &ticket.nonce, 0))
                }
            }
            _ if !s.allow_identical => Ok(()),
            Place::Counter(x) => {
                s.counter.as_ref().expect("counter place").set_tag(x, tag);
                Ok(())
            }
            Place::Window { shard, at } => {
                s.shards[shard as usize].lock().window.set_tag(at, tag);
                Ok(())
            }
        }
    }

    /// Withdraws a seal that failed before any output: its nonce may be used.
    pub fn cancel_seal(&self, ticket: SealTicket<N>) {
        let s = &*self.state;
        s.bias.share();
        match ticket.place {
            Place::Counter(x) => s.counter.as_ref().expect("counter place").forget(x),
            Place::Window { shard, at } => {
                let mut sh = s.shards[shard as usize].lock();
                sh.window.forget(at);
                sh.budget += 1;
            }
            Place::Repeat(_) => {}
        }
        if let Some((left, _)) = &s.bytes {
            left.fetch_add(ticket.len, Ordering::Relaxed);
        }
    }

    /// The common case in one step: a nonce that is new (the next counter in
    /// order, or a nonce the window has not seen) is recorded and `true` comes
    /// back — seal, and there is nothing to finish. `false` changes nothing:
    /// go through [`begin_seal`](Self::begin_seal) and
    /// [`finish_seal`](Self::finish_seal), which decide every other case. Only
    /// for guards that keep no tags and count no bytes (otherwise always false).
    #[inline(always)]
    pub fn try_fast(&self, nonce: &[u8; N]) -> bool {
        let s = &*self.state;
        if !s.fast {
            return false;
        }
        if let Some(_owned) = s.bias.enter() {
            // The only thread sealing under this key: no locked instruction.
            if let Some(counter) = &s.counter {
                let first = s.first.get_or_init(|| *nonce);
                if let Some(x) = KeyState::counter_value(nonce, first) {
                    return x < s.counter_max && counter.try_fast_owned(x);
                }
            }
            return s.window_fast_owned(nonce);
        }
        s.try_fast_shared(nonce)
    }

    /// `begin_seal` and `finish_seal` in one, for a detector used without tags
    /// (identical messages are then always a violation); reports by policy.
    pub fn check_seal(&self, nonce: &[u8; N], len: usize) -> Result<()> {
        let ticket = self.begin_seal(nonce, len).map_err(|v| self.refuse(v))?;
        match ticket.place {
            Place::Repeat(_) => {
                Err(self.refuse(self.state.violation(ViolationKind::Reuse, nonce, 0)))
            }
            _ => Ok(()),
        }
    }

    /// Checks a successfully opened message's nonce for a replay (when the
    /// config asked for `check_open`; otherwise always fine). A replay is
    /// reported to the callback, if any, and returned as an error, never a
    /// panic: the peer chose the nonce.
    pub fn check_open(&self, nonce: &[u8; N]) -> Result<()> {
        let s = &*self.state;
        let Some((shards, hasher)) = &s.open else {
            return Ok(());
        };
        let h = hasher.hash_one(nonce);
        let shard = &shards[shard_of(h, shards.len())];
        match shard
            .lock()
            .check_and_insert(nonce, h, &|n| hasher.hash_one(n), &s.window_bytes)
        {
            Seen::New(_) => Ok(()),
            Seen::Again { .. } => {
                let v = s.violation(ViolationKind::Replay, nonce, 0);
                if let Policy::Callback(f) = &self.policy {
                    f(&v);
                }
                Err(Error::NonceReuse(v))
            }
        }
    }

    /// Applies the policy to a violation: panics (`Policy::Panic`), or returns
    /// the error after calling the callback, if any.
    pub fn refuse(&self, v: Box<Violation>) -> Error {
        match &self.policy {
            Policy::Panic => panic!("{v}"),
            Policy::Error => {}
            Policy::Callback(f) => f(&v),
        }
        Error::NonceReuse(v)
    }

    /// Whether the open side checks for replays.
    pub fn checks_open(&self) -> bool {
        self.state.open.is_some()
    }

    /// Bytes of memory this key's state holds now (it grows with use, up to
    /// the configured windows).
    pub fn memory_bytes(&self) -> usize {
        self.state.memory_bytes()
    }

    /// What this key's detector has checked and refused, and the memory it
    /// holds — shared by every guard of the key (its clones and other
    /// instances made for it). The hot path writes nothing for it, and reading
    /// it takes no lock: call it from a metrics scrape.
    ///
    /// ```
    /// use nonceforge::aead::{GuardConfig, NonceGuard, Policy};
    /// let g = NonceGuard::<12>::new("AES-256-GCM", &[2; 32], GuardConfig::new().policy(Policy::Error))?;
    /// g.check_seal(&[1; 12], 100)?;
    /// assert!(g.check_seal(&[1; 12], 100).is_err());
    /// let s = g.stats();
    /// assert_eq!(s.refused, [1, 0, 0, 0, 0, 0]); // one reuse caught
    /// assert!(s.seals >= 1 && s.memory_bytes > 0);
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn stats(&self) -> GuardStats {
        self.state.stats()
    }

    /// Whether a thread holds the key's state biased (checks without locked
    /// instructions; bias.rs). For tests and diagnostics.
    pub fn is_biased(&self) -> bool {
        self.state.bias.is_owned()
    }

    /// Whether two guards share one state (one key and algorithm).
    pub fn shares_state_with(&self, other: &NonceGuard<N>) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }

    /// The AEAD's name.
    pub fn algorithm(&self) -> &'static str {
        self.state.algorithm
    }
}

impl<const N: usize> KeyState<N> {
    /// Bytes of memory this state holds now.
    fn memory_bytes(&self) -> usize {
        let s = self;
        s.bias.share();
        let shard = |w: &Window<N>| w.memory_bytes() + size_of::<CachePadded<SpinLock<Shard<N>>>>();
        size_of::<KeyState<N>>()
            + s.counter.as_ref().map_or(0, CounterTrack::memory_bytes)
            + s.shards
                .iter()
                .map(|m| shard(&m.lock().window))
                .sum::<usize>()
            + s.bloom.as_ref().map_or(0, Bloom::memory_bytes)
            + s.open.as_ref().map_or(0, |(sh, _)| {
                sh.iter().map(|m| shard(&m.lock())).sum::<usize>()
            })
    }

    fn new(algorithm: &'static str, key_id: u32, seeds: [u64; 2], c: &GuardConfig) -> Self {
        let counter_max = match c.mode {
            NonceMode::Random => 0,
            _ => c.max_seals.unwrap_or(COUNTER_LIMIT).min(COUNTER_LIMIT),
        };
        let max_seals = c.max_seals.unwrap_or(DEFAULT_MAX_SEALS);
        let window_shards = |n: usize| {
            (0..n)
                .map(|_| CachePadded::new(SpinLock::new(Window::<N>::new(c.window, false))))
                .collect::<Box<[_]>>()
        };
        let state = KeyState {
            algorithm,
            key_id,
            mode: c.mode,
            allow_identical: c.allow_identical,
            first: OnceLock::new(),
            counter: (c.mode != NonceMode::Random).then(|| {
                CounterTrack::new(c.counter_window, c.allow_identical, c.max_bytes.is_some())
            }),
            counter_max,
            fast: !c.allow_identical && c.max_bytes.is_none() && c.bloom.is_none(),
            bias: Bias::new(),
            shards: (0..c.shards)
                .map(|_| {
                    CachePadded::new(SpinLock::new(Shard {
                        window: Window::new(c.window, c.allow_identical),
                        budget: 0,
                    }))
                })
                .collect(),
            seeds,
            seals_left: AtomicU64::new(max_seals),
            max_seals,
            budget_chunk: if max_seals >= 1 << 24 {
                BUDGET_CHUNK
            } else {
                1
            },
            bytes: c.max_bytes.map(|b| (AtomicU64::new(b), b)),
            bloom: c.bloom.map(|(n, p)| Bloom::new(n, p)),
            open: c
                .check_open
                .then(|| (window_shards(c.shards), RandomState::new())),
            refused: Default::default(),
            window_bytes: AtomicUsize::new(0),
        };
        let made: usize = state
            .shards
            .iter()
            .map(|m| m.lock().window.memory_bytes())
            .sum::<usize>()
            + state.open.as_ref().map_or(0, |(sh, _)| {
                sh.iter().map(|m| m.lock().memory_bytes()).sum::<usize>()
            });
        state.window_bytes.store(made, Ordering::Relaxed);
        state
    }

    /// The state's figures without its locks or bias ([`NonceGuard::stats`]).
    fn stats(&self) -> GuardStats {
        // The budget each shard has taken (BUDGET_CHUNK at a time), not what
        // it has spent: that is the owner's to read.
        let window = self.max_seals - self.seals_left.load(Ordering::Relaxed);
        let counted = self.counter.as_ref().map_or(0, CounterTrack::high_water);
        GuardStats {
            seals: window + counted,
            refused: std::array::from_fn(|i| self.refused[i].load(Ordering::Relaxed)),
            memory_bytes: self.memory_bytes_relaxed(),
        }
    }

    /// Bytes of memory this state holds, read without taking its windows'
    /// locks or its bias (so a metrics scrape costs the sealing thread
    /// nothing): the windows' tally, the counter's bitmap and tags, the Bloom
    /// filter. The windows' overflow lists (a few words, rarely) are left out.
    fn memory_bytes_relaxed(&self) -> usize {
        let shard_overhead = size_of::<CachePadded<SpinLock<Shard<N>>>>();
        size_of::<Self>()
            + self.window_bytes.load(Ordering::Relaxed)
            + shard_overhead
                * (self.shards.len() + self.open.as_ref().map_or(0, |(sh, _)| sh.len()))
            + self.counter.as_ref().map_or(0, CounterTrack::memory_bytes)
            + self.bloom.as_ref().map_or(0, Bloom::memory_bytes)
    }

    #[cold]
    fn violation(&self, kind: ViolationKind, nonce: &[u8; N], limit: u64) -> Box<Violation> {
        self.refused[kind as usize].fetch_add(1, Ordering::Relaxed);
        Box::new(Violation::new(
            kind,
            self.algorithm,
            self.key_id,
            nonce,
            limit,
        ))
    }

    /// The nonce as a counter: its XOR with the first nonce, if every byte but
    /// the last 8 is zero and the value leaves room for the state's flag bit.
    #[inline]
    fn counter_value(nonce: &[u8; N], first: &[u8; N]) -> Option<u64> {
        let split = N - 8;
        if nonce[..split] != first[..split] {
            return None;
        }
        let x = u64::from_be_bytes(nonce[split..].try_into().expect("8 bytes"))
            ^ u64::from_be_bytes(first[split..].try_into().expect("8 bytes"));
        (x < COUNTER_LIMIT).then_some(x)
    }

    #[inline]
    fn place(&self, nonce: &[u8; N]) -> Result<Place, Box<Violation>> {
        if let Some(counter) = &self.counter {
            let first = self.first.get_or_init(|| *nonce);
            if let Some(x) = Self::counter_value(nonce, first) {
                if x >= self.counter_max {
                    return Err(self.violation(ViolationKind::SealLimit, nonce, self.counter_max));
                }
                match counter.check_and_insert(x) {
                    CounterSeen::New => return Ok(Place::Counter(x)),
                    CounterSeen::Again { tag } => return self.repeat(nonce, tag),
                    CounterSeen::TooOld if self.mode == NonceMode::Counter => {
                        return Err(self.violation(
                            ViolationKind::CounterTooOld,
                            nonce,
                            counter.width(),
                        ));
                    }
                    CounterSeen::TooOld => {}
                }
            }
        }
        self.window_place(nonce)
    }

    fn repeat(&self, nonce: &[u8; N], tag: Option<Tag>) -> Result<Place, Box<Violation>> {
        match tag {
            Some(t) if self.allow_identical => Ok(Place::Repeat(t)),
            // Not allowed, or the first seal's tag is not recorded yet (it is
            // still being sealed on another thread): refuse.
            _ => Err(self.violation(ViolationKind::Reuse, nonce, 0)),
        }
    }

    /// The nonce's keyed hash. It reads the last 8 bytes as one word and the
    /// bytes before them in words of up to 8: nonces are usually written as a
    /// prefix and a 64-bit counter, and a load that spans two such stores
    /// cannot be forwarded from them (a 12-byte nonce read as bytes 0..8 and
    /// 8..12 tripled the window's cost over the unwrapped seal at 64 B:
    /// bench/RESULTS.md, "The measurements behind the code").
    #[inline]
    fn hash(&self, nonce: &[u8; N]) -> u64 {
        let split = N - 8;
        let mut h = self.seeds[0];
        for chunk in nonce[..split].chunks(8) {
            let mut w = [0; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            h = mix(h ^ u64::from_le_bytes(w), self.seeds[1]);
        }
        let tail = u64::from_le_bytes(nonce[split..].try_into().expect("8 bytes"));
        mix(h ^ tail, self.seeds[1])
    }

    /// `try_fast` for a state that is not (or not only) this thread's: the
    /// locked paths. Out of line, so the biased path stays small.
    #[inline(never)]
    fn try_fast_shared(&self, nonce: &[u8; N]) -> bool {
        self.bias.share();
        if let Some(counter) = &self.counter {
            let first = self.first.get_or_init(|| *nonce);
            if let Some(x) = Self::counter_value(nonce, first) {
                return x < self.counter_max && counter.try_fast(x);
            }
        }
        self.window_fast(nonce)
    }

    /// Records `nonce` in the window and says true if it is new and within the
    /// budget; anything else is left to `window_place`, which finds it again.
    #[inline(always)]
    fn window_fast(&self, nonce: &[u8; N]) -> bool {
        let h = self.hash(nonce);
        let mut shard = self.shards[shard_of(h, self.shards.len())].lock();
        self.insert_if_new(&mut shard, nonce, h)
    }

    /// `window_fast` for the biased owner: the shard without its lock.
    #[inline(always)]
    fn window_fast_owned(&self, nonce: &[u8; N]) -> bool {
        let h = self.hash(nonce);
        // SAFETY: only the biased owner gets here, inside `Bias::enter`; every
        // other thread revokes the bias (waiting until the owner is out) before
        // it touches a shard, and the owner's own locked paths never run at the
        // same time as this, on the same thread.
        let shard = unsafe { self.shards[shard_of(h, self.shards.len())].get_unchecked() };
        self.insert_if_new(shard, nonce, h)
    }

    /// Remembers `nonce` in `shard` if it is new and the shard's budget allows.
    #[inline(always)]
    fn insert_if_new(&self, shard: &mut Shard<N>, nonce: &[u8; N], h: u64) -> bool {
        if shard.budget == 0 {
            return false;
        }
        match shard
            .window
            .check_and_insert(nonce, h, &|n| self.hash(n), &self.window_bytes)
        {
            Seen::New(_) => {
                shard.budget -= 1;
                true
            }
            Seen::Again { .. } => false,
        }
    }

    #[inline(always)]
    fn window_place(&self, nonce: &[u8; N]) -> Result<Place, Box<Violation>> {
        let h = self.hash(nonce);
        let shard_no = shard_of(h, self.shards.len());
        let mut shard = self.shards[shard_no].lock();
        if shard.budget == 0 {
            let took = self
                .seals_left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |l| {
                    l.checked_sub(l.min(self.budget_chunk)).filter(|_| l > 0)
                });
            match took {
                Ok(before) => shard.budget = before.min(self.budget_chunk),
                Err(_) => {
                    return Err(self.violation(ViolationKind::SealLimit, nonce, self.max_seals));
                }
            }
        }
        match shard
            .window
            .check_and_insert(nonce, h, &|n| self.hash(n), &self.window_bytes)
        {
            Seen::New(at) => {
                if let Some(bloom) = &self.bloom
                    && bloom.check_and_insert(h, mix(h ^ self.seeds[1], self.seeds[0] | 1))
                {
                    shard.window.forget(at);
                    return Err(self.violation(ViolationKind::Suspected, nonce, 0));
                }
                shard.budget -= 1;
                Ok(Place::Window {
                    shard: shard_no as u16,
                    at,
                })
            }
            Seen::Again { tag } => {
                drop(shard);
                self.repeat(nonce, tag)
            }
        }
    }
}
