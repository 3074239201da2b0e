//! etcd v3: `/{ns}/lease/{id}` exists while an etcd lease (TTL, kept alive)
//! holds it, created by a transaction only if absent; `/{ns}/rec/{id}`, not
//! attached to a lease, keeps "token floor holder". The fencing token is the
//! revision at which the lease key was created (etcd's revisions only grow).
//! etcd replicates through Raft: a lease survives the loss of a minority of
//! members, and a new leader extends every lease rather than shortening one.

use super::{Ask, Grant, Record, Renewal, StoreError};
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, LeaseKeepAliveStream, LeaseKeeper,
    PutOptions, Txn, TxnOp, TxnOpResponse,
};
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub(crate) struct EtcdStore {
    client: Client,
    keeper: Option<(LeaseKeeper, LeaseKeepAliveStream)>,
}

/// The least time one member is given to connect and answer before the next is tried.
const MIN_MEMBER_TIMEOUT: Duration = Duration::from_millis(100);

fn lease_key(ns: &str, id: u16) -> String {
    format!("/{ns}/lease/{id}")
}

fn rec_key(ns: &str, id: u16) -> String {
    format!("/{ns}/rec/{id}")
}

/// The record's key, and the condition "the lease key is the one this grant
/// created" (its creation revision is the grant's token).
fn ours(ns: &str, grant: &Grant) -> (String, Compare) {
    let still = Compare::create_revision(
        lease_key(ns, grant.machine_id),
        CompareOp::Equal,
        grant.token as i64,
    );
    (rec_key(ns, grant.machine_id), still)
}

fn rec_value(token: u64, floor: u64, holder: &str) -> String {
    format!("{token} {floor} {holder}")
}

/// (token, floor, holder) from a record's value.
fn parse_rec(v: &[u8]) -> (u64, u64, String) {
    let s = String::from_utf8_lossy(v);
    let mut it = s.splitn(3, ' ');
    let token = it.next().and_then(|t| t.parse().ok()).unwrap_or(0);
    let floor = it.next().and_then(|t| t.parse().ok()).unwrap_or(0);
    (token, floor, it.next().unwrap_or("").to_owned())
}

fn err(e: etcd_client::Error) -> StoreError {
    match e {
        // gRPC codes 1 cancelled, 2 unknown, 4 deadline exceeded, 14 unavailable:
        // the member is gone or busy; any other code is the server's answer.
        etcd_client::Error::GRpcStatus(ref s) if ![1, 2, 4, 14].contains(&(s.code() as i32)) => {
            StoreError::answer(s.message())
        }
        other => StoreError::conn(other),
    }
}

/// The etcd TTL for a lease of `ttl`: whole seconds, rounded up (a longer lease
/// in the store only makes the next holder wait longer; our deadline is ours).
fn ttl_secs(ttl: Duration) -> i64 {
    ttl.as_millis().div_ceil(1000).max(1) as i64
}

impl EtcdStore {
    /// Connects to one member, trying them in turn from the last that worked.
    ///
    /// One member at a time, not the client's balanced channel over all of
    /// them: that channel keeps sending a share of requests to a dead member
    /// (measured: with one of three members killed, renewals kept failing until
    /// a 6 s lease lapsed), so
    /// a failed request here drops the connection and the next one moves on.
    /// `budget` is shared among the members: a hung one is given up on in time
    /// to try the others.
    pub(crate) async fn connect(
        endpoints: &[String],
        budget: Duration,
    ) -> Result<Self, StoreError> {
        let member = (budget / endpoints.len().max(1) as u32).max(MIN_MEMBER_TIMEOUT);
        static PREFERRED: AtomicUsize = AtomicUsize::new(0);
        let first = PREFERRED.load(Ordering::Relaxed);
        let mut last_err = StoreError::conn("no endpoint");
        for k in 0..endpoints.len() {
            let i = (first + k) % endpoints.len();
            let options = ConnectOptions::new()
                .with_connect_timeout(member)
                .with_timeout(Duration::from_secs(5))
                .with_keep_alive(Duration::from_secs(1), Duration::from_secs(2))
                .with_require_leader(true);
            let tried = tokio::time::timeout(member, async {
                let mut client = Client::connect([&endpoints[i]], Some(options))
                    .await
                    .map_err(StoreError::conn)?;
                // Connected lazily: ask something, so a dead member fails here.
                client.status().await.map_err(err)?;
                Ok::<_, StoreError>(client)
            })
            .await
            .unwrap_or_else(|_| Err(StoreError::conn(format!("{} did not answer", endpoints[i]))));
            match tried {
                Ok(client) => {
                    PREFERRED.store(i, Ordering::Relaxed);
                    return Ok(EtcdStore {
                        client,
                        keeper: None,
                    });
                }
                Err(e) => {
                    // Next time, start with the member after this one.
                    PREFERRED.store((i + 1) % endpoints.len(), Ordering::Relaxed);
                    last_err = e;
                }
            }
        }
        Err(last_err)
    }

