//! The three stores behind one interface. Every operation is one request (or a
//! few, for etcd) and runs under the caller's timeout.

mod etcd;
mod pg;
mod redis;

use crate::error::{LeaseError, Result};
use crate::options::FastStart;
use crate::spec::{Backend, Spec};
use std::ops::RangeInclusive;
use std::time::Duration;

/// What acquiring gave us.
#[derive(Debug, Clone)]
pub(crate) struct Grant {
    pub(crate) machine_id: u16,
    /// The fencing token: strictly greater than every earlier grant's in this store.
    pub(crate) token: u64,
    /// The highest timestamp (Unix ms) any earlier holder of this id may have
    /// issued: the new generator starts above it.
    pub(crate) floor_unix_ms: u64,
    /// Whether the store had a record of the id. Without one it cannot show
    /// that no earlier holder is still issuing (never used, or its data was
    /// lost): the keeper then starts a full TTL and margin above its clock.
    pub(crate) history: bool,
    /// This grant's identity: 128 random bits in hex, drawn by the client.
    /// Renewals and the release succeed only for it, so a grant lost with the
    /// store's data cannot be mistaken for a later one.
    pub(crate) grant_id: String,
    /// The store's incarnation when the grant was made: drawn by the member
    /// that created the namespace's record. A renewal that finds another one
    /// (the store came back empty) reports the lease lost.
    pub(crate) incarnation: String,
    /// etcd only: the etcd lease the key is attached to.
    pub(crate) etcd_lease: i64,
}

/// Why a lease was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LostReason {
    /// Another grant holds the id (it was free after this holder's deadline).
    Taken,
    /// An operator freed the id (`nonceforge lease release --id`).
    Evicted,
    /// The store no longer knows this grant: its data was lost or replaced
    /// (restarted empty, flushed, restored, the namespace wiped or its tables
    /// dropped).
    StoreLostData,
    /// The store went back to an older copy of its data (an asynchronous
    /// replica promoted, a backup or snapshot restored): it shows the id
    /// under an older grant, or released, or its last token below this
    /// grant's. Another member may take the id at once; it starts above
    /// everything this holder may have issued (`docs/lease-protocol.md`).
    StoreWentBack,
}

impl LostReason {
    /// The reason's short name, as the bindings and logs give it: `taken`,
    /// `evicted`, `store` or `rollback`.
    pub fn as_str(self) -> &'static str {
        match self {
            LostReason::Taken => "taken",
            LostReason::Evicted => "evicted",
            LostReason::StoreLostData => "store",
            LostReason::StoreWentBack => "rollback",
        }
    }
}

impl std::fmt::Display for LostReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LostReason::Taken => "another holder took the id",
            LostReason::Evicted => "an operator released the id",
            LostReason::StoreLostData => {
                "the store lost its data (restarted empty, flushed, restored or wiped)"
            }
            LostReason::StoreWentBack => {
                "the store went back to an older copy of its data (a replica that was behind promoted, a backup or snapshot restored)"
            }
        })
    }
}

/// What the store says of the namespace itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreInfo {
    /// The lease protocol of the namespace's record (`2`), `1` for a
    /// namespace of protocol-1 members, empty when it has none yet.
    pub protocol: String,
    /// The store's incarnation (changes when the store loses its data).
    pub incarnation: String,
    /// The members' layout the namespace records (`standard` or `wide`;
    /// empty when it has no record yet).
    pub layout: String,
}

/// A range of at most this many ids is searched whole, lowest id first; a
/// wider one (the wide layout's) by random samples, so that acquiring costs
/// the same few round trips whatever the number held (docs/lease-protocol.md,
/// "Finding a free id"; testdata/vectors/lease-search.json ties Go's).
pub(crate) const SEARCH_WHOLE: u32 = 1024;
/// Ids tried in one round trip when sampling.
pub(crate) const SAMPLE: u32 = 64;
/// Rounds of samples before a wide range is searched whole, in chunks of
/// [`SEARCH_WHOLE`] (only a nearly full range gets there).
pub(crate) const SAMPLE_ROUNDS: u32 = 8;

