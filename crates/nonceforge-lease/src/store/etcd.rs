//! etcd v3, lease protocol 2: `/{ns}/meta` ("2 {incarnation}") is the
//! namespace's record; `/{ns}/lease/{id}` ("{grant} {holder}") exists while an
//! etcd lease (TTL, kept alive) holds it, created by a transaction only if
//! absent; `/{ns}/rec/{id}` ("v2 {grant} {token} {floor} {holder}", not
//! attached to a lease) keeps the id's history. The fencing token is the
//! revision at which the lease key was created (etcd's revisions only grow,
//! also when keys are deleted: a wiped prefix does not reset them).
//! etcd replicates through Raft: a lease survives the loss of a minority of
//! members, and a new leader extends every lease rather than shortening one.

use super::{Ask, Grant, LostReason, Record, Renewal, StoreError, StoreInfo, random_id};
use etcd_client::{
    Client, Compare, CompareOp, ConnectOptions, GetOptions, LeaseKeepAliveStream, LeaseKeeper,
    PutOptions, Txn, TxnOp, TxnOpResponse,
};
use nonceforge::Layout;
use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

mod record;
use record::{
    lease_key, meta_key, meta_value, ours, parse_meta, parse_rec, rec_key, rec_value, ttl_secs,
};

pub(crate) struct EtcdStore {
    client: Client,
    /// The keep-alive stream of one etcd lease, kept between renewals of
    /// it; a pool's connection renews many: another lease's opens its own.
    keeper: Option<(i64, LeaseKeeper, LeaseKeepAliveStream)>,
}

