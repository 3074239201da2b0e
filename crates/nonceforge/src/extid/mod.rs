//! External ids: opaque, UUID-shaped ids made from internal sequential ids, and back.
//!
//! Databases want structured, increasing primary keys (B-tree locality); the
//! outside world should see ids that leak nothing — not how many rows there are
//! (the German-tank problem), not their order, nothing for clients to couple to.
//! An [`ExtIdCodec`] turns an internal id — a sequence number, and a random
//! half that is either derived from it under the key (the default) or drawn
//! and stored beside the row (the Plan B post's design) — into a 16-byte
//! external id with a keyed permutation, and back, in about the time of two
//! AES calls (three with the derived half).
//!
//! ```
//! use nonceforge::extid::{ExtIdCodec, Keyring};
//!
//! let ring = Keyring::new(0, &[0x42; 32])?;            // from a secret store, ≥ 32 bytes
//! let users = ExtIdCodec::new(&ring, "user")?;        // feistel-uuid, UUIDv8
//! let id = users.encode_seq(42)?;                     // the random half derived from 42
//! println!("{id}");                                   // e.g. 5f0c1e2a-…-8…
//! let seq = users.decode_seq(&id)?;                   // refuses ids this codec did not make
//! assert_eq!(seq, 42);
//! assert_eq!(users.decode(&id)?.key_version, 0);      // the same check, the whole record
//!
//! // The post's design: a fresh random half per row, stored beside it.
//! let id = users.encode(43, 0x1234_5678_9abc_def)?;
//! assert!(users.decode(&id).is_err());                // not derived: the checked decode refuses
//! let back = users.decode_unverified(&id)?;           // any well-formed id decodes…
//! back.check_issued(1_000)?;                          // …so refuse ids never handed out
//! assert!(back.rand_matches(0x1234_5678_9abc_def));   // and compare with the stored half
//! # Ok::<(), nonceforge::Error>(())
//! ```
//!
//! **The default random half** ([`ExtIdCodec::encode_seq`], and every face's
//! call without one) is `F0(seq)`: AES-128 under a key of its own. A constant
//! random half would make the 2-round network leak (ids of one half share the
//! XOR of their sequence numbers: a shared prefix, row counts, order); a
//! derived one is as fresh as a drawn one for distinct sequence numbers, needs
//! no storage, keeps an id stable, and makes decoding an authenticity check
//! ([`ExtIdCodec::decode_seq`]: a made-up id passes with probability 2^-62).
//! docs/contracts.md, "External ids: the random half", gives the argument.
//!
//! # The constructions
//!
//! | mode | id | input | output | cost |
//! |---|---|---|---|---|
//! | `feistel-uuid` (default) | a valid UUID, version 8 (or 4) | seq < 2^56 (2^60 with the key version out of band), rand < 2^62 | 122 free bits | 2 AES calls (4 with 4 rounds) |
//! | `aes128` | any 16 bytes | seq, rand: 64 bits each | AES-128(seq ‖ rand) | 1 AES call |
//! | `cycle-walk` | 16 bytes, first bit clear | seq < 2^63, rand: 64 bits | AES-128 walked into the half with the top bit clear | 2 AES calls on average |
//!
//! `aes128` and `cycle-walk` are permutations: any decoded value is *some*
//! (seq, rand). `feistel-uuid` with **2 rounds** is not a pseudorandom
//! permutation on its own (Luby–Rackoff needs 3 rounds for adversarially chosen
//! inputs): its ids look random as long as the random halves of distinct ids
//! differ and are unpredictable — derived ones, or fresh uniform ones. The
//! bound, for q ids of one key version: an adversary tells them from random
//! strings with advantage at most about q²/2^57 (a collision in the 56-bit L
//! half, or in the random half) plus AES's — 2^-17 at a million ids, 2^-9 at 16
//! million; with the key version out of band (60-bit L), q²/2^61. Rotate the
//! key well before 2^24 ids per version if that margin matters. **4 rounds**
//! (`.rounds(4)`) make a strong pseudorandom permutation whatever the inputs
//! (a constant random half included), with the same birthday-bounded
//! advantage, about q²/2^56 — not more: the halves are 56 and 62 bits, not 64.
//!
//! # Checks on decode, and what each buys
//!
//! [`ExtIdCodec::decode`] (and `decode_seq`, `decode_batch`) is the checked
//! decode: it refuses any id whose random half is not the derived one. The
//! unverified decode, for ids made with a stored random half, is named for
//! what it is: [`ExtIdCodec::decode_unverified`].
//!
//! Decoding always checks the form: a `feistel-uuid` id must carry its UUID
//! version and variant bits, and a key version the keyring holds; a
//! `cycle-walk` id must have its first bit clear. A permutation decodes anything
//! to *something*, so these catch typos, not forgeries. Against forgeries (or
//! an id of another type, which decodes to an unrelated number):
//!
//! * [`Decoded::check_issued`]`(max_issued)`: the decoded sequence number must
//!   not exceed the highest one handed out. A made-up id passes with probability
//!   (max_issued + 1) / (max_seq + 1): over 2^56 in the default layout — one in
//!   72 billion for a table of a million rows —, 2^60 with the key version out
//!   of band, 2^63 in `cycle-walk`, 2^64 in `aes128` (test
//!   `check_issued_passes_made_up_ids_at_the_stated_rate`).
//! * [`Decoded::rand_matches`]`(stored)`: compare, in constant time, the decoded
//!   random half with the one stored in the row. A made-up id whose sequence
//!   number exists passes with probability 2^-62 (2^-64 in `aes128` and
//!   `cycle-walk`).
//! * [`ExtIdCodec::decode`] (or [`ExtIdCodec::is_derived`]): for ids made
//!   without a random half, the decoded one must be the one derived from the
//!   decoded sequence number (one more AES call, constant-time compare). A
//!   made-up id passes with probability 2^-62 (2^-64 in `aes128` and
//!   `cycle-walk`), nothing stored.
//!
//! Batches: [`ExtIdCodec::encode_seq_batch`] / [`ExtIdCodec::decode_seq_batch`]
//! (no random half stored) and [`ExtIdCodec::encode_batch`] /
//! [`ExtIdCodec::decode_batch`] (with one), equal to the calls one at a time.
//! A self-check on every id made: [`ExtIdCodecBuilder::build_self_checked`].
//!
//! Keys: see [`Keyring`]. An id carries its key version in band (4 bits, in
//! `feistel-uuid`), so ids made before a rotation still decode; for `aes128` and
//! `cycle-walk`, and with `.key_version_in_band(false)`, the caller keeps the
//! version out of band and decodes with [`ExtIdCodec::decode_with_key_version`]
//! (the derived lookup also tries each held version).
//!
//! References: RFC 9562 (UUIDs); FIPS-197 (AES); Black & Rogaway 2002 (cycle
//! walking); Luby & Rackoff 1988 (Feistel networks).

