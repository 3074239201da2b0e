//! The three stores behind one interface. Every operation is one request (or a
//! few, for etcd) and runs under the caller's timeout.

mod etcd;
mod pg;
mod redis;

use crate::error::{LeaseError, Result};
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
    /// etcd only: the etcd lease the key is attached to.
    pub(crate) etcd_lease: i64,
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
    /// Someone else has taken the id.
    Lost,
}

/// What every request needs to know besides the store.
#[derive(Debug, Clone)]
pub(crate) struct Ask<'a> {
    pub(crate) namespace: &'a str,
    pub(crate) holder: &'a str,
    pub(crate) ttl: Duration,
}

pub(crate) enum Store {
    Pg(pg::PgStore),
    Redis(redis::RedisStore),
    Etcd(Box<etcd::EtcdStore>),
}

impl Store {
    /// Connects (and, for PostgreSQL, creates the lease table when missing).
    /// `budget`: how long connecting may take in all (etcd shares it among members).
    pub(crate) async fn connect(
        backend: &Backend,
        namespace: &str,
        budget: Duration,
    ) -> Result<Store> {
        let store = match &backend.spec {
            Spec::Postgres(config) => pg::PgStore::connect(config, namespace).await.map(Store::Pg),
            Spec::Redis(info) => redis::RedisStore::connect(info).await.map(Store::Redis),
            Spec::Etcd(endpoints) => etcd::EtcdStore::connect(endpoints, budget)
                .await
                .map(|s| Store::Etcd(Box::new(s))),
        };
        store.map_err(|e| classify(backend, e))
    }

    pub(crate) async fn acquire(
        &mut self,
        backend: &Backend,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap_unix_ms: u64,
    ) -> Result<Grant> {
        let (first, last) = (*ids.start(), *ids.end());
        let got = match self {
            Store::Pg(s) => s.acquire(ask, ids, cap_unix_ms).await,
            Store::Redis(s) => s.acquire(ask, ids, cap_unix_ms).await,
            Store::Etcd(s) => s.acquire(ask, ids, cap_unix_ms).await,
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
    ) -> Result<Vec<Record>> {
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
/// gone (then the keeper reconnects).
#[derive(Debug)]
pub(crate) struct StoreError {
    pub(crate) detail: String,
    pub(crate) connection: bool,
}

impl StoreError {
    pub(crate) fn conn(e: impl std::fmt::Display) -> Self {
        StoreError {
            detail: e.to_string(),
            connection: true,
        }
    }
    pub(crate) fn answer(e: impl std::fmt::Display) -> Self {
        StoreError {
            detail: e.to_string(),
            connection: false,
        }
    }
}

fn classify(backend: &Backend, e: StoreError) -> LeaseError {
    if e.connection {
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
