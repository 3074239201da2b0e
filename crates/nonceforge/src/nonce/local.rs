//! A per-thread handle that takes counter ticks in blocks.
//!
//! A shared atomic counter is written by every call, so two threads fight over
//! its cache line (two threads make fewer increments than one: bench/RESULTS.md,
//! "The measurements behind the code"). A
//! [`LocalNonces`] reserves a block of ticks with one atomic operation and hands
//! them out from plain fields: the hot path writes nothing shared, and threads
//! scale. Ticks left in a block when the handle is dropped are never issued.

use super::{NonceGenerator, layout};
use crate::cipher::LANES;
use crate::clock::{Clock, SystemClock};
use crate::error::Result;
use layout::Bits;

/// Ticks per block: 64-bit counters hold 8192 a millisecond, so their blocks are
/// small, to waste little when a handle is dropped.
const fn block_len(bits: Bits) -> u64 {
    match bits {
        Bits::B64 => 256,
        _ => 1 << 16,
    }
}

/// A per-thread handle on a [`NonceGenerator`]: nonces without a shared write
/// per nonce. `Send` but not `Sync`: one per thread.
///
/// * Counter nonces come from blocks of ticks reserved with one atomic operation.
/// * Encrypted nonces are made 8 at a time (the cipher runs 8 blocks side by side)
///   and handed out one by one.
/// * 96- and 128-bit sortable nonces are strictly increasing **per handle** and
///   carry their millisecond; each handle owns a slot in the high bits of the
///   counter field (slot 0 is the generator's shared sequence), so handles never
///   collide, and nonces of different handles sort by millisecond, then by
///   handle. For one strictly increasing sequence across threads, use
///   [`NonceGenerator::sortable_96`] (one shared word, which threads contend for).
///   A generator hands out 2^24 − 1 slots for 96-bit nonces (2^43 − 1 for 128).
///
/// ```
/// use nonceforge::{MachineId, NonceGenerator};
/// let generator = NonceGenerator::builder(MachineId::new(1)?).build()?;
/// let mut local = generator.local();
/// let a = local.counter_128()?;
/// let b = local.counter_128()?;
/// assert_ne!(a, b);
/// # Ok::<(), nonceforge::Error>(())
/// ```
#[derive(Debug)]
pub struct LocalNonces<C: Clock = SystemClock> {
    generator: NonceGenerator<C>,
    /// Next tick and end of block, per size.
    next: [u64; 3],
    end: [u64; 3],
    /// Encrypted nonces made `LANES` at a time (a block cipher runs several
    /// blocks side by side far faster than one after another), per size, and
    /// how many of them have been handed out.
    encrypted: [[u128; LANES]; 3],
    handed: [usize; 3],
    /// Sortable 96/128: this handle's own sequence, made at its first use.
    sortable: [Option<SortableSequence<C>>; 2],
}

/// Bits of the per-millisecond counter under a sequence's slot.
const SORTABLE_COUNTER_BITS: u32 = 21;

/// A strictly increasing sequence of 96- or 128-bit sortable nonces that owns a
/// slot in the high bits of the counter field: sequences with distinct slots
/// never collide, and each carries the millisecond of every nonce. Per-thread
/// handles make one each; a process that shares a machine id with others (each
/// PostgreSQL backend, say) takes its slot from a shared counter and makes one
/// with [`NonceGenerator::sortable_sequence`].
#[derive(Debug)]
pub struct SortableSequence<C: Clock = SystemClock> {
    generator: NonceGenerator<C>,
    bits: Bits,
    slot: u64,
    ts: u64,
    counter: u64,
    /// Nonces made since they were last added to the generator's count
    /// (once a millisecond, and when the sequence is dropped).
    uncounted: u64,
}

impl<C: Clock> SortableSequence<C> {
    pub(crate) fn new(generator: NonceGenerator<C>, bits: Bits, slot: u64) -> Result<Self> {
        // 64-bit nonces have no room for slots (and 13 − 21 bits would underflow).
        let k = generator.shared().counter_bits(bits);
        let slots = 1u64 << k.saturating_sub(SORTABLE_COUNTER_BITS);
        if bits == Bits::B64 || slot == 0 || slot >= slots {
            return Err(crate::Error::InvalidOption {
                option: "slot",
                value: slot,
                rule: "sortable sequences are 96 or 128 bits, with a slot in 1..2^24 (96; 1..2^17 in the wide layout) or 1..2^43 (128)",
            });
        }
        Ok(SortableSequence {
            generator,
            bits,
            slot,
            ts: 0,
            counter: 0,
            uncounted: 0,
        })
    }

    /// The next nonce of this sequence.
    #[inline]
    pub fn next_value(&mut self) -> Result<u128> {
        let shared = self.generator.shared();
        shared.check_enabled(self.bits)?;
        let now = shared.now_ts()?;
        if now > self.ts {
            (self.ts, self.counter) = (now, 0);
            shared.counts().sequence_issued(self.bits, self.uncounted);
            self.uncounted = 0;
        } else {
            self.counter += 1;
            if self.counter == 1 << SORTABLE_COUNTER_BITS {
                // 2^21 in one millisecond from one sequence: wait for the next.
                if self.ts + 1 >= layout::TIMESTAMP_END {
                    self.counter -= 1;
                    return Err(shared.exhausted());
                }
                shared.wait_until_ts(self.ts + 1)?;
                (self.ts, self.counter) = (self.ts + 1, 0);
            }
        }
        let field = (self.slot << SORTABLE_COUNTER_BITS) | self.counter;
        self.uncounted += 1;
        Ok(shared.compose(self.bits, self.ts, field))
    }

