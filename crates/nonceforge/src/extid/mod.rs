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
mod batch;
mod builder;
mod cycle_walk;
mod feistel;
mod keyring;
mod self_check;
pub(crate) mod text;

pub use builder::ExtIdCodecBuilder;
pub use keyring::{Keyring, MAX_KEY_VERSION, check_type_name};
pub use self_check::SelfCheckedCodec;
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

#[cfg(test)]
mod tests;
