//! Nonce generators: counter, sortable and encrypted nonces of 64, 96 and 128 bits.
//!
//! One [`NonceGenerator`] is one member of a cluster: its machine id is unique among
//! the live generators, and every nonce it issues is unique among its own. The
//! layouts are drawn in [`layout`].
//!
//! | kind | unique | ordered | predictable | reads the clock per nonce |
//! |---|---|---|---|---|
//! | counter | yes | no | yes | 64: about once a millisecond; 96/128: no |
//! | sortable | yes | strictly increasing per generator, carries the creation ms | yes | yes (TSC-gated) |
//! | encrypted | yes | no | no (a block cipher over a counter nonce) | as counter |
//!
//! # Rules about time
//!
//! * The wall clock is read once, when the generator is built. After that the
//!   generator measures time on the monotonic clock, so a wall clock stepped
//!   backwards cannot make it repeat itself.
//! * No nonce ever carries a timestamp later than the generator's clock at the
//!   moment it is issued. Counter nonces that would run ahead (64 bits: more than
//!   8192 a millisecond since start) wait, sleeping, until the clock catches up;
//!   idle time is banked, so a burst after a quiet spell runs at full speed.
//! * **Restarts.** Building a generator waits until the wall clock has entered a
//!   new millisecond (at most 1 ms). Since no earlier generator issued a timestamp
//!   past its own clock, a generator that stopped before this one was built on
//!   the same machine id cannot share a timestamp with it — as long as the wall
//!   clock did not step backwards across the restart. Where it may have (a
//!   restart onto another host with a slower clock), persist
//!   [`NonceGenerator::issued_up_to_unix_ms`] and pass it back through
//!   [`NonceGeneratorBuilder::not_before`]: the new generator waits until its
//!   clock is past that floor, or fails with [`Error::ClockBehind`] when that would
//!   take longer than [`NonceGeneratorBuilder::max_wait`].
//! * The 42-bit timestamp ends 2^42 ms (139 years) after the epoch: past it every
//!   call fails with [`Error::EpochExhausted`]; a generator built within a year of
//!   the end logs a warning and reports it through
//!   [`NonceGenerator::epoch_ends_in`].

mod builder;
mod counter;
mod local;
pub mod series;
mod sortable;
mod stats;
mod value;

pub mod layout;

pub use builder::NonceGeneratorBuilder;
pub use local::{LocalNonces, SortableSequence};
pub use stats::{GeneratorStats, Refusals};
pub use value::{Nonce, NonceKind};

use crate::cipher::{Cipher64, Cipher128, NonceCiphers};
use crate::clock::{Clock, SystemClock, Ticker};
use crate::error::{Error, Result};
use crate::machine::MachineId;
use crossbeam_utils::CachePadded;
use layout::{Bits, DEFAULT_EPOCH_UNIX_MS, Layout, NonceParts, TIMESTAMP_END};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;
use zeroize::Zeroizing;

/// A year, for the end-of-epoch warning.
const YEAR_MS: u64 = 365 * 24 * 3600 * 1000 + 6 * 3600 * 1000;

/// [`Shared::stopped`]: [`NonceGenerator::disable`] was called.
const STOPPED_BY_USER: u8 = 1;
/// [`Shared::stopped`]: the clock was found past the deadline.
const STOPPED_PAST_DEADLINE: u8 = 2;
/// [`Shared::stopped`], for 64-bit nonces only and never cleared: the wide
/// layout has none. (One flag beside the others, so that checking it costs
/// a 64-bit call nothing more than the check it makes anyway.)
const NO_64: u8 = 4;

/// The initial value of a shared sortable word ([`NonceGenerator::sortable_shared`])
/// created at `now_unix_ms`: the next millisecond, counter 0.
pub const fn shared_sortable_word(bits: Bits, now_unix_ms: u64) -> u64 {
    (now_unix_ms + 1) << sortable::state_counter_bits(bits)
}

