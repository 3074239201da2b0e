//! The one error type of the core crate.
//!
//! Every variant says which value was wrong and which rule it broke, so that a
//! message can be shown to a user as it is.

use thiserror::Error;

/// Everything that can go wrong in nonceforge's core.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The process-wide generator was used before [`crate::init`] was called.
    #[error(
        "nonceforge: the global generator is not initialised: call nonceforge::init(...) first"
    )]
    Uninitialised,
    /// The process-wide generator was initialised twice.
    #[error("nonceforge: the global generator is already initialised")]
    AlreadyInitialised,
    /// The generator was disabled (for example because its machine-id lease was lost).
    #[error("nonceforge: the generator is disabled: no nonce was issued")]
    Disabled,
    /// A machine id outside 0..=511.
    #[error("machine_id {value} is out of range: it must be in 0..=511 (9 bits)")]
    MachineIdOutOfRange {
        /// The rejected value.
        value: u64,
    },
    /// A machine id outside 0..=65535 in the wide layout.
    #[error(
        "machine_id {value} is out of range: it must be in 0..=65535 (16 bits, the wide layout)"
    )]
    MachineIdOutOfWideRange {
        /// The rejected value.
        value: u64,
    },
    /// A machine id above 511 given to a generator of the standard layout.
    #[error(
        "machine_id {value} needs the wide layout: the standard layout's machine ids are 0..=511 (9 bits); choose layout \"wide\" (16 bits, 96- and 128-bit nonces)"
    )]
    MachineIdNeedsWide {
        /// The rejected value.
        value: u64,
    },
    /// A layout name other than `standard` or `wide`.
    #[error(
        "layout {value:?} is not a layout: it must be \"standard\" (9-bit machine ids, NoNoncense's) or \"wide\" (16-bit machine ids, 96 and 128 bits)"
    )]
    InvalidLayout {
        /// The rejected name (its first 40 characters).
        value: String,
    },
    /// A 64-bit nonce asked of the wide layout.
    #[error(
        "the wide layout has no 64-bit nonces: 64 bits leave no room for a 16-bit machine id; use 96 or 128 bits, or the standard layout (9-bit machine ids)"
    )]
    WideLayoutNo64,
    /// The environment variable that should carry the machine id is not set.
    #[error("machine id: environment variable {name} is not set (or not valid UTF-8)")]
    MachineIdEnvMissing {
        /// The variable's name.
        name: String,
    },
    /// The environment variable does not end in a number.
    #[error(
        "machine id: environment variable {name}={value:?} does not end in a decimal number (e.g. \"web-3\")"
    )]
    MachineIdEnvNoNumber {
        /// The variable's name.
        name: String,
        /// Its value.
        value: String,
    },
    /// This host is not in the host list.
    #[error("machine id: host {host:?} is not in the host list ({count} entries)")]
    HostNotListed {
        /// This host's name.
        host: String,
        /// How many hosts the list has.
        count: usize,
    },
    /// The host list names a host twice.
    #[error(
        "machine id: host {host:?} appears twice in the host list (positions {first} and {second})"
    )]
    HostListedTwice {
        /// The duplicated name.
        host: String,
        /// Its first position.
        first: usize,
        /// Its second position.
        second: usize,
    },
    /// A host list entry is empty.
    #[error("machine id: host list entry {position} is empty")]
    HostListEmptyEntry {
        /// The position of the empty entry.
        position: usize,
    },
    /// A key (the base key for encrypted nonces, an external-id key) is too short.
    #[error("key is {len} bytes: a key must be at least 32 bytes")]
    KeyTooShort {
        /// The length given.
        len: usize,
    },
    /// Encrypted nonces were asked for, but the generator has no key.
    #[error(
        "encrypted nonces need a base key: build the generator with .key(...) (at least 32 bytes)"
    )]
    NoKey,
    /// A nonce size other than 64, 96 or 128 bits.
    #[error("bits {value} is not a nonce size: it must be 64, 96 or 128")]
    InvalidSize {
        /// The rejected value.
        value: u64,
    },
    /// A cipher name that is not one of those offered for a nonce size.
    #[error("cipher {name:?} is not offered for {bits}-bit nonces: use {expected}")]
    UnknownCipher {
        /// The name given.
        name: String,
        /// The nonce size.
        bits: u32,
        /// The names that are offered.
        expected: &'static str,
    },
    /// A caller's buffer whose length is not a whole number of nonces.
    #[error("{argument}: length {len} is not a multiple of the {width}-byte nonce size")]
    BufferLength {
        /// The argument's name.
        argument: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The nonce width in bytes.
        width: usize,
    },
    /// A nonce of a length that is no nonce size was given to decrypt or inspect.
    #[error("{argument}: a nonce is 8, 12 or 16 bytes (64, 96 or 128 bits), got {len} bytes")]
    NonceLength {
        /// The argument's name.
        argument: &'static str,
        /// The length given.
        len: usize,
    },
    /// An output buffer of the wrong length.
    #[error("{argument}: must be exactly {expected} bytes, got {len}")]
    OutputLength {
        /// The argument's name.
        argument: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length given.
        len: usize,
    },
    /// A 128-bit value whose always-zero bits are set: not a plain nonce.
    #[error(
        "{argument}: the bits between a plain 128-bit nonce's machine id and its counter are zero, and these are not: is it still encrypted? decrypt it first"
    )]
    NotPlainNonce {
        /// The argument's name.
        argument: &'static str,
    },
    /// The clock reads a time before the generator's epoch.
    #[error(
        "the clock reads {now_unix_ms} ms since 1970, before the epoch {epoch_unix_ms}: timestamps cannot be negative"
    )]
    ClockBeforeEpoch {
        /// The clock's reading.
        now_unix_ms: u64,
        /// The epoch.
        epoch_unix_ms: u64,
    },
    /// The 42-bit millisecond timestamp has run out (139 years after the epoch).
    #[error(
        "the 42-bit timestamp range ends at {end_unix_ms} ms since 1970 (epoch {epoch_unix_ms} + 2^42 ms): no nonce can be issued past it; pick a later epoch"
    )]
    EpochExhausted {
        /// The epoch.
        epoch_unix_ms: u64,
        /// The first millisecond that cannot be represented.
        end_unix_ms: u64,
    },
    /// The clock is behind a timestamp an earlier instance may have issued up to.
    #[error(
        "the clock reads {now_unix_ms} ms since 1970, {behind_ms} ms behind the floor {floor_unix_ms} set by not_before(): waiting more than max_wait ({max_wait_ms} ms) was refused"
    )]
    ClockBehind {
        /// The clock's reading.
        now_unix_ms: u64,
        /// The floor.
        floor_unix_ms: u64,
        /// How far behind.
        behind_ms: u64,
        /// The most the generator would wait.
        max_wait_ms: u64,
    },
    /// A counter space that cannot be exhausted in practice was exhausted.
    #[error("the {bits}-bit counter space of this generator is exhausted: build a new generator")]
    CounterExhausted {
        /// The nonce size.
        bits: u32,
    },
    /// A key version outside 0..=15.
    // 15 is extid::MAX_KEY_VERSION (asserted there): named here as a number so
    // that this module imports no feature module.
    #[error("key version {version} is out of range: it must be in 0..=15 (4 bits)")]
    KeyVersionOutOfRange {
        /// The version given.
        version: u8,
    },
    /// A key version added twice.
    #[error("key version {version} is already in the keyring: a version names one key forever")]
    KeyVersionTaken {
        /// The version given.
        version: u8,
    },
    /// A key version given for an id that carries its own, and another one:
    /// such an id is read under the version it carries, never under the one
    /// given (the text does not say which it carries).
    #[error(
        "the id carries its key version, and not the {given} given: decode it without a key version"
    )]
    KeyVersionMismatch {
        /// The version given.
        given: u8,
    },
    /// A key version the keyring does not hold.
    #[error("key version {version} is not in the keyring: add its key to decode ids made under it")]
    UnknownKeyVersion {
        /// The version asked for.
        version: u8,
    },
    /// An id type name that breaks the naming rule.
    #[error(
        "type {name:?}: character {position}: {rule} (1 to 63 of a-z and _, starting and ending with a letter)"
    )]
    InvalidTypeName {
        /// The name given (at most its first 64 characters: see `excerpt`).
        name: String,
        /// Where it breaks the rule (0-based).
        position: usize,
        /// The rule.
        rule: &'static str,
    },
    /// Text that is not an id in the form expected.
    #[error("not an id in {form} form: character {position}: {rule}")]
    ParseId {
        /// The text form.
        form: &'static str,
        /// Where it breaks the rule (0-based, in characters).
        position: usize,
        /// The rule.
        rule: &'static str,
    },
    /// An id whose type prefix names another type.
    #[error("the id is of type {found:?}, not {expected:?}")]
    WrongIdType {
        /// The type this codec is for.
        expected: String,
        /// The prefix the id carries (at most its first 64 characters).
        found: String,
    },
    /// A mode name that is not one of the external-id constructions.
    #[error("mode {name:?} is not known: use feistel-uuid, aes128 or cycle-walk")]
    UnknownExtIdMode {
        /// The name given.
        name: String,
    },
    /// A decoded sequence number above the highest one issued. The text
    /// names neither number (services hand refusals to clients, and the
    /// highest issued is a row count): the fields hold them.
    #[error("the id was never handed out: it decodes above the highest sequence number issued")]
    NotIssued {
        /// The decoded sequence number.
        seq: u64,
        /// The highest issued.
        max_issued: u64,
    },
    /// A decoded id whose random half is not the one derived from its
    /// sequence number: not made by `encode_seq` under this codec's key. The
    /// text does not name the decoded sequence number (for an id made with a
    /// stored random half it is the true one): the field holds it.
    #[error(
        "the id was not made by this codec's encode without a random half: its random half is not the one derived for its sequence number"
    )]
    NotDerived {
        /// The decoded sequence number.
        seq: u64,
    },
    /// An id that did not decode back to what it was made from (the codec's
    /// self-check): the machine miscomputed; the id was not returned.
    #[error(
        "the external id made for sequence number {seq} did not decode back to it: the machine miscomputed (faulty hardware?); no id was returned"
    )]
    SelfCheckFailed {
        /// The sequence number being encoded.
        seq: u64,
    },
    /// An option with a value outside its set.
    #[error("{option} = {value}: {rule}")]
    InvalidOption {
        /// The option's name.
        option: &'static str,
        /// The value given.
        value: u64,
        /// The rule.
        rule: &'static str,
    },
    /// A number too large for its field.
    #[error("{argument} = {value} is too large: it must be at most {max}")]
    ValueOutOfRange {
        /// The argument's name.
        argument: &'static str,
        /// The value given.
        value: u64,
        /// The largest allowed.
        max: u64,
    },
    /// An id that this codec cannot have made.
    #[error("not an id of this codec: {rule}")]
    MalformedExtId {
        /// The rule it breaks.
        rule: &'static str,
    },
    /// A seal or open refused by the nonce sanitizer.
    #[error("{0}")]
    NonceReuse(Box<crate::violation::Violation>),
    /// A key of the wrong length for its algorithm.
    #[error("{argument}: a {algorithm} key is exactly {expected} bytes, got {len}")]
    KeyLength {
        /// The argument's name.
        argument: &'static str,
        /// The algorithm.
        algorithm: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length given.
        len: usize,
    },
    /// A rate (a probability) outside (0, 1).
    #[error("{option} = {value}: a rate must be between 0 and 1, exclusive")]
    InvalidRate {
        /// The option's name.
        option: &'static str,
        /// The value given, as written.
        value: String,
    },
    /// An AEAD call that failed for a reason of its own (a message too long for
    /// the algorithm, a tag that does not verify); nothing was written.
    #[error("{algorithm}: {operation} failed (message too long, or the tag does not verify)")]
    Aead {
        /// The AEAD.
        algorithm: &'static str,
        /// "seal" or "open".
        operation: &'static str,
    },
}

/// A `Result` with nonceforge's [`enum@Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// At most this many characters of a caller's text are kept in an error.
pub const EXCERPT_CHARS: usize = 64;

/// The text a caller passed, as an error keeps it: whole up to
/// [`EXCERPT_CHARS`] characters, else that many then `…` and the full length in
/// bytes. An error's size never grows with its input (a 1 GB type name makes a
/// message of about a hundred bytes, not a copy of it).
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_bounded() {
        assert_eq!(excerpt("user"), "user");
        let long = "é".repeat(1 << 20);
        let e = excerpt(&long);
        assert!(e.starts_with(&"é".repeat(EXCERPT_CHARS)));
        assert!(e.ends_with(&format!("… ({} bytes)", long.len())));
        assert!(e.len() < 200);
        let err = crate::extid::check_type_name(&"a".repeat(1 << 24)).unwrap_err();
        assert!(err.to_string().len() < 300, "{err}");
    }
}