/// The ids to try in round `round` (from 0) of an acquire, in order, or None
/// when every round is done: the whole range at once when it is small;
/// otherwise [`SAMPLE_ROUNDS`] samples of [`SAMPLE`] distinct random ids,
/// then the range in chunks, lowest first.
pub(crate) fn candidates(ids: &RangeInclusive<u16>, round: u32) -> Option<Vec<u16>> {
    let (first, last) = (u32::from(*ids.start()), u32::from(*ids.end()));
    let size = last - first + 1;
    if size <= SEARCH_WHOLE {
        return (round == 0).then(|| (first..=last).map(|i| i as u16).collect());
    }
    if round < SAMPLE_ROUNDS {
        let mut out: Vec<u16> = Vec::with_capacity(SAMPLE as usize);
        while out.len() < SAMPLE as usize {
            let mut b = [0u8; 4 * SAMPLE as usize];
            getrandom::fill(&mut b).expect("the operating system's random generator failed");
            for c in b.chunks_exact(4) {
                let id = (first + u32::from_le_bytes(c.try_into().unwrap()) % size) as u16;
                if out.len() < SAMPLE as usize && !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        return Some(out);
    }
    let start = first + (round - SAMPLE_ROUNDS) * SEARCH_WHOLE;
    (start <= last).then(|| {
        (start..=last.min(start + SEARCH_WHOLE - 1))
            .map(|i| i as u16)
            .collect()
    })
}

/// 128 random bits in lower-case hex: grant ids and incarnations.
pub(crate) fn random_id() -> String {
    let mut b = [0u8; 16];
    // The OS's generator; a failure here is a broken system, and a constant
    // id would defeat the check it exists for.
    getrandom::fill(&mut b).expect("the operating system's random generator failed");
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One machine id as the store sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The machine id.
    pub machine_id: u16,
    /// Who holds it (empty: released).
    pub holder: String,
    /// The fencing token of its last grant.
    pub token: u64,
    /// Time left on the lease by the store's clock; `None` when expired or released.
    pub expires_in: Option<Duration>,
    /// The highest timestamp (Unix ms) its holders may have issued.
    pub floor_unix_ms: u64,
}

/// The answer to a renewal.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Renewal {
    /// Still ours (or re-taken: it had expired and nobody else had taken it).
    Held,
    /// The grant is gone, and why.
    Lost(LostReason),
}

/// What every request needs to know besides the store.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) holder: &'a str,
    pub(crate) ttl: Duration,
    /// The member's layout: the namespace's record states it (written by
    /// the member that creates the record; absent means standard).
    pub(crate) layout: nonceforge::Layout,
}

/// The refusal of a member whose layout is not the namespace's: one text for
/// every store (Go's `layoutRefusal` says the same).
pub(crate) fn layout_refusal(
    namespace: &str,
    recorded: &str,
    asked: nonceforge::Layout,
) -> StoreError {
    StoreError::refused(format!(
        "namespace {namespace:?} holds members of the {recorded} layout; this member asks for the {asked} layout: a fleet uses one layout (docs/contracts.md, \"The wide layout\"), so give it its own namespace"
    ))
}

pub(crate) enum Store {
    Pg(pg::PgStore),
    Redis(redis::RedisStore),
    Etcd(Box<etcd::EtcdStore>),
}

