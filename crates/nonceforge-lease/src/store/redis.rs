//! Redis, lease protocol 2: `{ns}:tokens` is the namespace's record (a hash:
//! protocol, incarnation, last token — a hash where protocol 1 kept a counter,
//! so a protocol-1 client's `INCR` fails there instead of sharing the ids);
//! `{ns}:lease:{id}` (a hash with a TTL: grant, holder, token) is the lease;
//! `{ns}:rec:{id}` (a hash that never expires: grant, holder, token, floor)
//! keeps the id's history. Each operation is one Lua script (the `.lua` files
//! beside this one, which the Go module sends byte for byte), atomic on one
//! server.
//!
//! What Redis cannot promise: replication is asynchronous, so a failover can
//! lose a lease that the old primary had granted. The grant id and the
//! incarnation make every holder whose grant is gone stop at its next renewal,
//! and an id without a record starts a full TTL and margin above the
//! acquirer's clock, so even that loss issues no value twice; a failover that
//! keeps an *older* copy of a record (a replica behind) is the case left: use
//! one primary without failover (or PostgreSQL/etcd) there.

use super::{Ask, Grant, LostReason, Record, Renewal, StoreError, StoreInfo, ms};
use redis::aio::MultiplexedConnection;
use redis::{ConnectionInfo, Script, Value};
use std::ops::RangeInclusive;
use std::sync::LazyLock;
use std::time::Duration;

pub(crate) struct RedisStore {
    conn: MultiplexedConnection,
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

fn err(e: redis::RedisError) -> StoreError {
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout() {
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
    pub(crate) async fn connect(info: &ConnectionInfo) -> Result<Self, StoreError> {
        let client = redis::Client::open(info.clone()).map_err(StoreError::conn)?;
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .map_err(StoreError::conn)?;
        // A handshake that fails (a wrong password, say) shows up here, not later.
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(err)?;
        Ok(RedisStore { conn })
    }

    pub(crate) async fn acquire(
        &mut self,
        ask: &Ask<'_>,
        ids: RangeInclusive<u16>,
        cap: u64,
        grant_id: &str,
    ) -> Result<Option<Grant>, StoreError> {
        let got: Vec<Value> = ACQUIRE
            .arg(ask.namespace)
            .arg(*ids.start())
            .arg(*ids.end())
            .arg(ms(ask.ttl))
            .arg(cap)
            .arg(ask.holder)
            .arg(grant_id)
            .arg(super::random_id())
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        let code = number(
            got.first()
                .ok_or_else(|| StoreError::answer("empty answer"))?,
            "id",
        )?;
        match code {
            -1 => return Ok(None),
            -2 => {
                let why = got.get(1).map(text).transpose()?.unwrap_or_default();
                return Err(StoreError::refused(why));
            }
            id if !(0..=511).contains(&id) || got.len() != 4 => {
                return Err(StoreError::answer(format!(
                    "unexpected answer to acquire: {got:?}"
                )));
            }
            _ => {}
        }
        let token = number(&got[1], "token")?;
        let floor = number(&got[2], "floor")?;
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

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        let got: Vec<Value> = RENEW
            .arg(ask.namespace)
            .arg(grant.machine_id)
            .arg(&grant.grant_id)
            .arg(ms(ask.ttl))
            .arg(cap)
            .arg(&grant.incarnation)
            .arg(ask.holder)
            .arg(grant.token)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        match got.first().map(|v| number(v, "answer")).transpose()? {
            Some(1) => Ok(Renewal::Held),
            Some(0) => Ok(Renewal::Lost(
                match got.get(1).map(text).transpose()?.as_deref() {
                    Some("store") => LostReason::StoreLostData,
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
        let done: i64 = RELEASE
            .arg(ask.namespace)
            .arg(grant.machine_id)
            .arg(&grant.grant_id)
            .arg(floor)
            .arg(&grant.incarnation)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(done == 1)
    }

    pub(crate) async fn status(
        &mut self,
        namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<(StoreInfo, Vec<Record>), StoreError> {
        let flat: Vec<Value> = STATUS
            .arg(namespace)
            .arg(*ids.start())
            .arg(*ids.end())
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        if flat.len() < 2 || !(flat.len() - 2).is_multiple_of(5) {
            return Err(StoreError::answer(format!(
                "unexpected answer to status: {} values",
                flat.len()
            )));
        }
        let info = StoreInfo {
            protocol: text(&flat[0])?,
            incarnation: text(&flat[1])?,
        };
        let records = flat[2..]
            .chunks_exact(5)
            .map(|c| {
                let left = number(&c[3], "pttl")?;
                Ok(Record {
                    machine_id: number(&c[0], "id")? as u16,
                    holder: text(&c[1])?,
                    token: number(&c[2], "token")? as u64,
                    expires_in: (left > 0).then(|| Duration::from_millis(left as u64)),
                    floor_unix_ms: number(&c[4], "floor")? as u64,
                })
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((info, records))
    }

    pub(crate) async fn evict(
        &mut self,
        namespace: &str,
        machine_id: u16,
        holder: Option<&str>,
    ) -> Result<bool, StoreError> {
        let done: i64 = EVICT
            .arg(namespace)
            .arg(machine_id)
            .arg(holder.unwrap_or(""))
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(done == 1)
    }
}