/// The least time one member is given to connect and answer before the next is tried.
const MIN_MEMBER_TIMEOUT: Duration = Duration::from_millis(100);

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
        auth: Option<&(String, String)>,
        budget: Duration,
    ) -> Result<Self, StoreError> {
        let member = (budget / endpoints.len().max(1) as u32).max(MIN_MEMBER_TIMEOUT);
        static PREFERRED: AtomicUsize = AtomicUsize::new(0);
        let first = PREFERRED.load(Ordering::Relaxed);
        let mut last_err = StoreError::conn("no endpoint");
        for k in 0..endpoints.len() {
            let i = (first + k) % endpoints.len();
            let mut options = ConnectOptions::new();
            if let Some((user, password)) = auth {
                options = options.with_user(user.clone(), password.clone());
            }
            let options = options
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

    /// The namespace's incarnation, creating its record when there is none —
    /// unless records of another protocol are there, or the namespace is of
    /// another layout.
    async fn meta(&mut self, ns: &str, layout: Layout) -> Result<String, StoreError> {
        let mk = meta_key(ns);
        loop {
            let got = self.client.get(mk.clone(), None).await.map_err(err)?;
            if let Some(kv) = got.kvs().first() {
                let (incarnation, recorded) = parse_meta(&mk, kv.value())?;
                if recorded != layout {
                    return Err(super::layout_refusal(ns, recorded.name(), layout));
                }
                return Ok(incarnation);
            }
            // No record of the namespace: new, or wiped. Records left from
            // protocol 1 mean its members may be running: refuse.
            let recs = self
                .client
                .get(format!("/{ns}/rec/"), Some(GetOptions::new().with_prefix()))
                .await
                .map_err(err)?;
            for kv in recs.kvs() {
                let key = String::from_utf8_lossy(kv.key()).into_owned();
                parse_rec(&key, kv.value())?;
            }
            let txn = Txn::new()
                .when(vec![Compare::create_revision(
                    mk.clone(),
                    CompareOp::Equal,
                    0,
                )])
                .and_then(vec![TxnOp::put(
                    mk.clone(),
                    meta_value(&random_id(), layout),
                    None,
                )]);
            self.client.txn(txn).await.map_err(err)?;
        }
    }

    /// Creates the lease key for `id` if absent (and the namespace's record is
    /// still `incarnation`), attached to a fresh etcd lease, and writes the
    /// record; `prev_rec` set: only if the record is still that (re-taking
    /// our own expired lease). None: someone else has it, or the namespace's
    /// record changed. The etcd lease is revoked whenever no grant comes of it.
    async fn take(
        &mut self,
        ask: &Ask<'_>,
        id: u16,
        cap: u64,
        grant_id: &str,
        incarnation: &str,
        prev_rec: Option<&[u8]>,
    ) -> Result<Option<Grant>, StoreError> {
        let lease = self
            .client
            .lease_grant(ttl_secs(ask.ttl), None)
            .await
            .map_err(err)?
            .id();
        let got = self
            .take_with(ask, id, cap, grant_id, incarnation, prev_rec, lease)
            .await;
        if !matches!(got, Ok(Some(_))) {
            let _ = self.client.lease_revoke(lease).await;
        }
        got
    }

    #[allow(clippy::too_many_arguments)]
    async fn take_with(
        &mut self,
        ask: &Ask<'_>,
        id: u16,
        cap: u64,
        grant_id: &str,
        incarnation: &str,
        prev_rec: Option<&[u8]>,
        lease: i64,
    ) -> Result<Option<Grant>, StoreError> {
        let ns = ask.namespace;
        let (lk, rk) = (lease_key(ns, id), rec_key(ns, id));
        let mut when = vec![
            Compare::create_revision(lk.clone(), CompareOp::Equal, 0),
            Compare::value(
                meta_key(ns),
                CompareOp::Equal,
                meta_value(incarnation, ask.layout),
            ),
        ];
        if let Some(prev) = prev_rec {
            when.push(Compare::value(rk.clone(), CompareOp::Equal, prev));
        }
        let txn = Txn::new().when(when).and_then(vec![
            TxnOp::put(
                lk.clone(),
                format!("{grant_id} {}", ask.holder),
                Some(PutOptions::new().with_lease(lease)),
            ),
            TxnOp::get(rk.clone(), None),
        ]);
        let resp = self.client.txn(txn).await.map_err(err)?;
        if !resp.succeeded() {
            return Ok(None);
        }
        let token = resp
            .header()
            .map(|h| h.revision())
            .filter(|&r| r > 0)
            .ok_or_else(|| StoreError::answer("a transaction's answer had no revision"))?
            as u64;
        let old = resp.op_responses().into_iter().find_map(|r| match r {
            TxnOpResponse::Get(g) => Some(g.kvs().first().map(|kv| kv.value().to_vec())),
            _ => None,
        });
        let old = old.flatten().map(|v| parse_rec(&rk, &v));
        let grant = Grant {
            machine_id: id,
            token,
            floor_unix_ms: old
                .as_ref()
                .and_then(|r| r.as_ref().ok())
                .map_or(0, |r| r.floor),
            history: old.is_some(),
            grant_id: grant_id.to_owned(),
            incarnation: incarnation.to_owned(),
            etcd_lease: lease,
        };
        if let Some(Err(e)) = old {
            // Give the key back: a record we cannot read is not ours to overwrite.
            let undo = Txn::new()
                .when(vec![Compare::create_revision(
                    lk,
                    CompareOp::Equal,
                    token as i64,
                )])
                .and_then(vec![TxnOp::delete(lease_key(ns, id), None)]);
            let _ = self.client.txn(undo).await;
            return Err(e);
        }
        // Record the new floor while the key is ours (nothing issues before this).
        if !self
            .write_rec(ask, &grant, grant.floor_unix_ms.max(cap))
            .await?
        {
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
        let txn = Txn::new()
            .when(ours(ask.namespace, grant, ask.layout))
            .and_then(vec![TxnOp::put(
                rec_key(ask.namespace, grant.machine_id),
                rec_value(&grant.grant_id, grant.token, floor, ask.holder),
                None,
            )]);
        Ok(self.client.txn(txn).await.map_err(err)?.succeeded())
    }

    /// Why `grant` is no longer ours.
    async fn lost_reason(&mut self, ns: &str, grant: &Grant) -> Result<LostReason, StoreError> {
        let mk = meta_key(ns);
        let meta = self.client.get(mk.clone(), None).await.map_err(err)?;
        match meta.kvs().first() {
            Some(kv)
                if parse_meta(&mk, kv.value()).is_ok_and(|(inc, _)| inc == grant.incarnation) => {}
            _ => return Ok(LostReason::StoreLostData),
        }
        let rk = rec_key(ns, grant.machine_id);
        let rec = self.client.get(rk.clone(), None).await.map_err(err)?;
        // A store restored from an older snapshot: its revision (restored
        // without --bump-revision) or the id's record is below this grant.
        if rec
            .header()
            .is_some_and(|h| (h.revision().max(0) as u64) < grant.token)
        {
            return Ok(LostReason::StoreWentBack);
        }
        Ok(match rec.kvs().first() {
            None => LostReason::StoreLostData,
            Some(kv) => match parse_rec(&rk, kv.value())? {
                r if r.grant != grant.grant_id && r.token < grant.token => {
                    LostReason::StoreWentBack
                }
                r if r.grant.is_empty() => LostReason::Evicted,
                _ => LostReason::Taken,
            },
        })
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
        grant_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        'again: loop {
            let incarnation = self.meta(ask.namespace, ask.layout).await?;
            let mut round = 0;
            while let Some(ids) = super::candidates(&ids, round) {
                round += 1;
                for id in self.free_among(ask.namespace, &ids).await? {
                    // Lost a race for this id, or the namespace's record
                    // changed: the next one, or look again.
                    match self
                        .take(ask, id, cap, grant_id, &incarnation, None)
                        .await?
                    {
                        Some(grant) => return Ok(Some(grant)),
                        None if self.meta(ask.namespace, ask.layout).await? != incarnation => {
                            continue 'again;
                        }
                        None => {}
                    }
                }
            }
            return Ok(None);
        }
    }

    /// The ids of `ids` without a lease key, in their order: one read of the
    /// namespace's lease keys (keys only) for a small range searched whole,
    /// one transaction of reads (keys only) for a sample.
    async fn free_among(&mut self, ns: &str, ids: &[u16]) -> Result<Vec<u16>, StoreError> {
        let prefix = format!("/{ns}/lease/");
        if ids.len() as u32 > super::SAMPLE {
            // A set: a wide namespace may hold tens of thousands of keys.
            let taken: std::collections::HashSet<u16> = self
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
            return Ok(ids
                .iter()
                .copied()
                .filter(|id| !taken.contains(id))
                .collect());
        }
        let reads = ids
            .iter()
            .map(|&id| TxnOp::get(lease_key(ns, id), Some(GetOptions::new().with_keys_only())))
            .collect::<Vec<_>>();
        let resp = self
            .client
            .txn(Txn::new().and_then(reads))
            .await
            .map_err(err)?;
        let held: Vec<bool> = resp
            .op_responses()
            .into_iter()
            .map(|r| matches!(r, TxnOpResponse::Get(g) if !g.kvs().is_empty()))
            .collect();
        Ok(ids
            .iter()
            .zip(held)
            .filter(|(_, h)| !h)
            .map(|(&id, _)| id)
            .collect())
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        let mut ttl = 1;
        if self
            .keeper
            .as_ref()
            .is_none_or(|(id, ..)| *id != grant.etcd_lease)
        {
            self.keeper = None;
            match self.client.lease_keep_alive(grant.etcd_lease).await {
                Ok((k, s)) => self.keeper = Some((grant.etcd_lease, k, s)),
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
        if let Some((_, keeper, stream)) = self.keeper.as_mut() {
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
            // nobody has taken it since (the record is still this grant's).
            self.keeper = None;
            let rk = rec_key(ask.namespace, grant.machine_id);
            let rec = self.client.get(rk.clone(), None).await.map_err(err)?;
            let Some(kv) = rec.kvs().first() else {
                return Ok(Renewal::Lost(self.lost_reason(ask.namespace, grant).await?));
            };
            if parse_rec(&rk, kv.value())?.grant != grant.grant_id {
                return Ok(Renewal::Lost(self.lost_reason(ask.namespace, grant).await?));
            }
            let prev = kv.value().to_vec();
            let (grant_id, incarnation) = (grant.grant_id.clone(), grant.incarnation.clone());
            return match self
                .take(
                    ask,
                    grant.machine_id,
                    cap,
                    &grant_id,
                    &incarnation,
                    Some(&prev),
                )
                .await?
            {
                Some(mut g) => {
                    g.floor_unix_ms = grant.floor_unix_ms;
                    g.history = grant.history;
                    *grant = g;
                    Ok(Renewal::Held)
                }
                None => Ok(Renewal::Lost(self.lost_reason(ask.namespace, grant).await?)),
            };
        }
        if self.write_rec(ask, grant, cap).await? {
            Ok(Renewal::Held)
        } else {
            Ok(Renewal::Lost(self.lost_reason(ask.namespace, grant).await?))
        }
    }

    pub(crate) async fn release(
        &mut self,
        ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let txn = Txn::new()
            .when(ours(ask.namespace, grant, ask.layout))
            .and_then(vec![
                TxnOp::put(
                    rec_key(ask.namespace, grant.machine_id),
                    rec_value("", grant.token, floor, ""),
                    None,
                ),
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
    ) -> Result<(StoreInfo, Vec<Record>), StoreError> {
        let mk = meta_key(namespace);
        let meta = self.client.get(mk.clone(), None).await.map_err(err)?;
        let info = match meta.kvs().first() {
            Some(kv) => {
                let (incarnation, layout) = parse_meta(&mk, kv.value())?;
                StoreInfo {
                    protocol: "2".into(),
                    incarnation,
                    layout: layout.name().into(),
                }
            }
            None => StoreInfo::default(),
        };
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
                let value = String::from_utf8_lossy(kv.value()).into_owned();
                let holder = value
                    .split_once(' ')
                    .map_or(value.clone(), |(_, h)| h.to_owned());
                live.insert(id, (kv.lease(), holder));
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
            let rec = parse_rec(&String::from_utf8_lossy(kv.key()), kv.value())?;
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
                holder: live.get(&id).map(|(_, h)| h.clone()).unwrap_or(rec.holder),
                token: rec.token,
                expires_in,
                floor_unix_ms: rec.floor,
            });
        }
        out.sort_by_key(|r| r.machine_id);
        Ok((info, out))
    }

    pub(crate) async fn evict(
        &mut self,
        namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let (lk, rk) = (
            lease_key(namespace, machine_id),
            rec_key(namespace, machine_id),
        );
        let got = self.client.get(lk.clone(), None).await.map_err(err)?;
        let Some(kv) = got.kvs().first() else {
            return Ok(false);
        };
        let value = String::from_utf8_lossy(kv.value()).into_owned();
        let held_by = value.split_once(' ').map_or("", |(_, h)| h);
        if holder.is_some_and(|h| h != held_by) {
            return Ok(false);
        }
        let mut then = vec![TxnOp::delete(lk.clone(), None)];
        let mut when = vec![Compare::mod_revision(
            lk.clone(),
            CompareOp::Equal,
            kv.mod_revision(),
        )];
        let rec = self.client.get(rk.clone(), None).await.map_err(err)?;
        if let Some(r) = rec.kvs().first() {
            let parsed = parse_rec(&rk, r.value())?;
            when.push(Compare::mod_revision(
                rk.clone(),
                CompareOp::Equal,
                r.mod_revision(),
            ));
            then.push(TxnOp::put(
                rk,
                rec_value("", parsed.token, parsed.floor, ""),
                None,
            ));
        }
        let txn = Txn::new().when(when).and_then(then);
        Ok(self.client.txn(txn).await.map_err(err)?.succeeded())
    }
}
