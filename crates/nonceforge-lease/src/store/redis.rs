//! Redis, lease protocol 2: `<ns>:tokens` is the namespace's record (a hash:
//! protocol, incarnation, last token — a hash where protocol 1 kept a counter,
//! so a protocol-1 client's `INCR` fails there instead of sharing the ids);
//! `<ns>:lease:<id>` (a hash with a TTL: grant, holder, token) is the lease;
//! `<ns>:rec:<id>` (a hash that never expires: grant, holder, token, floor)
//! keeps the id's history. In a Redis Cluster the namespace is a hash tag,
//! `{<ns>}:tokens` and so on, so all of a namespace's keys are in one slot
//! ([`Keys`]). Each operation is one Lua script (the `.lua` files beside this
//! one, which the Go module sends byte for byte), atomic on one server, and
//! every key it touches is passed in `KEYS`, as a cluster routes by them.
//!
//! What Redis cannot promise: replication is asynchronous, so a failover can
//! lose a lease that the old primary had granted, or bring back an older copy
//! of a record. The grant id and the incarnation make every holder whose
//! grant is gone stop at its next renewal (`rollback` where the record is
//! older than its grant), and every new grant starts a full TTL and margin
//! above the acquirer's clock unless the member starts fast
//! ([`crate::FastStart`]): with `verify`, each write then waits (`WAIT`) for
//! every replica connected when the member connected.

use super::{Ask, Grant, LostReason, Record, Renewal, StoreError, StoreInfo, ms};
use redis::aio::MultiplexedConnection;
use redis::cluster_async::ClusterConnection;
use redis::{ConnectionInfo, Script, Value};
use std::ops::RangeInclusive;
use std::sync::LazyLock;
use std::time::Duration;

pub(crate) struct RedisStore {
    conn: Conn,
    /// Whether it is a Redis Cluster (the namespace's keys carry a hash tag).
    cluster: bool,
    /// `FastStart::Verify`: how many replicas each write waits for (`WAIT`),
    /// or why the store cannot be checked (no replica connected, a replica
    /// answering).
    replicas: Result<usize, String>,
    /// Whether the last grant reached every replica, or why not.
    durable: Result<(), String>,
    wait_ms: u64,
}

/// The scripts, as the protocol states them (docs/lease-protocol.md).
pub(crate) const ACQUIRE_LUA: &str = include_str!("redis/acquire.lua");
pub(crate) const RENEW_LUA: &str = include_str!("redis/renew.lua");
pub(crate) const RELEASE_LUA: &str = include_str!("redis/release.lua");
pub(crate) const EVICT_LUA: &str = include_str!("redis/evict.lua");
pub(crate) const STATUS_LUA: &str = include_str!("redis/status.lua");

static ACQUIRE: LazyLock<Script> = LazyLock::new(|| Script::new(ACQUIRE_LUA));
static RENEW: LazyLock<Script> = LazyLock::new(|| Script::new(RENEW_LUA));
static RELEASE: LazyLock<Script> = LazyLock::new(|| Script::new(RELEASE_LUA));
static EVICT: LazyLock<Script> = LazyLock::new(|| Script::new(EVICT_LUA));
static STATUS: LazyLock<Script> = LazyLock::new(|| Script::new(STATUS_LUA));