/// The state every handle on one generator shares.
#[derive(Debug)]
pub(crate) struct Shared<C: Clock> {
    /// The highest timestamp (ms since the epoch) known to have begun.
    verified_ts: CachePadded<AtomicU64>,
    /// Counter ticks per size; each is written by every counter call of that size.
    counters: [CachePadded<AtomicU64>; 3],
    /// Sortable state per size: `timestamp << k | counter`.
    sortables: [CachePadded<AtomicU64>; 3],
    /// The next sortable slot for a per-thread handle (0 is the shared sequence).
    sortable_slots: AtomicU64,
    /// Why the generator does not issue: [`STOPPED_BY_USER`], [`STOPPED_PAST_DEADLINE`]
    /// (0: it issues); [`NO_64`] for 64-bit nonces in the wide layout.
    stopped: AtomicU8,
    /// The last millisecond (since 1970, on this generator's clock) whose
    /// timestamps it may issue: a machine-id lease's deadline, or `u64::MAX`.
    valid_until_unix_ms: AtomicU64,
    pub(crate) machine_id: MachineId,
    pub(crate) layout: Layout,
    /// Per size, the machine id in place: in the low 64 bits of a 64- or
    /// 96-bit nonce, in the high 64 of a 128-bit one (the layout's shifts,
    /// applied once at build).
    machine_bits: [u64; 3],
    /// Per size, the counter field's width in the layout (13, 45/38, 64).
    counter_k: [u32; 3],
    epoch_unix_ms: u64,
    /// The start time, in ms since the epoch.
    init_ts: u64,
    ticker: Ticker,
    clock: C,
    ciphers: Option<NonceCiphers>,
    /// What [`NonceGenerator::stats`] reports beyond the hot state (written
    /// on slow paths only).
    counts: CachePadded<stats::Counts>,
}

/// A generator of counter, sortable and encrypted nonces.
///
/// Cheap to clone: clones are handles on one generator and share its state.
/// `Send + Sync`, lock-free, and allocation-free per nonce. For the highest rate
/// from a hot loop, take a per-thread [`LocalNonces`] with [`local`](Self::local).
///
/// ```
/// use nonceforge::{MachineId, NonceGenerator};
/// let generator = NonceGenerator::builder(MachineId::new(3)?).key(&[0x42; 32]).build()?;
/// let a: [u8; 12] = generator.counter_96()?;
/// let b: [u8; 16] = generator.sortable_128()?;
/// let c: [u8; 8] = generator.encrypted_64()?;
/// assert_eq!(generator.decompose(&a)?.machine_id, 3);
/// assert_eq!(generator.decompose(&generator.decrypt_64(&c)?)?.machine_id, 3);
/// # let _ = b;
/// # Ok::<(), nonceforge::Error>(())
/// ```
#[derive(Debug)]
pub struct NonceGenerator<C: Clock = SystemClock> {
    shared: Arc<Shared<C>>,
}