    /// The next nonce of this sequence, as a [`crate::Nonce`].
    pub fn next_nonce(&mut self) -> Result<crate::Nonce> {
        self.next_value()
            .map(|v| crate::Nonce::from_value(self.bits, v))
    }
}

macro_rules! local_sized {
    ($bits:expr, $n:literal, $counter:ident, $encrypted:ident, $sortable:ident) => {
        #[doc = concat!("A ", stringify!($n), "-byte counter nonce.")]
        #[inline]
        pub fn $counter(&mut self) -> Result<[u8; $n]> {
            let t = self.tick($bits)?;
            Ok(layout::to_bytes::<$n>(self.generator.shared().tick_value($bits, t)))
        }

        #[doc = concat!("A ", stringify!($n), "-byte encrypted nonce.")]
        #[inline]
        pub fn $encrypted(&mut self) -> Result<[u8; $n]> {
            self.encrypted_value($bits).map(layout::to_bytes::<$n>)
        }

        #[doc = concat!("A ", stringify!($n), "-byte sortable nonce, strictly increasing per handle.")]
        ///
        /// 96- and 128-bit nonces come from this handle's own state (see
        /// [`LocalNonces`]); 64-bit ones from the generator's shared state.
        #[inline]
        pub fn $sortable(&mut self) -> Result<[u8; $n]> {
            self.sortable_value($bits).map(layout::to_bytes::<$n>)
        }
    };
}

impl<C: Clock> LocalNonces<C> {
    pub(crate) fn new(generator: NonceGenerator<C>) -> Self {
        LocalNonces {
            generator,
            next: [0; 3],
            end: [0; 3],
            encrypted: [[0; LANES]; 3],
            handed: [LANES; 3],
            sortable: [None, None],
        }
    }

    /// The generator this handle draws from.
    pub fn generator(&self) -> &NonceGenerator<C> {
        &self.generator
    }

    #[inline(always)]
    fn tick(&mut self, bits: Bits) -> Result<u64> {
        let i = bits as usize;
        if self.next[i] == self.end[i] {
            self.refill(bits)?;
        } else {
            self.generator.shared().check_enabled(bits)?;
        }
        let t = self.next[i];
        self.next[i] += 1;
        Ok(t)
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self, bits: Bits) -> Result<()> {
        let n = block_len(bits);
        let first = self.generator.shared().reserve(bits, n)?;
        self.next[bits as usize] = first;
        self.end[bits as usize] = first + n;
        Ok(())
    }

    local_sized!(Bits::B64, 8, counter_64, encrypted_64, sortable_64);
    local_sized!(Bits::B96, 12, counter_96, encrypted_96, sortable_96);
    local_sized!(Bits::B128, 16, counter_128, encrypted_128, sortable_128);

    #[inline(always)]
    fn encrypted_value(&mut self, bits: Bits) -> Result<u128> {
        let i = bits as usize;
        if self.handed[i] == LANES {
            self.refill_encrypted(bits)?;
        } else {
            self.generator.shared().check_enabled(bits)?;
        }
        let v = self.encrypted[i][self.handed[i]];
        self.handed[i] += 1;
        Ok(v)
    }

    #[cold]
    #[inline(never)]
    fn refill_encrypted(&mut self, bits: Bits) -> Result<()> {
        self.generator.shared().ciphers()?;
        let mut values = [0u128; LANES];
        for v in &mut values {
            let t = self.tick(bits)?;
            *v = self.generator.shared().tick_value(bits, t);
        }
        self.generator
            .shared()
            .ciphers()?
            .encrypt_lanes(bits, &mut values);
        self.encrypted[bits as usize] = values;
        self.handed[bits as usize] = 0;
        Ok(())
    }

    #[inline]
    fn sortable_value(&mut self, bits: Bits) -> Result<u128> {
        let shared = self.generator.shared();
        if bits == Bits::B64 {
            return shared.sortable(bits);
        }
        shared.check_enabled(bits)?;
        let j = bits as usize - 1;
        if self.sortable[j].is_none() {
            let slot = shared.sortable_slot(bits, SORTABLE_COUNTER_BITS)?;
            self.sortable[j] = Some(SortableSequence::new(self.generator.clone(), bits, slot)?);
        }
        self.sortable[j].as_mut().expect("made above").next_value()
    }
}

impl<C: Clock> Drop for SortableSequence<C> {
    fn drop(&mut self) {
        self.generator
            .shared()
            .counts()
            .sequence_issued(self.bits, self.uncounted);
    }
}

impl<C: Clock> Drop for LocalNonces<C> {
    /// The ticks of this handle's blocks that made no nonce, and the
    /// encrypted nonces made ahead and not handed out, leave the
    /// generator's count of issued nonces ([`NonceGenerator::stats`]).
    fn drop(&mut self) {
        let counts = self.generator.shared().counts();
        for b in Bits::ALL {
            let i = b as usize;
            let unused = (self.end[i] - self.next[i]) + (LANES - self.handed[i]) as u64;
            if unused > 0 {
                counts.ticks_unused(b, unused);
            }
        }
    }
}