impl Store {
    /// Connects (and, for PostgreSQL, creates the lease table when missing).
    /// `budget`: how long connecting may take in all (etcd shares it among
    /// members); `request`: how long one request may take (Redis's `WAIT` takes half).
    pub(crate) async fn connect(
        backend: &Backend,
        namespace: &str,
        schema: &str,
        budget: Duration,
        fast: FastStart,
        request: Duration,
    ) -> Result<Store> {
        let verify = fast == FastStart::Verify;
        let store = match &backend.spec {
            Spec::Postgres(config) => pg::PgStore::connect(config, namespace, schema, verify)
                .await
                .map(Store::Pg),
            Spec::Redis(info) => {
                redis::RedisStore::connect(redis::Target::Server(info), verify, request)
                    .await
                    .map(Store::Redis)
            }
            Spec::RedisSentinel(s) => {
                redis::RedisStore::connect(redis::Target::Sentinel(s), verify, request)
                    .await
                    .map(Store::Redis)
            }
            Spec::RedisCluster(c) => {
                redis::RedisStore::connect(redis::Target::Cluster(c), verify, request)
                    .await
                    .map(Store::Redis)
            }
            Spec::Etcd(endpoints, auth) => {
                etcd::EtcdStore::connect(endpoints, auth.as_ref(), budget)
                    .await
                    .map(|s| Store::Etcd(Box::new(s)))
            }
        };
        store.map_err(|e| classify(backend, e))
    }

    /// [`FastStart::Verify`]: whether a write this store acknowledged (the
    /// last grant, for Redis) survives a failover, as far as this member can
    /// check; else why not.
    pub(crate) fn durable(&self) -> std::result::Result<(), String> {
        match self {
            Store::Pg(s) => s.durable(),
            Store::Redis(s) => s.durable(),
            // Raft: a write is acknowledged once a quorum has it, and a new
            // leader has every acknowledged write. Only a snapshot restore
            // goes back (docs/lease-protocol.md says what to do then).
            Store::Etcd(_) => Ok(()),
        }
    }

    pub(crate) async fn acquire(
        &mut self,
        backend: &Backend,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap_unix_ms: u64,
    ) -> Result<Grant> {
        let (first, last) = (*ids.start(), *ids.end());
        let grant_id = random_id();
        let got = match self {
            Store::Pg(s) => s.acquire(ask, ids, cap_unix_ms, &grant_id).await,
            Store::Redis(s) => s.acquire(ask, ids, cap_unix_ms, &grant_id).await,
            Store::Etcd(s) => s.acquire(ask, ids, cap_unix_ms, &grant_id).await,
        };
        match got.map_err(|e| classify(backend, e))? {
            Some(grant) => Ok(grant),
            None => Err(LeaseError::AllTaken {
                backend: backend.name(),
                target: backend.shown.clone(),
                first,
                last,
            }),
        }
    }

    pub(crate) async fn renew(
        &mut self,
        backend: &Backend,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap_unix_ms: u64,
    ) -> Result<Renewal> {
        match self {
            Store::Pg(s) => s.renew(ask, grant, cap_unix_ms).await,
            Store::Redis(s) => s.renew(ask, grant, cap_unix_ms).await,
            Store::Etcd(s) => s.renew(ask, grant, cap_unix_ms).await,
        }
        .map_err(|e| classify(backend, e))
    }

    /// Gives the id back, recording `floor_unix_ms`; false if it was no longer ours.
    pub(crate) async fn release(
        &mut self,
        backend: &Backend,
        ask: &Ask<'_>,
        grant: &Grant,
        floor_unix_ms: u64,
    ) -> Result<bool> {
        match self {
            Store::Pg(s) => s.release(ask, grant, floor_unix_ms).await,
            Store::Redis(s) => s.release(ask, grant, floor_unix_ms).await,
            Store::Etcd(s) => s.release(ask, grant, floor_unix_ms).await,
        }
        .map_err(|e| classify(backend, e))
    }