impl<C: Clock> Clone for NonceGenerator<C> {
    fn clone(&self) -> Self {
        NonceGenerator {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl NonceGenerator<SystemClock> {
    /// Starts building a generator for `machine_id`.
    pub fn builder(machine_id: MachineId) -> NonceGeneratorBuilder<SystemClock> {
        NonceGeneratorBuilder::new(machine_id)
    }
}

macro_rules! sized_methods {
    ($bits:expr, $n:literal, $counter:ident, $sortable:ident, $encrypted:ident,
     $fill_counter:ident, $fill_encrypted:ident, $decrypt:ident, $enc:ident, $dec:ident, $enc_many:ident) => {
        #[doc = concat!("A ", stringify!($n), "-byte counter nonce.")]
        #[inline]
        pub fn $counter(&self) -> Result<[u8; $n]> {
            self.shared.counter($bits).map(layout::to_bytes::<$n>)
        }

        #[doc = concat!("A ", stringify!($n), "-byte sortable nonce.")]
        #[inline]
        pub fn $sortable(&self) -> Result<[u8; $n]> {
            self.shared.sortable($bits).map(layout::to_bytes::<$n>)
        }

        #[doc = concat!("A ", stringify!($n), "-byte encrypted nonce.")]
        #[inline]
        pub fn $encrypted(&self) -> Result<[u8; $n]> {
            let ciphers = self.shared.ciphers()?;
            let mut block = layout::to_bytes::<$n>(self.shared.counter($bits)?);
            ciphers.$enc(&mut block);
            Ok(block)
        }

        #[doc = concat!("Fills `out` with ", stringify!($n), "-byte counter nonces, reserved with one atomic operation.")]
        pub fn $fill_counter(&self, out: &mut [[u8; $n]]) -> Result<()> {
            self.shared.fill_counter($bits, out)
        }

        #[doc = concat!("Fills `out` with ", stringify!($n), "-byte encrypted nonces, reserved with one atomic operation.")]
        pub fn $fill_encrypted(&self, out: &mut [[u8; $n]]) -> Result<()> {
            let ciphers = self.shared.ciphers()?;
            self.shared.fill_counter($bits, out)?;
            ciphers.$enc_many(out);
            Ok(())
        }

        #[doc = concat!("Decrypts a ", stringify!($n), "-byte encrypted nonce back to the counter nonce it was made from.")]
        pub fn $decrypt(&self, nonce: &[u8; $n]) -> Result<[u8; $n]> {
            let mut block = *nonce;
            self.shared.ciphers()?.$dec(&mut block);
            Ok(block)
        }
    };
}

impl<C: Clock> NonceGenerator<C> {
    sized_methods!(
        Bits::B64,
        8,
        counter_64,
        sortable_64,
        encrypted_64,
        fill_counter_64,
        fill_encrypted_64,
        decrypt_64,
        encrypt64,
        decrypt64,
        encrypt64_many
    );
    sized_methods!(
        Bits::B96,
        12,
        counter_96,
        sortable_96,
        encrypted_96,
        fill_counter_96,
        fill_encrypted_96,
        decrypt_96,
        encrypt96,
        decrypt96,
        encrypt96_many
    );
    sized_methods!(
        Bits::B128,
        16,
        counter_128,
        sortable_128,
        encrypted_128,
        fill_counter_128,
        fill_encrypted_128,
        decrypt_128,
        encrypt128,
        decrypt128,
        encrypt128_many
    );

    /// A nonce of a kind and size chosen at run time.
    pub fn next(&self, kind: NonceKind, bits: Bits) -> Result<Nonce> {
        let value = match kind {
            NonceKind::Counter => self.shared.counter(bits)?,
            NonceKind::Sortable => self.shared.sortable(bits)?,
            NonceKind::Encrypted => {
                let ciphers = self.shared.ciphers()?;
                let plain = self.shared.counter(bits)?;
                encrypt_value(ciphers, bits, plain)
            }
        };
        Ok(Nonce { bits, value })
    }

    /// Fills `out` (a whole number of `bits`-sized nonces, big-endian) with nonces
    /// of a kind and size chosen at run time. On error `out` is left untouched.
    /// Counter and encrypted nonces take one reservation; sortable nonces are made
    /// one by one (into a temporary buffer, which is the only allocation here).
    pub fn fill(&self, kind: NonceKind, bits: Bits, out: &mut [u8]) -> Result<()> {
        let width = bits.bytes();
        if !out.len().is_multiple_of(width) {
            return Err(Error::BufferLength {
                argument: "out",
                len: out.len(),
                width,
            });
        }
        if kind == NonceKind::Encrypted {
            self.shared.ciphers()?;
        }
        match (kind, bits) {
            (NonceKind::Sortable, _) => {
                // One call per nonce, any of which may fail (disabled, end of
                // range): made aside first, so nothing is half-written.
                let values = (0..out.len() / width)
                    .map(|_| self.shared.sortable(bits))
                    .collect::<Result<Vec<u128>>>()?;
                for (chunk, v) in out.chunks_exact_mut(width).zip(values) {
                    chunk.copy_from_slice(&v.to_be_bytes()[16 - width..]);
                }
                Ok(())
            }
            (NonceKind::Counter, Bits::B64) => self.fill_counter_64(out.as_chunks_mut().0),
            (NonceKind::Counter, Bits::B96) => self.fill_counter_96(out.as_chunks_mut().0),
            (NonceKind::Counter, Bits::B128) => self.fill_counter_128(out.as_chunks_mut().0),
            (NonceKind::Encrypted, Bits::B64) => self.fill_encrypted_64(out.as_chunks_mut().0),
            (NonceKind::Encrypted, Bits::B96) => self.fill_encrypted_96(out.as_chunks_mut().0),
            (NonceKind::Encrypted, Bits::B128) => self.fill_encrypted_128(out.as_chunks_mut().0),
        }
    }

    /// Encrypts a plain nonce of any size (8, 12 or 16 bytes) with this
    /// generator's ciphers, as its encrypted nonces are made: for an encrypted
    /// nonce over a sortable one, or to check a stored nonce.
    /// [`decrypt`](Self::decrypt) undoes it.
    pub fn encrypt(&self, nonce: &[u8]) -> Result<Nonce> {
        let (bits, value) = layout::value_from_bytes("nonce", nonce)?;
        self.shared.layout.check(bits)?;
        let ciphers = self.shared.ciphers()?;
        Ok(Nonce {
            bits,
            value: encrypt_value(ciphers, bits, value),
        })
    }

    /// Decrypts an encrypted nonce of any size (8, 12 or 16 bytes).
    pub fn decrypt(&self, nonce: &[u8]) -> Result<Nonce> {
        let (bits, value) = layout::value_from_bytes("nonce", nonce)?;
        self.shared.layout.check(bits)?;
        let ciphers = self.shared.ciphers()?;
        let value = match bits {
            Bits::B64 => {
                let mut b = layout::to_bytes::<8>(value);
                ciphers.decrypt64(&mut b);
                u64::from_be_bytes(b) as u128
            }
            Bits::B96 => {
                let mut b = layout::to_bytes::<12>(value);
                ciphers.decrypt96(&mut b);
                layout::value_from_bytes("nonce", &b)?.1
            }
            Bits::B128 => {
                let mut b = value.to_be_bytes();
                ciphers.decrypt128(&mut b);
                u128::from_be_bytes(b)
            }
        };
        Ok(Nonce { bits, value })
    }

    /// The (timestamp, machine id, counter) of a plain nonce (8, 12 or 16 bytes).
    /// For an encrypted nonce, [`decrypt`](Self::decrypt) it first.
    pub fn decompose(&self, nonce: &[u8]) -> Result<NonceParts> {
        self.shared
            .layout
            .decompose(nonce, self.shared.epoch_unix_ms)
    }

    /// The counter or encrypted nonce of `tick`, a tick reserved outside this
    /// generator (for example from a database sequence shared by every process
    /// that uses this machine id, all built with the same
    /// [`start_unix_ms`](NonceGeneratorBuilder::start_unix_ms)). The tick's
    /// timestamp may not pass the clock: a 64-bit tick too far ahead waits, as
    /// [`counter_64`](Self::counter_64) does.
    pub fn nonce_at_tick(&self, kind: NonceKind, bits: Bits, tick: u64) -> Result<Nonce> {
        let ciphers = match kind {
            NonceKind::Counter => None,
            NonceKind::Encrypted => Some(self.shared.ciphers()?),
            NonceKind::Sortable => {
                return Err(Error::InvalidOption {
                    option: "kind",
                    value: 1,
                    rule: "ticks make counter and encrypted nonces; sortable nonces come from sortable_sequence()",
                });
            }
        };
        self.shared.check_enabled(bits)?;
        self.shared.admit(bits, tick)?;
        let plain = self.shared.tick_value(bits, tick);
        let value = match ciphers {
            Some(c) => encrypt_value(c, bits, plain),
            None => plain,
        };
        Ok(Nonce { bits, value })
    }

    /// A sortable nonce whose sequence lives in `word`, outside the generator:
    /// `word` holds `unix_ms << k | counter` (k = 13 for 64 bits, 21 for 96 and
    /// 128), so generators in several processes can share one sequence through
    /// shared memory (PostgreSQL backends do). Every generator that uses a word
    /// must use it for one size only. Nonces from one word strictly increase, in
    /// the order the word is taken; generators of different machine ids may share
    /// a word (they share its 8,192 or 2,097,152 nonces a millisecond).
    ///
    /// Start a fresh word at [`shared_sortable_word`] of the current time: a
    /// word that starts in the next millisecond never repeats a nonce made from
    /// an earlier word that was lost (a restarted server), unless the wall clock
    /// went back between the two.
    ///
    /// ```
    /// use nonceforge::{Bits, MachineId, NonceGenerator, shared_sortable_word};
    /// use std::sync::atomic::AtomicU64;
    /// # fn main() -> nonceforge::Result<()> {
    /// let word = AtomicU64::new(shared_sortable_word(Bits::B64, 1_750_000_000_000));
    /// let (a, b) = (
    ///     NonceGenerator::builder(MachineId::new(1)?).build()?,
    ///     NonceGenerator::builder(MachineId::new(1)?).build()?,
    /// );
    /// let x = a.sortable_shared(Bits::B64, &word)?;
    /// let y = b.sortable_shared(Bits::B64, &word)?;
    /// assert!(x.to_u128() < y.to_u128());
    /// # Ok(()) }
    /// ```
    pub fn sortable_shared(&self, bits: Bits, word: &AtomicU64) -> Result<Nonce> {
        let value = self
            .shared
            .sortable_on(bits, word, self.shared.epoch_unix_ms)?;
        Ok(Nonce { bits, value })
    }

    /// A sortable sequence (96 or 128 bits) in `slot` (1.. ; slots must be
    /// unique among the sequences of this machine id, e.g. from a shared counter).
    pub fn sortable_sequence(&self, bits: Bits, slot: u64) -> Result<SortableSequence<C>> {
        SortableSequence::new(self.clone(), bits, slot)
    }

    /// A per-thread handle that reserves counters in blocks: no shared cache line
    /// is written per nonce, so threads scale.
    pub fn local(&self) -> LocalNonces<C> {
        LocalNonces::new(self.clone())
    }

    /// This generator's machine id.
    pub fn machine_id(&self) -> MachineId {
        self.shared.machine_id
    }

    /// This generator's layout.
    pub fn layout(&self) -> Layout {
        self.shared.layout
    }

    /// This generator's epoch, in ms since 1970 (for an epoch before 1970, see
    /// [`epoch_unix_ms_signed`](Self::epoch_unix_ms_signed)).
    pub fn epoch_unix_ms(&self) -> u64 {
        self.shared.epoch_unix_ms
    }

    /// This generator's epoch, in signed ms since 1970.
    pub fn epoch_unix_ms_signed(&self) -> i64 {
        self.shared.epoch_unix_ms as i64
    }

    /// The millisecond (since 1970) the generator started in.
    pub fn started_unix_ms(&self) -> u64 {
        self.shared.init_ts.wrapping_add(self.shared.epoch_unix_ms)
    }

    /// An upper bound, in ms since 1970, on every timestamp this generator has
    /// issued so far (its clock now). Persist it and hand it to the next holder of
    /// this machine id through [`NonceGeneratorBuilder::not_before`].
    pub fn issued_up_to_unix_ms(&self) -> u64 {
        self.shared.ticker.now_ms(&self.shared.clock)
    }

    /// How long until the 42-bit timestamp range ends, if that is within a year.
    pub fn epoch_ends_in(&self) -> Option<Duration> {
        let left = self
            .shared
            .end_unix_ms()
            .saturating_sub(self.issued_up_to_unix_ms());
        (left <= YEAR_MS).then(|| Duration::from_millis(left))
    }

    /// Stops issuing: every call returns [`Error::Disabled`] until [`enable`](Self::enable).
    pub fn disable(&self) {
        self.shared
            .stopped
            .fetch_or(STOPPED_BY_USER, Ordering::SeqCst);
    }

    /// Resumes issuing after [`disable`](Self::disable). A generator stopped by its
    /// deadline ([`set_valid_until`](Self::set_valid_until)) stays stopped.
    pub fn enable(&self) {
        self.shared
            .stopped
            .fetch_and(!STOPPED_BY_USER, Ordering::SeqCst);
    }

    /// Whether the generator issues nonces (neither disabled nor past its deadline).
    pub fn is_enabled(&self) -> bool {
        self.shared.stopped.load(Ordering::Relaxed) & !NO_64 == 0
    }

    /// Sets a deadline: the generator issues no nonce whose timestamp is later than
    /// `unix_ms` (ms since 1970, on this generator's own clock), and stops — every
    /// call returns [`Error::Disabled`] — the first time it finds its clock past
    /// it. `None` removes the deadline. Setting a deadline later than the clock
    /// resumes a generator that its previous deadline had stopped.
    ///
    /// This is how a machine-id lease (the `nonceforge-lease` crate) holds a
    /// generator: each renewal moves the deadline, and a process paused past it
    /// issues nothing when it wakes. The deadline costs nothing per nonce: it is
    /// checked where the generator reads its clock anyway (each sortable nonce,
    /// each new millisecond of 64-bit counters, each block a [`LocalNonces`]
    /// reserves, each [`fill`](Self::fill)); between those, call
    /// [`check_deadline`](Self::check_deadline) from a timer (the lease does).
    ///
    /// ```
    /// use nonceforge::{Error, ManualClock, MachineId, NonceGenerator};
    /// use std::time::Duration;
    /// let clock = ManualClock::at_unix_ms(1_800_000_000_000);
    /// let generator = NonceGenerator::builder(MachineId::new(1)?).clock(clock.clone()).build()?;
    /// generator.set_valid_until(Some(generator.issued_up_to_unix_ms() + 1000));
    /// assert!(generator.sortable_96().is_ok());
    /// clock.advance(Duration::from_secs(2));
    /// assert!(matches!(generator.sortable_96(), Err(Error::Disabled)));
    /// assert!(matches!(generator.counter_96(), Err(Error::Disabled)));
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn set_valid_until(&self, unix_ms: Option<u64>) {
        let shared = &self.shared;
        let until = unix_ms.unwrap_or(u64::MAX);
        shared.valid_until_unix_ms.store(until, Ordering::SeqCst);
        if shared.ticker.now_ms(&shared.clock) <= until {
            shared
                .stopped
                .fetch_and(!STOPPED_PAST_DEADLINE, Ordering::SeqCst);
        } else {
            shared
                .stopped
                .fetch_or(STOPPED_PAST_DEADLINE, Ordering::SeqCst);
        }
    }

    /// The deadline set by [`set_valid_until`](Self::set_valid_until), if any.
    pub fn valid_until(&self) -> Option<u64> {
        let until = self.shared.valid_until_unix_ms.load(Ordering::SeqCst);
        (until != u64::MAX).then_some(until)
    }

    /// Reads the clock and stops the generator if it is past its deadline;
    /// returns whether the generator issues nonces.
    pub fn check_deadline(&self) -> bool {
        let _ = self.shared.now_ts();
        self.is_enabled()
    }

    /// Whether the generator has a base key (encrypted nonces work).
    pub fn has_key(&self) -> bool {
        self.shared.ciphers.is_some()
    }

    pub(crate) fn shared(&self) -> &Shared<C> {
        &self.shared
    }
}

fn encrypt_value(ciphers: &NonceCiphers, bits: Bits, plain: u128) -> u128 {
    match bits {
        Bits::B64 => {
            let mut b = layout::to_bytes::<8>(plain);
            ciphers.encrypt64(&mut b);
            u64::from_be_bytes(b) as u128
        }
        Bits::B96 => {
            let mut b = layout::to_bytes::<12>(plain);
            ciphers.encrypt96(&mut b);
            let mut w = [0u8; 16];
            w[4..].copy_from_slice(&b);
            u128::from_be_bytes(w)
        }
        Bits::B128 => {
            let mut b = plain.to_be_bytes();
            ciphers.encrypt128(&mut b);
            u128::from_be_bytes(b)
        }
    }
}

impl<C: Clock> Shared<C> {
    /// The nonce value of (timestamp, counter) in this generator's layout
    /// ([`Layout::compose`]'s), from the fields the build put in place: no
    /// branch on the layout (one made 96-bit counter nonces 1.6 to 2.4 times
    /// slower), the shifts constant per size but the counter's width.
    #[inline(always)]
    pub(crate) fn compose(&self, bits: Bits, timestamp_ms: u64, counter: u64) -> u128 {
        let ts = timestamp_ms & (TIMESTAMP_END - 1);
        match bits {
            Bits::B128 => (((ts << 22) | self.machine_bits[2]) as u128) << 64 | counter as u128,
            _ => {
                let i = bits as usize;
                let c = counter & ((1u64 << self.counter_k[i]) - 1);
                ((ts as u128) << (bits.bits() - layout::TIMESTAMP_BITS))
                    | (self.machine_bits[i] | c) as u128
            }
        }
    }

    /// The counter field's width at `bits` in this generator's layout.
    #[inline(always)]
    pub(crate) fn counter_bits(&self, bits: Bits) -> u32 {
        self.counter_k[bits as usize]
    }

    /// Fails unless the generator issues nonces of `bits` (a constant at
    /// every hot call site, so the mask is too).
    #[inline(always)]
    pub(crate) fn check_enabled(&self, bits: Bits) -> Result<()> {
        let mask = if matches!(bits, Bits::B64) {
            u8::MAX
        } else {
            !NO_64
        };
        if self.stopped.load(Ordering::Relaxed) & mask == 0 {
            Ok(())
        } else {
            Err(self.refuse_stopped(bits))
        }
    }

    #[inline]
    pub(crate) fn ciphers(&self) -> Result<&NonceCiphers> {
        match &self.ciphers {
            Some(c) => Ok(c),
            None => Err(self.refuse(stats::Refusal::NoKey, Error::NoKey)),
        }
    }

    /// The clock now, in ms since the epoch; fails past the end of the range,
    /// and stops the generator past its deadline.
    #[inline]
    pub(crate) fn now_ts(&self) -> Result<u64> {
        let now = self.ticker.now_ms(&self.clock);
        if now > self.valid_until_unix_ms.load(Ordering::Relaxed) {
            return Err(self.past_deadline());
        }
        // `now` is never below the start (monotonic), so this cannot underflow
        // (wrapping: the epoch may be a negative number in two's complement).
        let ts = now.wrapping_sub(self.epoch_unix_ms);
        if ts >= TIMESTAMP_END {
            return Err(self.exhausted());
        }
        Ok(ts)
    }

    /// Stops the generator: its clock has passed its deadline.
    #[cold]
    fn past_deadline(&self) -> Error {
        self.stopped
            .fetch_or(STOPPED_PAST_DEADLINE, Ordering::SeqCst);
        self.refuse(stats::Refusal::Deadline, Error::Disabled)
    }

    /// With a deadline set, reads the clock (once per block of ticks: cheap).
    #[inline]
    pub(crate) fn check_deadline(&self) -> Result<()> {
        if self.valid_until_unix_ms.load(Ordering::Relaxed) != u64::MAX {
            self.now_ts()?;
        }
        Ok(())
    }

    /// Where the 42-bit timestamp range of the epoch ends, in ms since 1970
    /// (0 when it ended before 1970).
    pub(crate) fn end_unix_ms(&self) -> u64 {
        (self.epoch_unix_ms as i64)
            .saturating_add(TIMESTAMP_END as i64)
            .max(0) as u64
    }

    #[cold]
    pub(crate) fn exhausted(&self) -> Error {
        let error = Error::EpochExhausted {
            epoch_unix_ms: self.epoch_unix_ms,
            end_unix_ms: self.end_unix_ms(),
        };
        self.refuse(stats::Refusal::EpochExhausted, error)
    }

    /// A fresh slot for a handle's sortable nonces of `bits`, whose counter field
    /// keeps `low` bits below the slot.
    pub(crate) fn sortable_slot(&self, bits: Bits, low: u32) -> Result<u64> {
        let slot = self.sortable_slots.fetch_add(1, Ordering::Relaxed);
        if slot >> (self.counter_bits(bits) - low) != 0 {
            return Err(self.refuse(
                stats::Refusal::CounterExhausted,
                Error::CounterExhausted { bits: bits.bits() },
            ));
        }
        Ok(slot)
    }

    /// Blocks until millisecond `ts` (since the epoch) has begun; fails (and stops
    /// the generator) if `ts` lies past the deadline.
    pub(crate) fn wait_until_ts(&self, ts: u64) -> Result<()> {
        let at = ts.wrapping_add(self.epoch_unix_ms);
        if at > self.valid_until_unix_ms.load(Ordering::Relaxed) {
            return Err(self.past_deadline());
        }
        let started = self.clock.monotonic_ns();
        self.ticker.wait_for(&self.clock, at);
        self.counts
            .throttled(self.clock.monotonic_ns().saturating_sub(started));
        Ok(())
    }
}