mod aes128;
mod cycle_walk;
mod feistel;
mod keyring;
pub(crate) mod text;

pub use keyring::{Keyring, MAX_KEY_VERSION, check_type_name};
pub use text::TextForm;

use crate::error::{Error, Result};
use aes128::Aes128Key;
use subtle::ConstantTimeEq;

/// A 16-byte external id. `Display` gives the canonical UUID form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ExtId(pub [u8; 16]);

impl std::fmt::Display for ExtId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = [0u8; 36];
        self.write_uuid(&mut out);
        f.write_str(std::str::from_utf8(&out).expect("ASCII"))
    }
}

impl std::fmt::Debug for ExtId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExtId({self})")
    }
}

/// How internal ids become external ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExtIdMode {
    /// A Feistel network with AES-128 rounds whose output is a valid UUID.
    #[default]
    FeistelUuid,
    /// One AES-128 block: a permutation of all 16-byte values.
    Aes128,
    /// AES-128 walked into the blocks whose first bit is clear.
    CycleWalk,
}

impl ExtIdMode {
    /// The mode's name (`feistel-uuid`, `aes128`, `cycle-walk`).
    pub const fn name(self) -> &'static str {
        match self {
            ExtIdMode::FeistelUuid => "feistel-uuid",
            ExtIdMode::Aes128 => "aes128",
            ExtIdMode::CycleWalk => "cycle-walk",
        }
    }
}

impl std::str::FromStr for ExtIdMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "feistel-uuid" => Ok(ExtIdMode::FeistelUuid),
            "aes128" => Ok(ExtIdMode::Aes128),
            "cycle-walk" => Ok(ExtIdMode::CycleWalk),
            _ => Err(Error::UnknownExtIdMode { name: s.to_owned() }),
        }
    }
}

/// An internal id recovered from an external one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Decoded {
    /// The sequence number.
    pub seq: u64,
    /// The random number kept with it.
    pub rand: u64,
    /// The key version the id was made under.
    pub key_version: u8,
}

impl Decoded {
    /// Fails unless `seq <= max_issued`: an id that was never handed out.
    pub fn check_issued(&self, max_issued: u64) -> Result<()> {
        if self.seq > max_issued {
            return Err(Error::NotIssued {
                seq: self.seq,
                max_issued,
            });
        }
        Ok(())
    }

    /// Whether the decoded random half equals the stored one, compared in
    /// constant time (no timing tells a forger how many bits were right).
    pub fn rand_matches(&self, stored: u64) -> bool {
        self.rand.ct_eq(&stored).into()
    }
}

/// The keys of one key version. One set per version and codec, kept inline.
#[allow(clippy::large_enum_variant)]
enum Keys {
    One(Aes128Key),
    Rounds(Vec<Aes128Key>),
}

/// Encodes and decodes the external ids of one type (a table, say).
pub struct ExtIdCodec {
    type_name: String,
    mode: ExtIdMode,
    rounds: u8,
    uuid_version: u8,
    in_band: bool,
    current: u8,
    keys: [Option<Keys>; 16],
    /// The current version's keys again, at an address that does not depend
    /// on the id being decoded.
    current_keys: Keys,
    /// The keys that derive the random half from the sequence number, by
    /// version, and the current one's.
    rand_keys: [Option<Aes128Key>; 16],
    current_rand: Aes128Key,
    /// Tests: flip a bit of each id before the self-check, as faulty hardware would.
    #[cfg(test)]
    pub(crate) inject_fault: bool,
}

impl std::fmt::Debug for ExtIdCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtIdCodec")
            .field("type_name", &self.type_name)
            .field("mode", &self.mode)
            .field("rounds", &self.rounds)
            .field("uuid_version", &self.uuid_version)
            .field("key_version_in_band", &self.in_band)
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

/// Builds an [`ExtIdCodec`] with options; see [`ExtIdCodec::builder`].
#[derive(Debug, Clone)]
pub struct ExtIdCodecBuilder<'k> {
    keyring: &'k Keyring,
    type_name: String,
    mode: ExtIdMode,
    rounds: u8,
    uuid_version: u8,
    in_band: bool,
}

