//! The crate's error type.

use std::time::Duration;

/// What can go wrong with a lease. Messages name the argument or the store and
/// the rule; they never carry a password.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// The backend URL cannot be used.
    #[error("backend URL {url:?} is malformed: {rule}")]
    BadUrl {
        /// The URL, password replaced by `***`.
        url: String,
        /// What is wrong with it.
        rule: String,
    },
    /// An option is out of range or inconsistent with another.
    #[error("{option} = {value}: {rule}")]
    BadOption {
        /// The option's name.
        option: &'static str,
        /// Its value, as given.
        value: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The store could not be reached (connection refused, unknown host, a
    /// handshake that failed).
    #[error("cannot reach the {backend} lease store at {target}: {detail}")]
    Unreachable {
        /// `postgres`, `redis` or `etcd`.
        backend: &'static str,
        /// Where it was looked for (no password).
        target: String,
        /// The client's own words.
        detail: String,
    },
    /// The store did not answer in time.
    #[error("the {backend} lease store at {target} did not answer within {} ms", .after.as_millis())]
    Timeout {
        /// `postgres`, `redis` or `etcd`.
        backend: &'static str,
        /// Where (no password).
        target: String,
        /// How long was waited.
        after: Duration,
    },
    /// Every machine id in the range is held by a live lease.
    #[error(
        "all machine ids in {first}..={last} are leased in the {backend} store at {target}: none issued; wait for a lease to expire, release one (nonceforge lease release), or use another namespace"
    )]
    AllTaken {
        /// `postgres`, `redis` or `etcd`.
        backend: &'static str,
        /// Where (no password).
        target: String,
        /// The first id of the range.
        first: u16,
        /// The last id of the range.
        last: u16,
    },
    /// The store answered with an error.
    #[error("the {backend} lease store at {target} failed: {detail}")]
    Store {
        /// `postgres`, `redis` or `etcd`.
        backend: &'static str,
        /// Where (no password).
        target: String,
        /// The store's own words.
        detail: String,
    },
    /// The store holds something this client will not trust, so nothing was
    /// leased: records of another protocol version, a malformed record, lease
    /// tables or a schema owned by another role, a trigger on a lease table.
    #[error("the {backend} lease store at {target} was refused: {detail}")]
    Refused {
        /// `postgres`, `redis` or `etcd`.
        backend: &'static str,
        /// Where (no password).
        target: String,
        /// What was found, and what to do about it.
        detail: String,
    },
    /// The grant is gone (another holder took the id, an operator freed it, or
    /// the store lost its data): this lease is over for good.
    #[error(
        "the lease on machine id {machine_id} was lost: {reason}; nothing was issued after the local deadline"
    )]
    Lost {
        /// The machine id.
        machine_id: u16,
        /// Why.
        reason: crate::LostReason,
    },
    /// The generator does not belong to this lease.
    #[error("generator: {rule}")]
    Generator {
        /// Why it cannot be attached.
        rule: &'static str,
    },
    /// From the nonce library (building a generator: the clock is behind the
    /// previous holder's last timestamp by more than the allowed wait, say).
    #[error(transparent)]
    Nonce(#[from] nonceforge::Error),
}

/// This crate's result type.
pub type Result<T, E = LeaseError> = std::result::Result<T, E>;