/// Where a Redis store is.
pub(crate) enum Target<'a> {
    Server(&'a ConnectionInfo),
    Sentinel(&'a crate::spec::SentinelSpec),
    Cluster(&'a crate::spec::ClusterSpec),
}

/// The key names of one namespace, the one place they are written (the
/// scripts take them in `KEYS`; Go's `redisKeys` restates them, tied by
/// testdata/vectors/lease-redis-keys.json): `<ns>:tokens`, `<ns>:lease:<id>`,
/// `<ns>:rec:<id>`, with `{<ns>}` for `<ns>` in a Redis Cluster — a hash tag,
/// so the whole namespace is one slot and a script's keys are on one node.
/// (A namespace is `[a-z][a-z0-9_]*`: no braces of its own.)
pub(crate) struct Keys(String);

impl Keys {
    pub(crate) fn new(namespace: &str, cluster: bool) -> Keys {
        Keys(if cluster {
            format!("{{{namespace}}}")
        } else {
            namespace.to_owned()
        })
    }

    pub(crate) fn meta(&self) -> String {
        format!("{}:tokens", self.0)
    }

    pub(crate) fn lease(&self, id: u16) -> String {
        format!("{}:lease:{id}", self.0)
    }

    pub(crate) fn rec(&self, id: u16) -> String {
        format!("{}:rec:{id}", self.0)
    }

    /// The namespace's record, then each id's lease key and record: the
    /// `KEYS` of acquire and status.
    pub(crate) fn range(&self, ids: impl IntoIterator<Item = u16>) -> Vec<String> {
        let mut keys = vec![self.meta()];
        for id in ids {
            keys.push(self.lease(id));
            keys.push(self.rec(id));
        }
        keys
    }
}

/// One server's connection (directly or through the sentinels), or a Redis
/// Cluster's (redis-rs routes each script by its first key and follows
/// `MOVED` and `ASK` as slots move).
enum Conn {
    One(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl Conn {
    /// One server's multiplexed connection.
    async fn one(client: redis::Client) -> Result<Conn, StoreError> {
        let conn = client
            .get_multiplexed_async_connection()
            .await
            .map_err(StoreError::conn)?;
        Ok(Conn::One(conn))
    }
}

impl redis::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> redis::RedisFuture<'a, Value> {
        match self {
            Conn::One(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::One(c) => c.req_packed_commands(pipeline, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::One(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

fn err(e: redis::RedisError) -> StoreError {
    // READONLY: the server became a replica (a failover moved the primary):
    // connect again, through the sentinels where the URL names them.
    // CLUSTERDOWN, TRYAGAIN: a cluster between topologies (a shard failing
    // over): as unreachable, so the keeper tries again.
    use redis::{ErrorKind::Server, ServerErrorKind as S};
    let read_only = e.kind() == Server(S::ReadOnly);
    let settling = matches!(
        e.kind(),
        Server(S::ClusterDown | S::TryAgain | S::MasterDown)
    );
    if read_only
        || settling
        || e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
    {
        StoreError::conn(e)
    } else {
        StoreError::answer(e)
    }
}

fn text(v: &Value) -> Result<String, StoreError> {
    redis::from_redis_value_ref::<String>(v)
        .map_err(|e| StoreError::answer(format!("unexpected answer: {e}")))
}

/// A decimal field of a script's answer; anything else is an error (never 0).
fn number(v: &Value, what: &str) -> Result<i64, StoreError> {
    text(v)?
        .parse()
        .map_err(|_| StoreError::answer(format!("unexpected answer: {what} {v:?} is not a number")))
}

impl RedisStore {
    /// Connects to the server at `info`, to the primary the sentinels name
    /// now, or to a Redis Cluster through any of its nodes.
    pub(crate) async fn connect(
        target: Target<'_>,
        verify: bool,
        wait: Duration,
    ) -> Result<Self, StoreError> {
        let conn = match target {
            Target::Cluster(spec) => {
                let mut builder = redis::cluster::ClusterClientBuilder::new(spec.nodes.clone());
                if let Some(user) = &spec.user {
                    builder = builder.username(user);
                }
                if let Some(pw) = &spec.password {
                    builder = builder.password(pw.as_str());
                }
                let client = builder.build().map_err(StoreError::conn)?;
                Conn::Cluster(
                    client
                        .get_async_connection()
                        .await
                        .map_err(StoreError::conn)?,
                )
            }
            Target::Server(info) => {
                Conn::one(redis::Client::open(info.clone()).map_err(StoreError::conn)?).await?
            }
            Target::Sentinel(s) => {
                let node = redis::sentinel::SentinelNodeConnectionInfo::default()
                    .set_redis_connection_info(s.node.clone());
                let mut sentinel = redis::sentinel::SentinelClient::build(
                    s.sentinels.clone(),
                    s.service.clone(),
                    Some(node),
                    redis::sentinel::SentinelServerType::Master,
                )
                .map_err(StoreError::conn)?;
                let client = sentinel.async_get_client().await.map_err(|e| {
                    StoreError::conn(format!(
                        "no primary for service {:?} from the sentinels: {e}",
                        s.service
                    ))
                })?;
                Conn::one(client).await?
            }
        };
        Self::start(conn, verify, wait).await
    }

    /// Checks the connection and, with `verify`, what a write's durability
    /// can be told from.
    async fn start(mut conn: Conn, verify: bool, wait: Duration) -> Result<Self, StoreError> {
        // A handshake that fails (a wrong password, say) shows up here, not later.
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(err)?;
        let cluster = matches!(conn, Conn::Cluster(_));
        let replicas = if !verify {
            Err("fast_start is not verify".into())
        } else if cluster {
            Err(
                "Redis Cluster: verify does not check each shard's replicas (a shard's \
                 failover can promote a replica behind its primary); start slow, or \
                 declare it where the deployment makes acknowledged writes survive a failover"
                    .into(),
            )
        } else {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut conn)
                .await
                .map_err(err)?;
            replicas_of(&info)
        };
        Ok(RedisStore {
            conn,
            cluster,
            durable: replicas.as_ref().map(|_| ()).map_err(Clone::clone),
            replicas,
            // Within the request's own time limit.
            wait_ms: ms(wait / 2),
        })
    }

    fn keys(&self, namespace: &str) -> Keys {
        Keys::new(namespace, self.cluster)
    }

    /// Whether the last grant is on every replica a failover could promote,
    /// as far as `WAIT` tells.
    pub(crate) fn durable(&self) -> Result<(), String> {
        self.durable.clone()
    }

    /// Waits for every replica to have the writes made so far (`WAIT`):
    /// Ok when all acknowledged, else why not. Nothing to wait for unless
    /// the member verifies.
    async fn replicated(&mut self, what: &str) -> Result<Result<(), String>, StoreError> {
        let Ok(n) = self.replicas else {
            return Ok(Ok(()));
        };
        let acked: i64 = redis::cmd("WAIT")
            .arg(n)
            .arg(self.wait_ms)
            .query_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(if acked as usize >= n {
            Ok(())
        } else {
            Err(format!(
                "{acked} of {n} replicas acknowledged the {what} (WAIT): a failover could lose it"
            ))
        })
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
        grant_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        // The whole range at once, lowest first, or samples of a wide one
        // (super::candidates): a few scripts whatever the number held.
        let mut round = 0;
        let (code, got) = loop {
            let Some(candidates) = super::candidates(&ids, round) else {
                return Ok(None);
            };
            round += 1;
            let mut script =
                ACQUIRE.key(self.keys(ask.namespace).range(candidates.iter().copied()));
            script
                .arg(ask.namespace)
                .arg(ms(ask.ttl))
                .arg(cap)
                .arg(ask.holder)
                .arg(grant_id)
                .arg(super::random_id())
                .arg(ask.layout.name());
            for id in &candidates {
                script.arg(*id);
            }
            let got: Vec<Value> = script.invoke_async(&mut self.conn).await.map_err(err)?;
            let code = number(
                got.first()
                    .ok_or_else(|| StoreError::answer("empty answer"))?,
                "id",
            )?;
            match code {
                -1 => continue,
                -2 => {
                    let why = got.get(1).map(text).transpose()?.unwrap_or_default();
                    return Err(StoreError::refused(why));
                }
                -3 => {
                    let recorded = got.get(1).map(text).transpose()?.unwrap_or_default();
                    return Err(super::layout_refusal(ask.namespace, &recorded, ask.layout));
                }
                id if !candidates.contains(&(id.clamp(0, 65_535) as u16))
                    || id < 0
                    || got.len() != 4 =>
                {
                    return Err(StoreError::answer(format!(
                        "unexpected answer to acquire: {got:?}"
                    )));
                }
                _ => break (code, got),
            }
        };
        let token = number(&got[1], "token")?;
        let floor = number(&got[2], "floor")?;
        if self.replicas.is_ok() {
            self.durable = self.replicated("grant").await?;
        }
        Ok(Some(Grant {
            machine_id: code as u16,
            token: token as u64,
            floor_unix_ms: floor.max(0) as u64,
            history: floor >= 0,
            grant_id: grant_id.to_owned(),
            incarnation: text(&got[3])?,
            etcd_lease: 0,
        }))
    }

    /// A call of `script` (renew.lua, release.lua) on one grant: the
    /// namespace's meta key, the id's lease and record keys, then the
    /// namespace, the id and the grant; the caller adds the script's own
    /// arguments.
    fn on_grant<'s>(
        &self,
        script: &'s Script,
        ask: &Ask<'_>,
        grant: &Grant,
    ) -> redis::ScriptInvocation<'s> {
        let keys = self.keys(ask.namespace);
        let mut call = script.key(keys.meta());
        call.key(keys.lease(grant.machine_id))
            .key(keys.rec(grant.machine_id))
            .arg(ask.namespace)
            .arg(grant.machine_id)
            .arg(&grant.grant_id);
        call
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        let got: Vec<Value> = self
            .on_grant(&RENEW, ask, grant)
            .arg(ms(ask.ttl))
            .arg(cap)
            .arg(&grant.incarnation)
            .arg(ask.holder)
            .arg(grant.token)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        match got.first().map(|v| number(v, "answer")).transpose()? {
            // A renewal the replicas may not have counts for nothing: with
            // fast starts, a failover that lost it would let a member start
            // right above the floor it did not raise.
            // As a lost connection: the keeper connects again and counts the
            // replicas anew (one may have gone, or been promoted).
            Some(1) => match self.replicated("renewal").await? {
                Ok(()) => Ok(Renewal::Held),
                Err(why) => Err(StoreError::conn(why)),
            },
            Some(0) => Ok(Renewal::Lost(
                match got.get(1).map(text).transpose()?.as_deref() {
                    Some("store") => LostReason::StoreLostData,
                    Some("rollback") => LostReason::StoreWentBack,
                    Some("evicted") => LostReason::Evicted,
                    _ => LostReason::Taken,
                },
            )),
            _ => Err(StoreError::answer(format!(
                "unexpected answer to renew: {got:?}"
            ))),
        }
    }

    pub(crate) async fn release(
        &mut self,
        ask: &Ask<'_>,
        grant: &Grant,
        floor: u64,
    ) -> Result<bool, StoreError> {
        let done: i64 = self
            .on_grant(&RELEASE, ask, grant)
            .arg(floor)
            .arg(&grant.incarnation)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        if done == 1
            && let Err(why) = self.replicated("release").await?
        {
            log::warn!("nonceforge-lease: {why}");
        }
        Ok(done == 1)
    }

    pub(crate) async fn status(
        &mut self,
        namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<(StoreInfo, Vec<Record>), StoreError> {
        // A chunk of ids a script (a wide range's 65,536 would be 131,073 keys).
        let (first, last) = (u32::from(*ids.start()), u32::from(*ids.end()));
        let mut info = StoreInfo::default();
        let mut records = Vec::new();
        let mut start = first;
        while start <= last {
            let end = last.min(start + super::SEARCH_WHOLE - 1);
            let flat: Vec<Value> = STATUS
                .key(self.keys(namespace).range(start as u16..=end as u16))
                .arg(namespace)
                .arg(start)
                .arg(end)
                .invoke_async(&mut self.conn)
                .await
                .map_err(err)?;
            if flat.len() < 3 || !(flat.len() - 3).is_multiple_of(5) {
                return Err(StoreError::answer(format!(
                    "unexpected answer to status: {} values",
                    flat.len()
                )));
            }
            info = StoreInfo {
                protocol: text(&flat[0])?,
                incarnation: text(&flat[1])?,
                layout: text(&flat[2])?,
            };
            for c in flat[3..].chunks_exact(5) {
                let left = number(&c[3], "pttl")?;
                records.push(Record {
                    machine_id: number(&c[0], "id")? as u16,
                    holder: text(&c[1])?,
                    token: number(&c[2], "token")? as u64,
                    expires_in: (left > 0).then(|| Duration::from_millis(left as u64)),
                    floor_unix_ms: number(&c[4], "floor")? as u64,
                });
            }
            start = end + 1;
        }
        Ok((info, records))
    }

    pub(crate) async fn evict(
        &mut self,
        namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let keys = self.keys(namespace);
        let done: i64 = EVICT
            .key(keys.lease(machine_id))
            .key(keys.rec(machine_id))
            .arg(namespace)
            .arg(machine_id)
            .arg(holder.unwrap_or(""))
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(done == 1)
    }
}

/// How many replicas `INFO replication` shows connected to this primary, or
/// why the store cannot be checked.
fn replicas_of(info: &str) -> Result<usize, String> {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.trim().strip_prefix(name)?.strip_prefix(':'))
    };
    if field("role") != Some("master") {
        return Err("the server is not a primary (INFO replication: role is not master)".into());
    }
    match field("connected_slaves").and_then(|n| n.parse::<usize>().ok()) {
        Some(0) => {
            Err("no replica is connected: a restart from an older dump cannot be ruled out".into())
        }
        Some(n) => Ok(n),
        None => Err("INFO replication shows no connected_slaves".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Keys, replicas_of};

    /// testdata/vectors/lease-redis-keys.json: the key names Go's
    /// TestRedisKeyVectors reads too, and in a cluster every key of a
    /// namespace in the one slot the file states (Redis's CRC16 of the tag).
    #[test]
    fn the_shared_key_vectors() {
        let Some(v) = crate::vectors::read("lease-redis-keys.json") else {
            return; // outside the repository (a packaged crate)
        };
        let cases = v["cases"].as_array().unwrap();
        assert!(cases.len() >= 4);
        for c in cases {
            let ns = c["namespace"].as_str().unwrap();
            let cluster = c["cluster"].as_bool().unwrap();
            let first = c["first"].as_u64().unwrap() as u16;
            let last = c["last"].as_u64().unwrap() as u16;
            let want: Vec<&str> = c["range_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect();
            let keys = Keys::new(ns, cluster);
            assert_eq!(keys.range(first..=last), want, "{ns} cluster={cluster}");
            assert_eq!(
                [keys.meta(), keys.lease(first), keys.rec(first)],
                [want[0], want[1], want[2]]
            );
            let slot = |key: &str| {
                let tag = key
                    .find('{')
                    .and_then(|a| key[a + 1..].find('}').map(|b| &key[a + 1..a + 1 + b]))
                    .filter(|t| !t.is_empty())
                    .unwrap_or(key);
                crc16::State::<crc16::XMODEM>::calculate(tag.as_bytes()) % 16384
            };
            if cluster {
                let s = c["slot"].as_u64().unwrap() as u16;
                assert!(
                    want.iter().all(|k| slot(k) == s),
                    "{ns}: {want:?} not all in slot {s}"
                );
            } else {
                assert!(
                    want.iter().any(|k| slot(k) != slot(want[0])),
                    "{ns}: one slot without a tag?"
                );
            }
        }
    }

    #[test]
    fn replicas_from_info() {
        let primary =
            "# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1\r\n";
        assert_eq!(replicas_of(primary), Ok(2));
        assert!(
            replicas_of("role:master\r\nconnected_slaves:0\r\n")
                .unwrap_err()
                .contains("no replica")
        );
        assert!(
            replicas_of("role:slave\r\n")
                .unwrap_err()
                .contains("not a primary")
        );
        assert!(replicas_of("role:master\r\n").is_err());
    }
}