impl ExtIdCodecBuilder<'_> {
    /// The construction (default `feistel-uuid`).
    pub fn mode(mut self, mode: ExtIdMode) -> Self {
        self.mode = mode;
        self
    }
    /// Feistel rounds: 2 (default) or 4.
    pub fn rounds(mut self, rounds: u8) -> Self {
        self.rounds = rounds;
        self
    }
    /// The UUID version `feistel-uuid` ids carry: 8 (default) or 4.
    pub fn uuid_version(mut self, version: u8) -> Self {
        self.uuid_version = version;
        self
    }
    /// Whether `feistel-uuid` ids carry their key version (default true: 4 bits,
    /// leaving 56 bits of sequence number; false: 60 bits, version out of band).
    pub fn key_version_in_band(mut self, in_band: bool) -> Self {
        self.in_band = in_band;
        self
    }

    /// Checks the options and derives the keys of every version in the keyring.
    pub fn build(self) -> Result<ExtIdCodec> {
        self.build_with(Aes128Key::new)
    }

    /// The codec with a self-check on every id it makes ([`SelfCheckedCodec`]):
    /// the keys are derived and expanded twice, the second time into a
    /// separate copy that runs on other code (the `aes` crate's, not the
    /// AES-NI path), so a fault in either copy or either path is caught.
    pub fn build_self_checked(self) -> Result<SelfCheckedCodec> {
        let check = self.clone().build_with(Aes128Key::portable_only)?;
        Ok(SelfCheckedCodec {
            codec: self.build()?,
            check,
        })
    }

    fn build_with(self, new_key: fn(&[u8; 16]) -> Aes128Key) -> Result<ExtIdCodec> {
        check_type_name(&self.type_name)?;
        if !matches!(self.rounds, 2 | 4) {
            return Err(Error::InvalidOption {
                option: "rounds",
                value: self.rounds as u64,
                rule: "a Feistel network here has 2 or 4 rounds",
            });
        }
        if !matches!(self.uuid_version, 4 | 8) {
            return Err(Error::InvalidOption {
                option: "uuid_version",
                value: self.uuid_version as u64,
                rule: "feistel-uuid ids are UUID version 8 or 4",
            });
        }
        let in_band = self.in_band && self.mode == ExtIdMode::FeistelUuid;
        let label = layout_label(self.mode, self.rounds, self.uuid_version, in_band);
        let rand_label = if label == "feistel-uuid" {
            "rand".to_owned() // the default layout's, as in 0.1.0
        } else {
            format!("rand-{label}")
        };
        let derive = |v: u8| -> Result<Keys> {
            Ok(match self.mode {
                ExtIdMode::Aes128 | ExtIdMode::CycleWalk => Keys::One(new_key(
                    &*self.keyring.derive::<16>(&label, &self.type_name, v)?,
                )),
                ExtIdMode::FeistelUuid => {
                    let k = self.keyring.derive::<64>(&label, &self.type_name, v)?;
                    Keys::Rounds(
                        k.chunks_exact(16)
                            .take(self.rounds as usize)
                            .map(|c| new_key(c.try_into().expect("16 bytes")))
                            .collect(),
                    )
                }
            })
        };
        let rand_key = |v: u8| -> Result<Aes128Key> {
            Ok(new_key(&*self.keyring.derive::<16>(
                &rand_label,
                &self.type_name,
                v,
            )?))
        };
        let mut keys: [Option<Keys>; 16] = Default::default();
        let mut rand_keys: [Option<Aes128Key>; 16] = Default::default();
        for v in self.keyring.versions() {
            keys[v as usize] = Some(derive(v)?);
            rand_keys[v as usize] = Some(rand_key(v)?);
        }
        let current_keys = derive(self.keyring.current())?;
        let current_rand = rand_key(self.keyring.current())?;
        Ok(ExtIdCodec {
            type_name: self.type_name,
            mode: self.mode,
            rounds: self.rounds,
            uuid_version: self.uuid_version,
            in_band,
            current: self.keyring.current(),
            keys,
            current_keys,
            rand_keys,
            current_rand,
            #[cfg(test)]
            inject_fault: false,
        })
    }
}

/// The name a layout's keys are derived under (HKDF info
/// `nonceforge/extid/v1/<label>/<type>/<version>`; the derived half's key under
/// `rand-<label>`, or `rand` for the default layout): every setting that
/// changes how an id is read is in it, so no two layouts share a key — an id
/// relabelled to another UUID version, or read by a codec that expects the key
/// version out of band, is an unrelated value, and one row's ids under two
/// layouts are unlinkable. `aes128`, `cycle-walk`; `feistel-uuid` with `-4`
/// for 4 rounds, `-v4` for UUID version 4, `-oob` for the key version out of
/// band, in that order. (docs/contracts.md, "External ids".)
pub(crate) fn layout_label(mode: ExtIdMode, rounds: u8, uuid_version: u8, in_band: bool) -> String {
    let mut label = mode.name().to_owned();
    if mode == ExtIdMode::FeistelUuid {
        if rounds == 4 {
            label.push_str("-4");
        }
        if uuid_version == 4 {
            label.push_str("-v4");
        }
        if !in_band {
            label.push_str("-oob");
        }
    }
    label
}

/// A batch's `out` must be as long as its input.
fn out_len(expected: usize, len: usize) -> Result<()> {
    if expected == len {
        Ok(())
    } else {
        Err(Error::OutputLength {
            argument: "out",
            expected,
            len,
        })
    }
}

/// Ids per batch pass: enough to keep the pipelined AES busy, few enough to stay in L1.
const BATCH: usize = 256;