    /// Creates the lease key for `id` if absent, attached to a fresh etcd lease,
    /// and writes the record; `prev_rec` set: only if the record is still that
    /// (re-taking our own expired lease). None: someone else has it.
    async fn take(
        &mut self,
        ask: &Ask<'_>,
        id: u16,
        cap: u64,
        prev_rec: Option<&[u8]>,
    ) -> Result<Option<Grant>, StoreError> {
        let lease = self
            .client
            .lease_grant(ttl_secs(ask.ttl), None)
            .await
            .map_err(err)?
            .id();
        let (lk, rk) = (lease_key(ask.namespace, id), rec_key(ask.namespace, id));
        let mut when = vec![Compare::create_revision(lk.clone(), CompareOp::Equal, 0)];
        if let Some(prev) = prev_rec {
            when.push(Compare::value(rk.clone(), CompareOp::Equal, prev));
        }
        let txn = Txn::new().when(when).and_then(vec![
            TxnOp::put(
                lk.clone(),
                ask.holder,
                Some(PutOptions::new().with_lease(lease)),
            ),
            TxnOp::get(rk.clone(), None),
        ]);
        let resp = self.client.txn(txn).await.map_err(err)?;
        if !resp.succeeded() {
            let _ = self.client.lease_revoke(lease).await;
            return Ok(None);
        }
        let token = resp.header().map(|h| h.revision()).unwrap_or(0) as u64;
        let old_floor = resp
            .op_responses()
            .into_iter()
            .find_map(|r| match r {
                TxnOpResponse::Get(g) => Some(
                    g.kvs()
                        .first()
                        .map(|kv| parse_rec(kv.value()).1)
                        .unwrap_or(0),
                ),
                _ => None,
            })
            .unwrap_or(0);
        let grant = Grant {
            machine_id: id,
            token,
            floor_unix_ms: old_floor,
            etcd_lease: lease,
        };
        // Record the new floor while the key is ours (nothing issues before this).
        if !self.write_rec(ask, &grant, old_floor.max(cap)).await? {
            return Ok(None);
        }
        self.keeper = None;
        Ok(Some(grant))
    }

    /// Writes the record if the lease key is still the one we created.
    async fn write_rec(
        &mut self,
        ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let (rk, still_ours) = ours(ask.namespace, grant);
        let txn = Txn::new().when(vec![still_ours]).and_then(vec![TxnOp::put(
            rk,
            rec_value(grant.token, floor, ask.holder),
            None,
        )]);
        Ok(self.client.txn(txn).await.map_err(err)?.succeeded())
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
    ) -> Result<Option<Grant>, StoreError> {
        loop {
            let prefix = format!("/{}/lease/", ask.namespace);
            let taken: Vec<u16> = self
                .client
                .get(
                    prefix.clone(),
                    Some(GetOptions::new().with_prefix().with_keys_only()),
                )
                .await
                .map_err(err)?
                .kvs()
                .iter()
                .filter_map(|kv| {
                    std::str::from_utf8(&kv.key()[prefix.len()..])
                        .ok()?
                        .parse()
                        .ok()
                })
                .collect();
            let Some(id) = ids.clone().find(|id| !taken.contains(id)) else {
                return Ok(None);
            };
            // Lost a race for this id: look again.
            if let Some(grant) = self.take(ask, id, cap, None).await? {
                return Ok(Some(grant));
            }
        }
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        let mut ttl = 1;
        if self.keeper.is_none() {
            match self.client.lease_keep_alive(grant.etcd_lease).await {
                Ok(k) => self.keeper = Some(k),
                // A new keep-alive stream on an expired etcd lease: the client
                // reads the first answer (TTL 0) and reports "lease not found".
                // That is the TTL-0 answer below, not an unreachable store
                // (found by node/test/lease.test.js: a holder stopped past its
                // TTL before its first renewal retried forever, never `Lost`).
                Err(etcd_client::Error::LeaseKeepAliveError(m)) if m.contains("not found") => {
                    ttl = 0;
                }
                Err(e) => return Err(err(e)),
            }
        }
        if let Some((keeper, stream)) = self.keeper.as_mut() {
            let alive = async {
                keeper.keep_alive().await?;
                stream.message().await
            }
            .await;
            ttl = match alive {
                Ok(Some(r)) => r.ttl(),
                Ok(None) => {
                    self.keeper = None;
                    return Err(StoreError::conn("keep-alive stream closed"));
                }
                Err(e) => {
                    self.keeper = None;
                    return Err(err(e));
                }
            };
        }
        if ttl <= 0 {
            // The etcd lease expired and its key is gone: re-take the id if
            // nobody has taken it since (the record is still ours).
            self.keeper = None;
            let rk = rec_key(ask.namespace, grant.machine_id);
            let rec = self.client.get(rk, None).await.map_err(err)?;
            let Some(kv) = rec.kvs().first() else {
                return Ok(Renewal::Lost);
            };
            if parse_rec(kv.value()).0 != grant.token {
                return Ok(Renewal::Lost);
            }
            let prev = kv.value().to_vec();
            return match self.take(ask, grant.machine_id, cap, Some(&prev)).await? {
                Some(mut g) => {
                    g.floor_unix_ms = grant.floor_unix_ms;
                    *grant = g;
                    Ok(Renewal::Held)
                }
                None => Ok(Renewal::Lost),
            };
        }
        Ok(if self.write_rec(ask, grant, cap).await? {
            Renewal::Held
        } else {
            Renewal::Lost
        })
    }

