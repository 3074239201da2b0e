//! The generator's options, checked once when it is built.

use super::*;

/// Builds a [`NonceGenerator`]; see [`NonceGenerator::builder`].
#[derive(Debug)]
pub struct NonceGeneratorBuilder<C: Clock = SystemClock> {
    machine_id: MachineId,
    layout: Layout,
    epoch_unix_ms: u64,
    key: Option<Zeroizing<Vec<u8>>>,
    cipher64: Cipher64,
    cipher128: Cipher128,
    not_before_unix_ms: u64,
    fixed_start: Option<u64>,
    max_wait: Duration,
    clock: C,
}

impl NonceGeneratorBuilder<SystemClock> {
    pub(super) fn new(machine_id: MachineId) -> Self {
        NonceGeneratorBuilder {
            machine_id,
            layout: Layout::Standard,
            epoch_unix_ms: DEFAULT_EPOCH_UNIX_MS,
            key: None,
            cipher64: Cipher64::default(),
            cipher128: Cipher128::default(),
            not_before_unix_ms: 0,
            fixed_start: None,
            max_wait: Duration::from_secs(1),
            clock: SystemClock::new(),
        }
    }
}

impl<C: Clock> NonceGeneratorBuilder<C> {
    /// The layout (default [`Layout::Standard`], NoNoncense's 9-bit machine
    /// id). [`Layout::Wide`] takes machine ids up to 65535 and makes 96- and
    /// 128-bit nonces only (64-bit calls fail with [`Error::WideLayoutNo64`]).
    /// Every member of a cluster must use the same layout.
    ///
    /// ```
    /// # use nonceforge::{Layout, MachineId, NonceGenerator};
    /// let g = NonceGenerator::builder(MachineId::new_in(Layout::Wide, 40_000)?)
    ///     .layout(Layout::Wide)
    ///     .build()?;
    /// let n = g.counter_96()?;
    /// assert_eq!(g.decompose(&n)?.machine_id, 40_000);
    /// assert!(g.counter_64().is_err());
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// The epoch, in milliseconds since 1970 (default 2025-01-01T00:00:00Z).
    /// Every member of a cluster must use the same epoch.
    pub fn epoch_unix_ms(mut self, epoch_unix_ms: u64) -> Self {
        self.epoch_unix_ms = epoch_unix_ms;
        self
    }

    /// The epoch as signed milliseconds since 1970: before 1970 too, as
    /// NoNoncense allows (its 42 bits then run out sooner; [`build`](Self::build)
    /// refuses an epoch whose range has ended).
    ///
    /// ```
    /// # use nonceforge::{MachineId, NonceGenerator};
    /// let g = NonceGenerator::builder(MachineId::new(1)?)
    ///     .epoch_unix_ms_signed(-86_400_000) // 1969-12-31
    ///     .build()?;
    /// assert_eq!(g.epoch_unix_ms_signed(), -86_400_000);
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    pub fn epoch_unix_ms_signed(mut self, epoch_unix_ms: i64) -> Self {
        // Kept as its two's complement: every use of the epoch below adds and
        // subtracts it wrapping, which is exact for the signed value.
        self.epoch_unix_ms = epoch_unix_ms as u64;
        self
    }

    /// The base key for encrypted nonces, at least 32 bytes (checked by
    /// [`build`](Self::build)). It is copied, used to derive one key per cipher and
    /// size with HKDF-SHA256, and wiped. Every member of a cluster must use the
    /// same base key, or encrypted nonces are unique per member only.
    pub fn key(mut self, base_key: &[u8]) -> Self {
        self.key = Some(Zeroizing::new(base_key.to_vec()));
        self
    }

    /// The cipher for 64-bit encrypted nonces (default Speck64/128).
    pub fn cipher64(mut self, cipher: Cipher64) -> Self {
        self.cipher64 = cipher;
        self
    }

    /// The cipher for 128-bit encrypted nonces (default AES-256).
    pub fn cipher128(mut self, cipher: Cipher128) -> Self {
        self.cipher128 = cipher;
        self
    }

    /// A floor: the highest Unix millisecond that an earlier holder of this machine
    /// id may have issued (its [`NonceGenerator::issued_up_to_unix_ms`]). The new
    /// generator starts strictly after it.
    pub fn not_before(mut self, unix_ms: u64) -> Self {
        self.not_before_unix_ms = unix_ms;
        self
    }

    /// A fixed start time (ms since 1970) instead of "the next millisecond".
    ///
    /// For processes that share one machine id and one tick counter kept
    /// elsewhere (a database sequence: see [`NonceGenerator::nonce_at_tick`]):
    /// they must agree on the start, and the shared counter — never the start —
    /// keeps their nonces apart. The start must not lie in the future.
    pub fn start_unix_ms(mut self, unix_ms: u64) -> Self {
        self.fixed_start = Some(unix_ms);
        self
    }

