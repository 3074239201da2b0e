//! # nonceforge
//!
//! Values that must never repeat: counter, sortable and encrypted nonces of 64, 96
//! and 128 bits, unique across a cluster of up to 512 machines, made at hundreds
//! of millions a second on one core.
//!
//! ```
//! use nonceforge::{MachineId, NonceGenerator};
//!
//! // One generator per cluster member; the machine id must be unique among the
//! // live members (see `MachineId` for where to get it).
//! let generator = NonceGenerator::builder(MachineId::new(7)?)
//!     .key(b"a base key of at least 32 bytes, shared by the cluster")
//!     .build()?;
//!
//! let gcm_nonce: [u8; 12] = generator.counter_96()?;       // unique, predictable, fastest
//! let row_key: [u8; 16] = generator.sortable_128()?;       // increasing, carries its ms
//! let token: [u8; 16] = generator.encrypted_128()?;        // unique and unpredictable
//!
//! let parts = generator.decompose(&row_key)?;
//! assert_eq!(parts.machine_id, 7);
//! assert_eq!(generator.decompose(&generator.decrypt_128(&token)?)?.machine_id, 7);
//!
//! // Hot loops: a per-thread handle writes no shared memory per nonce.
//! let mut local = generator.local();
//! let mut batch = vec![[0u8; 12]; 1024];
//! generator.fill_counter_96(&mut batch)?; // one atomic reservation for 1024 nonces
//! let one = local.counter_96()?;
//! assert!(!batch.contains(&one));
//! # let _ = gcm_nonce;
//! # Ok::<(), nonceforge::Error>(())
//! ```
//!
//! # What is promised, and what is not
//!
//! * **Unique** — among all nonces of one kind and size issued by generators with
//!   the same epoch (and, for encrypted nonces, the same base key), as long as no
//!   two live generators share a machine id, and the rules about time in
//!   [`nonce`] hold (restarts, clocks stepped backwards: see there).
//! * Counter nonces of different kinds may share a value: a counter nonce and a
//!   sortable nonce of one size are different sequences over the same layout.
//!   Use one kind per key.
//! * **Sortable** nonces strictly increase per generator; across generators they
//!   sort by millisecond, then machine id.
//! * **Encrypted** nonces reveal nothing without the key but are no
//!   authenticator: anyone can submit a random value. [`NonceGenerator::decrypt`]
//!   always "succeeds"; check what it gives with [`NonceGenerator::decompose`].
//! * Counter and encrypted nonces cannot be guessed only in the encrypted form;
//!   never use counter nonces where a value must be unpredictable.
//!
//! # Guarding an AEAD
//!
//! Nonces that cannot repeat are half of it; [`aead`] is the other half: a
//! sanitizer that wraps an AEAD (RustCrypto's `aead` traits, ring's
//! `LessSafeKey`) with byte-identical output and refuses to seal twice under
//! one (key, nonce) — a seat belt for the bug that breaks AES-GCM and
//! ChaCha20-Poly1305.
//!
//! # Security
//!
//! Keys are never printed (their `Debug` says `..`), are derived per cipher and
//! size with HKDF-SHA256, and are wiped from memory when the generator is dropped.
//! A nonce is not a secret; a key is. Never reuse the base key for anything else.

#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod aead;
pub mod cipher;
pub mod clock;
pub mod error;
pub mod extid;
pub mod machine;
#[cfg(feature = "metrics")]
pub mod metrics;
pub mod nonce;
pub mod uuid;
mod violation;

pub use cipher::{Cipher64, Cipher128};
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{Error, Result};
pub use machine::MachineId;
pub use nonce::layout::{self, Bits, Layout, NonceParts, decompose};
pub use nonce::{
    GeneratorStats, LocalNonces, Nonce, NonceGenerator, NonceGeneratorBuilder, NonceKind, Refusals,
    SortableSequence, shared_sortable_word,
};

use std::sync::OnceLock;

static GLOBAL: OnceLock<NonceGenerator> = OnceLock::new();

/// Installs the process-wide generator (once).
///
/// ```
/// let generator = nonceforge::NonceGenerator::builder(nonceforge::MachineId::new(1)?).build()?;
/// nonceforge::init(generator)?;
/// let n = nonceforge::global()?.counter_128()?;
/// # let _ = n;
/// # Ok::<(), nonceforge::Error>(())
/// ```
pub fn init(generator: NonceGenerator) -> Result<()> {
    GLOBAL.set(generator).map_err(|_| Error::AlreadyInitialised)
}

/// The process-wide generator; [`Error::Uninitialised`] before [`init`].
pub fn global() -> Result<&'static NonceGenerator> {
    GLOBAL.get().ok_or(Error::Uninitialised)
}

/// The README's examples, compiled and run as doctests (`cargo test --doc`):
/// every Rust block in crates/nonceforge/README.md and the top README.md.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct TopReadmeDoctests;