    pub(crate) async fn release(
        &mut self,
        ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let (rk, still_ours) = ours(ask.namespace, grant);
        let txn = Txn::new().when(vec![still_ours]).and_then(vec![
            TxnOp::put(rk, rec_value(grant.token, floor, ""), None),
            TxnOp::delete(lease_key(ask.namespace, grant.machine_id), None),
        ]);
        let done = self.client.txn(txn).await.map_err(err)?.succeeded();
        self.keeper = None;
        let _ = self.client.lease_revoke(grant.etcd_lease).await;
        Ok(done)
    }

    pub(crate) async fn status(
        &mut self,
        namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<Vec<Record>, StoreError> {
        let opts = || Some(GetOptions::new().with_prefix());
        let recs = self
            .client
            .get(format!("/{namespace}/rec/"), opts())
            .await
            .map_err(err)?;
        let leases = self
            .client
            .get(format!("/{namespace}/lease/"), opts())
            .await
            .map_err(err)?;
        let mut live: HashMap<u16, (i64, String)> = HashMap::new();
        let lp = format!("/{namespace}/lease/").len();
        for kv in leases.kvs() {
            if let Some(id) = std::str::from_utf8(&kv.key()[lp..])
                .ok()
                .and_then(|s| s.parse().ok())
            {
                live.insert(
                    id,
                    (kv.lease(), String::from_utf8_lossy(kv.value()).into_owned()),
                );
            }
        }
        let rp = format!("/{namespace}/rec/").len();
        let mut out = Vec::new();
        for kv in recs.kvs() {
            let Some(id) = std::str::from_utf8(&kv.key()[rp..])
                .ok()
                .and_then(|s| s.parse::<u16>().ok())
            else {
                continue;
            };
            if !ids.contains(&id) {
                continue;
            }
            let (token, floor, holder) = parse_rec(kv.value());
            let expires_in = match live.get(&id) {
                Some((lease, _)) => {
                    let ttl = self
                        .client
                        .lease_time_to_live(*lease, None)
                        .await
                        .map_err(err)?
                        .ttl();
                    (ttl > 0).then(|| Duration::from_secs(ttl as u64))
                }
                None => None,
            };
            out.push(Record {
                machine_id: id,
                holder: live.get(&id).map(|(_, h)| h.clone()).unwrap_or(holder),
                token,
                expires_in,
                floor_unix_ms: floor,
            });
        }
        out.sort_by_key(|r| r.machine_id);
        Ok(out)
    }

    pub(crate) async fn evict(
        &mut self,
        namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let lk = lease_key(namespace, machine_id);
        let mut when = vec![Compare::create_revision(lk.clone(), CompareOp::Greater, 0)];
        if let Some(h) = holder {
            when.push(Compare::value(lk.clone(), CompareOp::Equal, h));
        }
        let txn = Txn::new()
            .when(when)
            .and_then(vec![TxnOp::delete(lk, None)]);
        Ok(self.client.txn(txn).await.map_err(err)?.succeeded())
    }
}