    /// The longest [`build`](Self::build) will wait for the clock to pass the
    /// floor set by [`not_before`](Self::not_before) (default 1 s).
    pub fn max_wait(mut self, max_wait: Duration) -> Self {
        self.max_wait = max_wait;
        self
    }

    /// Another time source (a [`crate::ManualClock`] in tests).
    pub fn clock<D: Clock>(self, clock: D) -> NonceGeneratorBuilder<D> {
        NonceGeneratorBuilder {
            machine_id: self.machine_id,
            layout: self.layout,
            epoch_unix_ms: self.epoch_unix_ms,
            key: self.key,
            cipher64: self.cipher64,
            cipher128: self.cipher128,
            not_before_unix_ms: self.not_before_unix_ms,
            fixed_start: self.fixed_start,
            max_wait: self.max_wait,
            clock,
        }
    }

    /// Checks the settings, waits for a fresh millisecond (and past the floor),
    /// and returns the generator.
    pub fn build(self) -> Result<NonceGenerator<C>> {
        if self.machine_id.get() > self.layout.max_machine_id() {
            return Err(Error::MachineIdNeedsWide {
                value: self.machine_id.get() as u64,
            });
        }
        let ciphers = match &self.key {
            Some(k) => Some(NonceCiphers::new(k, self.cipher64, self.cipher128)?),
            None => None,
        };
        let clock = self.clock;
        let ticker = Ticker::new(&clock);
        let epoch = self.epoch_unix_ms;
        // Signed: the epoch may lie before 1970 (epoch_unix_ms_signed).
        let end_signed = (epoch as i64).saturating_add(TIMESTAMP_END as i64);
        let end_unix_ms = end_signed.max(0) as u64;
        let start = ticker.now_ms(&clock);
        // Start strictly after the wall millisecond in which we were built, and
        // strictly after the floor.
        let floor = start.max(self.not_before_unix_ms);
        if floor > start && floor - start > self.max_wait.as_millis() as u64 {
            return Err(Error::ClockBehind {
                now_unix_ms: start,
                floor_unix_ms: floor,
                behind_ms: floor - start,
                max_wait_ms: self.max_wait.as_millis() as u64,
            });
        }
        let now = match self.fixed_start {
            Some(start) => {
                let now = ticker.now_ms(&clock);
                if start > now {
                    return Err(Error::ClockBehind {
                        now_unix_ms: now,
                        floor_unix_ms: start,
                        behind_ms: start - now,
                        max_wait_ms: 0,
                    });
                }
                start
            }
            None => {
                ticker.wait_for(&clock, floor + 1);
                ticker.now_ms(&clock)
            }
        };
        if (now as i64) < epoch as i64 {
            return Err(Error::ClockBeforeEpoch {
                now_unix_ms: now,
                epoch_unix_ms: epoch,
            });
        }
        if now as i64 >= end_signed {
            return Err(Error::EpochExhausted {
                epoch_unix_ms: epoch,
                end_unix_ms,
            });
        }
        let init_ts = now.wrapping_sub(epoch);
        if end_unix_ms - now <= YEAR_MS {
            log::warn!(
                "nonceforge: the 42-bit timestamp range of epoch {} ends in {} days (at {end_unix_ms} ms since 1970): pick a later epoch",
                epoch as i64,
                (end_unix_ms - now) / (24 * 3600 * 1000)
            );
        }
        let shared = Shared {
            verified_ts: CachePadded::new(AtomicU64::new(init_ts)),
            counters: Default::default(),
            sortables: Bits::ALL.map(|b| {
                CachePadded::new(AtomicU64::new(init_ts << sortable::state_counter_bits(b)))
            }),
            sortable_slots: AtomicU64::new(1),
            stopped: AtomicU8::new(match self.layout {
                Layout::Standard => 0,
                Layout::Wide => NO_64,
            }),
            valid_until_unix_ms: AtomicU64::new(u64::MAX),
            machine_id: self.machine_id,
            layout: self.layout,
            machine_bits: Bits::ALL.map(|b| {
                let shift = self.layout.machine_shift(b);
                (u64::from(self.machine_id.get())) << (shift % 64)
            }),
            counter_k: Bits::ALL.map(|b| self.layout.counter_bits(b)),
            epoch_unix_ms: epoch,
            init_ts,
            ticker,
            clock,
            ciphers,
            counts: Default::default(),
        };
        Ok(NonceGenerator {
            shared: Arc::new(shared),
        })
    }
}