    /// Every id that has ever been leased in the range, held or not.
    pub(crate) async fn status(
        &mut self,
        backend: &Backend,
        namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<(StoreInfo, Vec<Record>)> {
        match self {
            Store::Pg(s) => s.status(namespace, ids).await,
            Store::Redis(s) => s.status(namespace, ids).await,
            Store::Etcd(s) => s.status(namespace, ids).await,
        }
        .map_err(|e| classify(backend, e))
    }

    /// Frees an id whoever holds it (or only if `holder` holds it); its floor
    /// stays. For operators: the process that held it must be gone.
    pub(crate) async fn evict(
        &mut self,
        backend: &Backend,
        namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool> {
        match self {
            Store::Pg(s) => s.evict(namespace, machine_id, holder).await,
            Store::Redis(s) => s.evict(namespace, machine_id, holder).await,
            Store::Etcd(s) => s.evict(namespace, machine_id, holder).await,
        }
        .map_err(|e| classify(backend, e))
    }
}

/// A store error in the client's words, and whether it means the connection is
/// gone (then the keeper reconnects) or the store's contents cannot be trusted.
#[derive(Debug)]
pub(crate) struct StoreError {
    pub(crate) detail: String,
    pub(crate) connection: bool,
    pub(crate) refused: bool,
}

impl StoreError {
    pub(crate) fn conn(e: impl std::fmt::Display) -> Self {
        StoreError {
            detail: e.to_string(),
            connection: true,
            refused: false,
        }
    }
    pub(crate) fn answer(e: impl std::fmt::Display) -> Self {
        StoreError {
            detail: e.to_string(),
            connection: false,
            refused: false,
        }
    }
    /// The store holds something this client will not trust: another
    /// protocol's records, a malformed record, objects owned by another role.
    pub(crate) fn refused(e: impl std::fmt::Display) -> Self {
        StoreError {
            detail: e.to_string(),
            connection: false,
            refused: true,
        }
    }
}

fn classify(backend: &Backend, e: StoreError) -> LeaseError {
    if e.refused {
        LeaseError::Refused {
            backend: backend.name(),
            target: backend.shown.clone(),
            detail: e.detail,
        }
    } else if e.connection {
        LeaseError::Unreachable {
            backend: backend.name(),
            target: backend.shown.clone(),
            detail: e.detail,
        }
    } else {
        LeaseError::Store {
            backend: backend.name(),
            target: backend.shown.clone(),
            detail: e.detail,
        }
    }
}

/// Milliseconds, for stores that count in them (at least 1).
pub(crate) fn ms(d: Duration) -> u64 {
    (d.as_millis() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::{SAMPLE, SAMPLE_ROUNDS, SEARCH_WHOLE, candidates};

    /// testdata/vectors/lease-search.json: the numbers Go's port reads too.
    #[test]
    fn search_numbers_are_the_vectors() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/vectors/lease-search.json"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert_eq!(v["search_whole"], SEARCH_WHOLE);
        assert_eq!(v["sample"], SAMPLE);
        assert_eq!(v["sample_rounds"], SAMPLE_ROUNDS);
    }

    #[test]
    fn candidates_whole_then_samples_then_chunks() {
        // A small range: whole, lowest first, in one round.
        assert_eq!(
            candidates(&(3..=9), 0).unwrap(),
            (3..=9).collect::<Vec<_>>()
        );
        assert!(candidates(&(3..=9), 1).is_none());
        assert_eq!(candidates(&(0..=1023), 0).unwrap().len(), 1024);
        // A wide one: samples of distinct ids in the range...
        let wide = 1000..=65_535;
        for round in 0..SAMPLE_ROUNDS {
            let mut s = candidates(&wide, round).unwrap();
            assert_eq!(s.len(), SAMPLE as usize);
            assert!(s.iter().all(|id| wide.contains(id)));
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), SAMPLE as usize, "an id twice in a sample");
        }
        // ...then every id, in chunks, lowest first, each once.
        let mut all = Vec::new();
        let mut round = SAMPLE_ROUNDS;
        while let Some(chunk) = candidates(&wide, round) {
            assert!(chunk.len() <= SEARCH_WHOLE as usize);
            all.extend(chunk);
            round += 1;
        }
        assert_eq!(all, wide.clone().collect::<Vec<_>>());
        // Samples differ from one acquire to the next.
        assert_ne!(candidates(&wide, 0), candidates(&wide, 0));
    }
}
