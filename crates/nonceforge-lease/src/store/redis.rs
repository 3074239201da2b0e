//! Redis: `{ns}:lease:{id}` holds the fencing token and expires (`SET … NX PX`);
//! `{ns}:rec:{id}`, a hash that never expires, keeps the holder, the token and
//! the floor. Each operation is one Lua script, so it is atomic on one server.
//!
//! What Redis cannot promise: replication is asynchronous, so a failover can
//! lose a lease that the old primary had granted, and two processes may then
//! hold one id. The floor does not save that case either (it is lost with the
//! write). Use one Redis primary without failover, or PostgreSQL/etcd, where a
//! lease must survive the loss of a server.

use super::{Ask, Grant, Record, Renewal, StoreError, ms};
use redis::aio::MultiplexedConnection;
use redis::{ConnectionInfo, Script};
use std::ops::RangeInclusive;
use std::sync::LazyLock;
use std::time::Duration;

pub(crate) struct RedisStore {
    conn: MultiplexedConnection,
}

/// ARGV: ns, first, last, ttl ms, cap, holder → {id, token, old floor} or {-1}.
static ACQUIRE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local ns, first, last = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
for id = first, last do
  local key = ns .. ':lease:' .. id
  if redis.call('EXISTS', key) == 0 then
    local token = redis.call('INCR', ns .. ':tokens')
    redis.call('SET', key, token, 'PX', ARGV[4])
    local rec = ns .. ':rec:' .. id
    local floor = redis.call('HGET', rec, 'floor') or '0'
    local new = floor
    if tonumber(ARGV[5]) > tonumber(floor) then new = ARGV[5] end
    redis.call('HSET', rec, 'holder', ARGV[6], 'token', token, 'floor', new)
    return {id, token, floor}
  end
end
return {-1}
",
    )
});

/// ARGV: ns, id, token, ttl ms, cap → 1 held (or re-taken: expired, not taken since), 0 lost.
static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local key, rec = ARGV[1] .. ':lease:' .. ARGV[2], ARGV[1] .. ':rec:' .. ARGV[2]
local cur = redis.call('GET', key)
if cur == ARGV[3] then
  redis.call('PEXPIRE', key, ARGV[4])
elseif cur == false and redis.call('HGET', rec, 'token') == ARGV[3] then
  redis.call('SET', key, ARGV[3], 'PX', ARGV[4])
else
  return 0
end
if tonumber(ARGV[5]) > tonumber(redis.call('HGET', rec, 'floor') or '0') then
  redis.call('HSET', rec, 'floor', ARGV[5])
end
return 1
",
    )
});

/// ARGV: ns, id, token, floor → 1 released, 0 not ours.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local key, rec = ARGV[1] .. ':lease:' .. ARGV[2], ARGV[1] .. ':rec:' .. ARGV[2]
local cur = redis.call('GET', key)
if cur == ARGV[3] or (cur == false and redis.call('HGET', rec, 'token') == ARGV[3]) then
  redis.call('DEL', key)
  redis.call('HSET', rec, 'holder', '', 'floor', ARGV[4])
  return 1
end
return 0
",
    )
});

/// ARGV: ns, first, last → flat {id, holder, token, pttl, floor, …} of every id with a record.
static STATUS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local out = {}
for id = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local rec = ARGV[1] .. ':rec:' .. id
  if redis.call('EXISTS', rec) == 1 then
    local f = redis.call('HMGET', rec, 'holder', 'token', 'floor')
    local left = redis.call('PTTL', ARGV[1] .. ':lease:' .. id)
    local holder = f[1] or ''
    table.insert(out, id); table.insert(out, holder); table.insert(out, f[2] or '0')
    table.insert(out, left); table.insert(out, f[3] or '0')
  end
end
return out
",
    )
});

/// ARGV: ns, id, holder or '' → 1 evicted.
static EVICT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local key, rec = ARGV[1] .. ':lease:' .. ARGV[2], ARGV[1] .. ':rec:' .. ARGV[2]
local holder = redis.call('HGET', rec, 'holder')
if not holder or holder == '' then return 0 end
if ARGV[3] ~= '' and holder ~= ARGV[3] then return 0 end
redis.call('DEL', key)
redis.call('HSET', rec, 'holder', '')
return 1
",
    )
});

fn err(e: redis::RedisError) -> StoreError {
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout() {
        StoreError::conn(e)
    } else {
        StoreError::answer(e)
    }
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
    ) -> Result<Option<Grant>, StoreError> {
        let got: Vec<redis::Value> = ACQUIRE
            .arg(ask.namespace)
            .arg(*ids.start())
            .arg(*ids.end())
            .arg(ms(ask.ttl))
            .arg(cap)
            .arg(ask.holder)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        let num = |v: &redis::Value| -> Result<i64, StoreError> {
            redis::from_redis_value_ref::<i64>(v).map_err(|e| StoreError::answer(e.to_string()))
        };
        let id = num(got
            .first()
            .ok_or_else(|| StoreError::answer("empty answer"))?)?;
        if id < 0 {
            return Ok(None);
        }
        let token = num(&got[1])?;
        let floor: String =
            redis::from_redis_value_ref(&got[2]).map_err(|e| StoreError::answer(e.to_string()))?;
        Ok(Some(Grant {
            machine_id: id as u16,
            token: token as u64,
            floor_unix_ms: floor.parse().unwrap_or(0),
            etcd_lease: 0,
        }))
    }

    pub(crate) async fn renew(
        &mut self,
        ask: &Ask<'_>,
        grant: &mut Grant,
        cap: u64,
    ) -> Result<Renewal, StoreError> {
        let held: i64 = RENEW
            .arg(ask.namespace)
            .arg(grant.machine_id)
            .arg(grant.token)
            .arg(ms(ask.ttl))
            .arg(cap)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(if held == 1 {
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
        let done: i64 = RELEASE
            .arg(ask.namespace)
            .arg(grant.machine_id)
            .arg(grant.token)
            .arg(floor)
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        Ok(done == 1)
    }

    pub(crate) async fn status(
        &mut self,
        namespace: &str,
        ids: RangeInclusive<u16>,
    ) -> Result<Vec<Record>, StoreError> {
        let flat: Vec<redis::Value> = STATUS
            .arg(namespace)
            .arg(*ids.start())
            .arg(*ids.end())
            .invoke_async(&mut self.conn)
            .await
            .map_err(err)?;
        let text = |v: &redis::Value| -> String {
            redis::from_redis_value_ref::<String>(v).unwrap_or_default()
        };
        Ok(flat
            .chunks_exact(5)
            .map(|c| {
                let left: i64 = text(&c[3]).parse().unwrap_or(-1);
                Record {
                    machine_id: text(&c[0]).parse().unwrap_or(0),
                    holder: text(&c[1]),
                    token: text(&c[2]).parse().unwrap_or(0),
                    expires_in: (left > 0).then(|| Duration::from_millis(left as u64)),
                    floor_unix_ms: text(&c[4]).parse().unwrap_or(0),
                }
            })
            .collect())
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