impl ExtIdCodec {
    /// A `feistel-uuid` codec (2 rounds, UUIDv8, key version in band) for ids of
    /// type `type_name` (1–63 of a-z and _, TypeID's prefix rule).
    pub fn new(keyring: &Keyring, type_name: &str) -> Result<Self> {
        Self::builder(keyring, type_name).build()
    }

    /// A codec with options.
    pub fn builder<'k>(keyring: &'k Keyring, type_name: &str) -> ExtIdCodecBuilder<'k> {
        ExtIdCodecBuilder {
            keyring,
            type_name: type_name.to_owned(),
            mode: ExtIdMode::FeistelUuid,
            rounds: 2,
            uuid_version: 8,
            in_band: true,
        }
    }

    /// The id type this codec is for.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// The construction.
    pub fn mode(&self) -> ExtIdMode {
        self.mode
    }

    /// The largest sequence number this codec encodes.
    pub const fn max_seq(&self) -> u64 {
        match (self.mode, self.in_band) {
            (ExtIdMode::FeistelUuid, true) => (1 << 56) - 1,
            (ExtIdMode::FeistelUuid, false) => (1 << 60) - 1,
            (ExtIdMode::CycleWalk, _) => (1 << 63) - 1,
            (ExtIdMode::Aes128, _) => u64::MAX,
        }
    }

    /// The largest random number this codec encodes.
    pub const fn max_rand(&self) -> u64 {
        match self.mode {
            ExtIdMode::FeistelUuid => (1 << 62) - 1,
            _ => u64::MAX,
        }
    }

    fn l_bits(&self) -> u32 {
        if self.in_band { 56 } else { 60 }
    }

    fn keys(&self, version: u8) -> Result<&Keys> {
        self.keys
            .get(version as usize)
            .and_then(Option::as_ref)
            .ok_or(Error::UnknownKeyVersion { version })
    }

    #[inline]
    fn check_input(&self, seq: u64, rand: u64) -> Result<()> {
        if seq > self.max_seq() {
            return Err(Error::ValueOutOfRange {
                argument: "seq",
                value: seq,
                max: self.max_seq(),
            });
        }
        if rand > self.max_rand() {
            return Err(Error::ValueOutOfRange {
                argument: "rand",
                value: rand,
                max: self.max_rand(),
            });
        }
        Ok(())
    }

    /// The random half this codec derives for `seq` under the current key:
    /// `F(seq)` truncated to [`max_rand`](Self::max_rand) bits, where F is
    /// AES-128 under a key of its own (HKDF info `…/rand/<type>/<version>`).
    #[inline(always)]
    pub fn derived_rand(&self, seq: u64) -> u64 {
        self.current_rand.prf64(seq) & self.max_rand()
    }

    /// Whether a decoded id's random half is the one this codec derives from
    /// its sequence number under its key version — an id made by
    /// [`encode_seq`](Self::encode_seq) (the call without a random half).
    /// Compared in constant time; one AES call. [`decode`](Self::decode)
    /// runs it; for a [`decode_unverified`](Self::decode_unverified) record.
    #[inline(always)]
    pub fn is_derived(&self, d: &Decoded) -> bool {
        let key = if d.key_version == self.current {
            Some(&self.current_rand)
        } else {
            self.rand_keys
                .get(d.key_version as usize)
                .and_then(Option::as_ref)
        };
        key.is_some_and(|k| bool::from(d.rand.ct_eq(&(k.prf64(d.seq) & self.max_rand()))))
    }

    /// The internal id of an external one made by
    /// [`encode_seq`](Self::encode_seq) (the call without a random half),
    /// refusing any other ([`Error::NotDerived`]): a made-up id, one of
    /// another type, key or layout, or one made with a stored random half
    /// passes with probability 2^-62 (2^-64 in `aes128` and `cycle-walk`) per
    /// key version tried, nothing stored. The obvious decode is the checked
    /// one; ids made with a stored random half are read with
    /// [`decode_unverified`](Self::decode_unverified) and checked against the
    /// row.
    ///
    /// Across a key rotation: an id that carries its key version (the default
    /// layout) is read under that version; one that does not (`aes128`,
    /// `cycle-walk`, `key_version_in_band(false)`) under the current version,
    /// then under each other version the keyring held when the codec was
    /// built, keeping the one whose derived half checks — so ids made before a
    /// rotation resolve while their key is held. (An id of an older version
    /// costs a decode and a check more per version tried.)
    #[inline]
    pub fn decode(&self, id: &ExtId) -> Result<Decoded> {
        let d = self.decode_inner(id, None)?;
        if self.is_derived(&d) {
            return Ok(d);
        }
        if !self.in_band {
            for v in 0..=MAX_KEY_VERSION {
                if v == d.key_version || self.rand_keys[v as usize].is_none() {
                    continue;
                }
                if let Ok(other) = self.decode_inner(id, Some(v))
                    && self.is_derived(&other)
                {
                    return Ok(other);
                }
            }
        }
        Err(Error::NotDerived { seq: d.seq })
    }

    /// The sequence number of an id made by [`encode_seq`](Self::encode_seq):
    /// [`decode`](Self::decode)'s, with its refusals.
    #[inline]
    pub fn decode_seq(&self, id: &ExtId) -> Result<u64> {
        self.decode(id).map(|d| d.seq)
    }

    /// [`decode`](Self::decode) (or, with a `version`,
    /// [`decode_with_key_version`](Self::decode_with_key_version)) as an
    /// answer rather than a refusal: `None` for an id this codec did not make
    /// (its derived half does not check, or it carries a key version not
    /// held), an error only for text that is not a well-formed id of this
    /// layout (or a version given for an id that carries another). For
    /// callers that refuse in their own words (the Node and Elixir decodes):
    /// which refusals mean "not ours" is written here once.
    #[inline]
    pub fn find(&self, id: &ExtId, version: Option<u8>) -> Result<Option<Decoded>> {
        let found = match version {
            Some(v) => self.decode_with_key_version(id, v),
            None => self.decode(id),
        };
        match found {
            Ok(d) => Ok(Some(d)),
            Err(Error::NotDerived { .. } | Error::UnknownKeyVersion { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`find`](Self::find)'s sequence number, without a version.
    #[inline]
    pub fn find_seq(&self, id: &ExtId) -> Result<Option<u64>> {
        Ok(self.find(id, None)?.map(|d| d.seq))
    }

    /// The external id of `seq`, its random half derived from it under the
    /// key ([`derived_rand`](Self::derived_rand)): the call to make when
    /// nothing but the sequence number is stored. The id is stable (the same
    /// seq always gives the same id under one key version), looks uniformly
    /// random, and [`decode_seq`](Self::decode_seq) refuses ids this codec did not
    /// make. Costs one AES call more than [`encode`](Self::encode).
    ///
    /// ```
    /// use nonceforge::extid::{ExtIdCodec, Keyring};
    /// let users = ExtIdCodec::new(&Keyring::new(0, &[0x42; 32])?, "user")?;
    /// let id = users.encode_seq(42)?;
    /// assert_eq!(users.decode_seq(&id)?, 42); // refuses ids this codec did not make
    /// assert!(users.decode_seq(&users.encode(42, 7)?).is_err());
    /// # Ok::<(), nonceforge::Error>(())
    /// ```
    #[inline(always)]
    pub fn encode_seq(&self, seq: u64) -> Result<ExtId> {
        // `encode` checks seq first (its error names `seq`); the derived half
        // is always in range.
        self.encode(seq, self.derived_rand(seq))
    }

    /// The external id of (seq, rand), under the current key. `rand` must be
    /// fresh and uniformly random for each id (and stored beside the row):
    /// a constant or guessable one makes the 2-round `feistel-uuid` leak —
    /// ids of one `rand` share the XOR of their sequence numbers. Without a
    /// stored random half, use [`encode_seq`](Self::encode_seq).
    // Always inlined: returned through memory, the id's 16 bytes would take a
    // store-to-load round trip (about 8 cycles, measured) on the latency path.
    #[inline(always)]
    pub fn encode(&self, seq: u64, rand: u64) -> Result<ExtId> {
        self.encode_unchecked(seq, rand)
    }

    /// Decodes `id`, just made for (seq, rand) under the current key by
    /// another copy of this codec's keys, and refuses a mismatch; with
    /// `derived`, also that `rand` is the half this (checking) codec derives.
    #[inline(never)]
    fn verify(&self, id: ExtId, seq: u64, rand: u64, derived: bool) -> Result<ExtId> {
        #[cfg(test)]
        let seen = if self.inject_fault {
            let mut b = id.0;
            b[15] ^= 1;
            ExtId(b)
        } else {
            id
        };
        #[cfg(not(test))]
        let seen = id;
        match self.decode_inner(&seen, Some(self.current)) {
            Ok(d)
                if (d.seq, d.rand, d.key_version) == (seq, rand, self.current)
                    && (!derived || self.derived_rand(seq) == rand) =>
            {
                Ok(id)
            }
            _ => Err(Error::SelfCheckFailed { seq }),
        }
    }

    #[inline(always)]
    fn encode_unchecked(&self, seq: u64, rand: u64) -> Result<ExtId> {
        self.check_input(seq, rand)?;
        let version = self.current;
        Ok(match &self.current_keys {
            Keys::One(k) => {
                let v = (seq as u128) << 64 | rand as u128;
                ExtId(match self.mode {
                    ExtIdMode::CycleWalk => cycle_walk::encrypt(k, v.to_be_bytes()),
                    _ => k.encrypt_be(v).to_be_bytes(),
                })
            }
            Keys::Rounds(ks) => {
                let (l, r) = feistel::encrypt(ks, self.l_bits(), seq, rand);
                ExtId(feistel::place(
                    self.with_version(l, r, version),
                    r,
                    self.uuid_version,
                ))
            }
        })
    }

    /// The internal id of an external one, **unverified**: any well-formed id
    /// decodes (one of another type or key, or a made-up one, to an unrelated
    /// value). For ids made with a stored random half (the Plan B post's
    /// design): look the row up by `seq`, then compare with
    /// [`Decoded::rand_matches`] (and [`Decoded::check_issued`]) before
    /// trusting it. For ids made without one, [`decode`](Self::decode) checks.
    /// The key version comes from the id (in band) or is the current one.
    #[inline(always)]
    pub fn decode_unverified(&self, id: &ExtId) -> Result<Decoded> {
        self.decode_inner(id, None)
    }

    /// [`decode_unverified`](Self::decode_unverified) of an id made under key
    /// `version` (for ids that do not carry it; one that carries another is
    /// refused, [`Error::KeyVersionMismatch`]).
    pub fn decode_unverified_with_key_version(&self, id: &ExtId, version: u8) -> Result<Decoded> {
        self.decode_inner(id, Some(version))
    }

    /// [`decode`](Self::decode) of an id made under key `version` (for ids
    /// that do not carry it): only that version is tried.
    pub fn decode_with_key_version(&self, id: &ExtId, version: u8) -> Result<Decoded> {
        let d = self.decode_inner(id, Some(version))?;
        if self.is_derived(&d) {
            Ok(d)
        } else {
            Err(Error::NotDerived { seq: d.seq })
        }
    }

    #[inline(always)]
    fn decode_inner(&self, id: &ExtId, version: Option<u8>) -> Result<Decoded> {
        match self.mode {
            ExtIdMode::Aes128 | ExtIdMode::CycleWalk => {
                let version = version.unwrap_or(self.current);
                let Keys::One(k) = self.keys(version)? else {
                    unreachable!("AES modes hold one key per version")
                };
                let block = if self.mode == ExtIdMode::CycleWalk {
                    if !cycle_walk::in_domain(&id.0) {
                        return Err(Error::MalformedExtId {
                            rule: "a cycle-walk id has its first bit clear",
                        });
                    }
                    u128::from_be_bytes(cycle_walk::decrypt(k, id.0))
                } else {
                    k.decrypt_be(u128::from_be_bytes(id.0))
                };
                let v = block;
                let (seq, rand) = ((v >> 64) as u64, v as u64);
                Ok(Decoded {
                    seq,
                    rand,
                    key_version: version,
                })
            }
            ExtIdMode::FeistelUuid => {
                let (l, r, ver, var) = feistel::unplace(&id.0);
                if ver != self.uuid_version {
                    return Err(Error::MalformedExtId {
                        rule: if self.uuid_version == 8 {
                            "a feistel-uuid id is a version 8 UUID (its 13th hex digit is 8)"
                        } else {
                            "a feistel-uuid id is a version 4 UUID (its 13th hex digit is 4)"
                        },
                    });
                }
                if var != 0b10 {
                    return Err(Error::MalformedExtId {
                        rule: "a feistel-uuid id has the RFC 9562 variant (its 17th hex digit is 8, 9, a or b)",
                    });
                }
                let (l, carried) = self.without_version(l, r, version);
                // One rule in every face: a version given for an id that
                // carries another is refused, not ignored.
                if let Some(given) = version.filter(|&g| self.in_band && g != carried) {
                    return Err(Error::KeyVersionMismatch { given });
                }
                let version = carried;
                // Nearly every id is of the current version: a predicted branch to
                // keys at a fixed address keeps the key lookup off the path from
                // the id's bits to the first AES round.
                let keys = if version == self.current {
                    &self.current_keys
                } else {
                    self.keys(version)?
                };
                let Keys::Rounds(ks) = keys else {
                    unreachable!("feistel-uuid holds round keys")
                };
                let (seq, rand) = feistel::decrypt(ks, self.l_bits(), l, r);
                Ok(Decoded {
                    seq,
                    rand,
                    key_version: version,
                })
            }
        }
    }

    /// The inverse of [`with_version`](Self::with_version): the Feistel half and
    /// the key version (read from the id when it travels in band, else
    /// `out_of_band` or the current one).
    #[inline(always)]
    fn without_version(&self, l: u64, r: u64, out_of_band: Option<u8>) -> (u64, u8) {
        if self.in_band {
            (l & ((1 << 56) - 1), ((l >> 56) as u8) ^ (r as u8 & 0xf))
        } else {
            (l, out_of_band.unwrap_or(self.current))
        }
    }

    /// L with the whitened key version on top, when it travels in band.
    #[inline(always)]
    fn with_version(&self, l: u64, r: u64, version: u8) -> u64 {
        if self.in_band {
            l | (((version ^ (r as u8 & 0xf)) as u64) << 56)
        } else {
            l
        }
    }

    /// Encodes many (seq, rand) pairs into `out` (same length). Every input is
    /// checked first: on error nothing is written.
    pub fn encode_batch(&self, input: &[(u64, u64)], out: &mut [ExtId]) -> Result<()> {
        out_len(input.len(), out.len())?;
        for &(s, r) in input {
            self.check_input(s, r)?;
        }
        let version = self.current;
        let keys = self.keys(version)?;
        let mut scratch = [[0u8; 16]; BATCH];
        let (mut ls, mut rs) = ([0u64; BATCH], [0u64; BATCH]);
        for (inp, out) in input.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = inp.len();
            match keys {
                Keys::One(k) => {
                    for (b, &(s, r)) in scratch.iter_mut().zip(inp) {
                        *b = ((s as u128) << 64 | r as u128).to_be_bytes();
                    }
                    k.encrypt_many(&mut scratch[..n]);
                    for ((o, b), &(s, r)) in out.iter_mut().zip(&scratch[..n]).zip(inp) {
                        *o = ExtId(
                            if self.mode == ExtIdMode::CycleWalk && !cycle_walk::in_domain(b) {
                                // Half the blocks walk on: one call at a time from here.
                                cycle_walk::encrypt(
                                    k,
                                    ((s as u128) << 64 | r as u128).to_be_bytes(),
                                )
                            } else {
                                *b
                            },
                        );
                    }
                }
                Keys::Rounds(ks) => {
                    for (i, &(s, r)) in inp.iter().enumerate() {
                        (ls[i], rs[i]) = (s, r);
                    }
                    feistel::encrypt_many(
                        ks,
                        self.l_bits(),
                        &mut ls[..n],
                        &mut rs[..n],
                        &mut scratch,
                    );
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = ExtId(feistel::place(
                            self.with_version(ls[i], rs[i], version),
                            rs[i],
                            self.uuid_version,
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// [`encode_seq`](Self::encode_seq) of many sequence numbers into `out`
    /// (same length): the same ids as one call at a time, the derived halves
    /// computed in batch. Every input is checked first: on error nothing is
    /// written. The batch call for tables that store nothing but the sequence
    /// number (there is no batch form that takes a zero or constant half by
    /// omission: [`encode_batch`](Self::encode_batch) takes each half).
    pub fn encode_seq_batch(&self, seqs: &[u64], out: &mut [ExtId]) -> Result<()> {
        out_len(seqs.len(), out.len())?;
        for &s in seqs {
            self.check_input(s, 0)?;
        }
        let mut scratch = [[0u8; 16]; BATCH];
        let mut rands = [0u64; BATCH];
        let mut pairs = [(0u64, 0u64); BATCH];
        for (chunk, out) in seqs.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = chunk.len();
            self.current_rand
                .prf64_many(chunk, &mut rands[..n], &mut scratch);
            for ((p, &s), &r) in pairs.iter_mut().zip(chunk).zip(&rands[..n]) {
                *p = (s, r & self.max_rand());
            }
            self.encode_batch(&pairs[..n], out)?;
        }
        Ok(())
    }

    /// [`decode_seq`](Self::decode_seq) of many ids into `out` (same length):
    /// the sequence numbers of ids this codec made without a random half,
    /// the derived halves checked in batch. The first id refused refuses the
    /// batch with the error one call at a time gives it, and `out` is left
    /// all zero. For a lookup that wants an answer per id, call
    /// [`find_seq`](Self::find_seq) on each.
    pub fn decode_seq_batch(&self, ids: &[ExtId], out: &mut [u64]) -> Result<()> {
        out_len(ids.len(), out.len())?;
        let mut decoded = [Decoded::default(); BATCH];
        for (chunk, out_chunk) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let d = &mut decoded[..chunk.len()];
            if let Err(e) = self.decode_batch(chunk, d) {
                out.fill(0);
                return Err(e);
            }
            for (o, d) in out_chunk.iter_mut().zip(d.iter()) {
                *o = d.seq;
            }
        }
        Ok(())
    }

    /// [`decode`](Self::decode) of many ids into `out` (same length), the
    /// derived halves checked in batch: the first id refused refuses the batch
    /// with the error one call at a time gives it, and `out` is left all
    /// default (no decoded value in it).
    pub fn decode_batch(&self, ids: &[ExtId], out: &mut [Decoded]) -> Result<()> {
        self.decode_unverified_batch(ids, out)?;
        let mut scratch = [[0u8; 16]; BATCH];
        let (mut seqs, mut rands) = ([0u64; BATCH], [0u64; BATCH]);
        for (chunk, ds) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let n = chunk.len();
            for (s, d) in seqs.iter_mut().zip(ds.iter()) {
                *s = d.seq;
            }
            self.current_rand
                .prf64_many(&seqs[..n], &mut rands[..n], &mut scratch);
            for ((id, d), &r) in chunk.iter().zip(ds.iter_mut()).zip(&rands[..n]) {
                let ok = if d.key_version == self.current {
                    bool::from(d.rand.ct_eq(&(r & self.max_rand())))
                } else {
                    self.is_derived(d)
                };
                if ok {
                    continue;
                }
                // Not derived under the version read: the one-id path tries
                // the other held versions (out of band) or words the refusal.
                match self.decode(id) {
                    Ok(found) => *d = found,
                    Err(e) => {
                        out.fill(Decoded::default());
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// [`decode_unverified`](Self::decode_unverified) of many ids into `out`
    /// (same length). On error nothing is written.
    pub fn decode_unverified_batch(&self, ids: &[ExtId], out: &mut [Decoded]) -> Result<()> {
        out_len(ids.len(), out.len())?;
        let mut scratch = [[0u8; 16]; BATCH];
        if let Keys::One(k) = self.keys(self.current)? {
            if self.mode == ExtIdMode::CycleWalk
                && let Some(id) = ids.iter().find(|id| !cycle_walk::in_domain(&id.0))
            {
                self.decode_unverified(id)?; // words the error
            }
            for (chunk, out) in ids.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
                let blocks = &mut scratch[..chunk.len()];
                for (b, id) in blocks.iter_mut().zip(chunk) {
                    *b = id.0;
                }
                k.decrypt_many(blocks);
                for ((o, b), id) in out.iter_mut().zip(blocks.iter()).zip(chunk) {
                    let b = if self.mode == ExtIdMode::Aes128 || cycle_walk::in_domain(b) {
                        *b
                    } else {
                        // Walk on, one call at a time.
                        cycle_walk::decrypt(k, id.0)
                    };
                    let v = u128::from_be_bytes(b);
                    let (seq, rand) = ((v >> 64) as u64, v as u64);
                    *o = Decoded {
                        seq,
                        rand,
                        key_version: self.current,
                    };
                }
            }
            return Ok(());
        }
        let (mut ls, mut rs, mut vs) = ([0u64; BATCH], [0u64; BATCH], [0u8; BATCH]);
        let mut staged = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(BATCH) {
            for (i, id) in chunk.iter().enumerate() {
                let (l, r, ver, var) = feistel::unplace(&id.0);
                if ver != self.uuid_version || var != 0b10 {
                    // The one-id path words the error.
                    self.decode_unverified(id)?;
                }
                let (l, v) = self.without_version(l, r, None);
                self.keys(v)?;
                (ls[i], rs[i], vs[i]) = (l, r, v);
            }
            let n = chunk.len();
            // Runs of one key version (nearly always the whole chunk) go together.
            let mut start = 0;
            while start < n {
                let v = vs[start];
                let end = (start..n).find(|&j| vs[j] != v).unwrap_or(n);
                let Keys::Rounds(ks) = self.keys(v)? else {
                    unreachable!("feistel-uuid holds round keys")
                };
                feistel::decrypt_many(
                    ks,
                    self.l_bits(),
                    &mut ls[start..end],
                    &mut rs[start..end],
                    &mut scratch,
                );
                start = end;
            }
            staged.extend((0..n).map(|i| Decoded {
                seq: ls[i],
                rand: rs[i],
                key_version: vs[i],
            }));
        }
        out.copy_from_slice(&staged);
        Ok(())
    }

    /// The id in a text form (base32 with this codec's type as prefix when
    /// `prefix`, and a check character when `check`).
    pub fn format(&self, id: &ExtId, form: TextForm, prefix: bool, check: bool) -> String {
        match form {
            TextForm::Uuid => id.to_uuid_string(),
            TextForm::Base64Url => id.to_base64url(),
            TextForm::Base32 => id.to_base32(prefix.then_some(self.type_name.as_str()), check),
        }
    }

    /// Parses an id in any text form, whatever this codec formatted: 22
    /// characters is base64url (no other form is that short); otherwise an
    /// underscore (which a UUID never has) means base32 with a `type_` prefix,
    /// which must name this codec's type; a hyphen (which base32 never has)
    /// or 36 characters means a UUID; anything else is base32 without a
    /// prefix. In base32 a 27th character is a check character. (A prefixed
    /// base32 id is 36 characters for a 9-letter type, or an 8-letter one
    /// with a check character: the underscore decides before the length.)
    pub fn parse(&self, text: &str) -> Result<ExtId> {
        let body = text.rsplit('_').next().unwrap_or(text);
        match text.len() {
            22 => ExtId::parse_base64url(text),
            _ if text.contains('_') => {
                ExtId::parse_base32(text, Some(self.type_name.as_str()), body.len() == 27)
            }
            n if n == 36 || text.contains('-') => ExtId::parse_uuid(text),
            _ => ExtId::parse_base32(text, None, body.len() == 27),
        }
    }
}

/// A codec that decodes every id it makes before returning it, and refuses
/// one that does not give back its (seq, rand) ([`Error::SelfCheckFailed`]; a
/// failed batch leaves nothing written): the Plan B post's "graceful failure
/// on faulty hardware" — a miscomputed id is never handed out. The check runs
/// on a second copy of the keys, derived and expanded on its own and run by
/// other AES code (the `aes` crate's), so a fault in the expanded keys or the
/// cipher path of either copy shows as a mismatch; for the call without a
/// random half it also recomputes the derived half. It costs about one decode
/// an encode (two for the derived call); codecs without it pay nothing (a type
/// of its own, not a flag checked on every call). Decoding and everything else
/// is the codec's ([`Deref`](std::ops::Deref)).
///
/// ```
/// use nonceforge::extid::{ExtIdCodec, Keyring};
/// let ring = Keyring::new(0, &[0x42; 32])?;
/// let users = ExtIdCodec::builder(&ring, "user").build_self_checked()?;
/// let id = users.encode_seq(42)?;          // checked before it is returned
/// assert_eq!(users.decode_seq(&id)?, 42);  // the codec's own decode
/// # Ok::<(), nonceforge::Error>(())
/// ```
pub struct SelfCheckedCodec {
    codec: ExtIdCodec,
    /// The same keys, derived and expanded again, on the portable path.
    check: ExtIdCodec,
}

impl std::fmt::Debug for SelfCheckedCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SelfCheckedCodec")
            .field(&self.codec)
            .finish()
    }
}

impl std::ops::Deref for SelfCheckedCodec {
    type Target = ExtIdCodec;
    fn deref(&self) -> &ExtIdCodec {
        &self.codec
    }
}

impl SelfCheckedCodec {
    /// [`ExtIdCodec::encode`], checked.
    pub fn encode(&self, seq: u64, rand: u64) -> Result<ExtId> {
        let id = self.codec.encode(seq, rand)?;
        self.check.verify(id, seq, rand, false)
    }

    /// [`ExtIdCodec::encode_seq`], checked: the derived half is recomputed too.
    pub fn encode_seq(&self, seq: u64) -> Result<ExtId> {
        let rand = self.codec.derived_rand(seq);
        let id = self.codec.encode(seq, rand)?;
        self.check.verify(id, seq, rand, true)
    }

    /// [`ExtIdCodec::encode_batch`], checked; on a failure nothing is left in `out`.
    pub fn encode_batch(&self, input: &[(u64, u64)], out: &mut [ExtId]) -> Result<()> {
        self.codec.encode_batch(input, out)?;
        for (&(seq, rand), id) in input.iter().zip(out.iter()) {
            if let Err(e) = self.check.verify(*id, seq, rand, false) {
                out.fill(ExtId::default()); // nothing miscomputed leaves
                return Err(e);
            }
        }
        Ok(())
    }

    /// [`ExtIdCodec::encode_seq_batch`], checked (the derived halves
    /// recomputed too); on a failure nothing is left in `out`.
    pub fn encode_seq_batch(&self, seqs: &[u64], out: &mut [ExtId]) -> Result<()> {
        self.codec.encode_seq_batch(seqs, out)?;
        for (&seq, id) in seqs.iter().zip(out.iter()) {
            let rand = self.check.derived_rand(seq);
            if let Err(e) = self.check.verify(*id, seq, rand, true) {
                out.fill(ExtId::default());
                return Err(e);
            }
        }
        Ok(())
    }

    /// The codec, without the check.
    pub fn into_inner(self) -> ExtIdCodec {
        self.codec
    }
}

#[cfg(test)]
mod tests;
