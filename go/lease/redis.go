package lease

// Redis, lease protocol 2: a hash per id, set by Lua scripts that are the Rust
// crate's byte for byte (crates/nonceforge-lease/src/store/redis/*.lua;
// TestRedisScriptsAreTheRustCrates checks).

import (
	"slices"

	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func connectRedis(ctx context.Context, raw, rest, shown string, s *settled) (store, string, error) {
	if rest == "" || strings.HasPrefix(rest, "/") {
		return nil, shown, badURL(shown, "no host: redis://host:port[/db]")
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, shown, badURL(shown, Redact(err.Error()))
	}
	return startRedis(ctx, redis.NewClient(opt), false, shown, s)
}

const sentinelForm = "redis+sentinel://[user:password@]host:port[,host:port…]/service[/db]"

// connectSentinel follows the primary the sentinels name (go-redis's failover
// client asks them again when the primary changes). The credentials and the
// database are the data nodes'.
func connectSentinel(ctx context.Context, rest, shown string, s *settled) (store, string, error) {
	o := &redis.FailoverOptions{}
	o.Username, o.Password, rest = userinfo(rest)
	hosts, path, ok := strings.Cut(rest, "/")
	service, db, _ := strings.Cut(path, "/")
	if !ok || service == "" {
		return nil, shown, badURL(shown, "no service name: "+sentinelForm)
	}
	o.MasterName = service
	if db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return nil, shown, badURL(shown, fmt.Sprintf("database %q is not a number: %s", db, sentinelForm))
		}
		o.DB = n
	}
	for _, ep := range strings.Split(hosts, ",") {
		if why := checkHostPort("sentinel", ep); why != "" {
			return nil, shown, badURL(shown, why)
		}
		o.SentinelAddrs = append(o.SentinelAddrs, ep)
	}
	return startRedis(ctx, redis.NewFailoverClient(o), false, shown, s)
}

// userinfo splits "[user[:password]@]rest" at the last '@'.
func userinfo(s string) (user, password, rest string) {
	i := strings.LastIndex(s, "@")
	if i < 0 {
		return "", "", s
	}
	user, password, _ = strings.Cut(s[:i], ":")
	return user, password, s[i+1:]
}

const clusterForm = "redis+cluster://[user:password@]host:port[,host:port…]"

// connectCluster reaches a Redis Cluster through any of its nodes (go-redis's
// cluster client learns the rest and the slots, and follows MOVED and ASK).
// A cluster has one database, so the URL names none.
func connectCluster(ctx context.Context, rest, shown string, s *settled) (store, string, error) {
	o := &redis.ClusterOptions{}
	o.Username, o.Password, rest = userinfo(rest)
	hosts := strings.TrimSuffix(rest, "/")
	if hosts == "" {
		return nil, shown, badURL(shown, "no node: "+clusterForm)
	}
	if strings.ContainsAny(hosts, "/?") {
		return nil, shown, badURL(shown, "a Redis Cluster has no database or options to name: "+clusterForm)
	}
	for _, ep := range strings.Split(hosts, ",") {
		if why := checkHostPort("node", ep); why != "" {
			return nil, shown, badURL(shown, why)
		}
		o.Addrs = append(o.Addrs, ep)
	}
	return startRedis(ctx, redis.NewClusterClient(o), true, shown, s)
}

// redisKeys are the key names of one namespace (the Rust crate's Keys; tied by
// testdata/vectors/lease-redis-keys.json): <ns>:tokens, <ns>:lease:<id>,
// <ns>:rec:<id>, with the hash tag {<ns>} for <ns> in a Redis Cluster, so a
// namespace is one slot and a script's keys are on one node.
type redisKeys string

func newRedisKeys(ns string, cluster bool) redisKeys {
	if cluster {
		return redisKeys("{" + ns + "}")
	}
	return redisKeys(ns)
}

func (k redisKeys) meta() string        { return string(k) + ":tokens" }
func (k redisKeys) lease(id int) string { return string(k) + ":lease:" + strconv.Itoa(id) }
func (k redisKeys) rec(id int) string   { return string(k) + ":rec:" + strconv.Itoa(id) }
func (k redisKeys) one(id int) []string { return []string{k.meta(), k.lease(id), k.rec(id)} }
func (k redisKeys) span(ids []int) []string {
	keys := []string{k.meta()}
	for _, id := range ids {
		keys = append(keys, k.lease(id), k.rec(id))
	}
	return keys
}

func startRedis(ctx context.Context, c redis.UniversalClient, cluster bool, shown string, s *settled) (store, string, error) {
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, shown, unreachable(shown, err)
	}
	r := &redisStore{c: c, keys: newRedisKeys(s.ns, cluster), wait: s.request / 2, replicas: -1, sync: errors.New("FastStart is not verify")}
	if s.fast == FastVerify && cluster {
		r.sync = errors.New("Redis Cluster: verify does not check each shard's replicas (a shard's failover can promote a replica behind its primary); start slow, or declare it where the deployment makes acknowledged writes survive a failover")
	} else if s.fast == FastVerify {
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			c.Close()
			return nil, shown, unreachable(shown, err)
		}
		r.replicas, r.sync = replicasOf(info)
	}
	return r, shown, nil
}

// replicasOf reads how many replicas INFO replication shows connected to this
// primary, or why the store cannot be checked.
func replicasOf(info string) (int, error) {
	field := func(name string) (string, bool) {
		for _, l := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
				return v, true
			}
		}
		return "", false
	}
	if role, _ := field("role"); role != "master" {
		return -1, errors.New("the server is not a primary (INFO replication: role is not master)")
	}
	v, _ := field("connected_slaves")
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return -1, errors.New("INFO replication shows no connected_slaves")
	case n == 0:
		return -1, errors.New("no replica is connected: a restart from an older dump cannot be ruled out")
	}
	return n, nil
}

// replicated waits (WAIT) for every replica connected at the start to have the
// writes made so far; nil when all acknowledged or nothing is to be waited for.
func (r *redisStore) replicated(ctx context.Context, what string) error {
	if r.replicas <= 0 {
		return nil
	}
	acked, err := r.c.Do(ctx, "wait", r.replicas, r.wait.Milliseconds()).Int64()
	if err != nil {
		return err
	}
	if acked < int64(r.replicas) {
		return fmt.Errorf("%d of %d replicas acknowledged the %s (WAIT): a failover could lose it", acked, r.replicas, what)
	}
	return nil
}

func (r *redisStore) durable() error { return r.sync }

const (
	acquireLua = `-- nonceforge lease protocol 2, Redis, acquire.
-- KEYS: the namespace's record, then each candidate id's lease key and record,
--   in the order of the ids in ARGV (every key passed in KEYS, one hash slot per
--   namespace in a Redis Cluster).
-- ARGV: ns, ttl ms, cap, holder, grant id, incarnation if new, layout
--   ('standard' or 'wide'), then the candidate ids: the whole range, lowest
--   first, or a sample of a wide one (docs/lease-protocol.md, "Finding a free id").
-- -> {id, token, floor ('-1': no record, no history), incarnation}: the first
--    candidate without a lease key; {-1} every candidate taken; {-2, why}
--    refused (another protocol, a malformed record); {-3, layout} the namespace
--    records another layout.
local meta = KEYS[1]
local n = #ARGV - 7
if n < 1 or #KEYS ~= 1 + 2 * n then
  return {-2, 'acquire got ' .. #KEYS .. ' keys for ' .. n .. ' ids'}
end
local layout = ARGV[7]
if layout ~= 'standard' and layout ~= 'wide' then
  return {-2, 'acquire got layout ' .. layout}
end
local kind = redis.call('TYPE', meta)['ok']
if kind == 'none' then
  redis.call('HSET', meta, 'protocol', '2', 'incarnation', ARGV[6], 'last', '0', 'layout', layout)
elseif kind ~= 'hash' then
  return {-2, meta .. ' is a ' .. kind .. ': members of lease protocol 1 use this namespace'}
end
local m = redis.call('HMGET', meta, 'protocol', 'incarnation', 'last', 'layout')
if m[1] ~= '2' or not m[2] or not m[3] or not string.match(m[3], '^%d+$') then
  return {-2, meta .. ' is not a lease protocol 2 record (protocol ' .. tostring(m[1]) .. ')'}
end
local recorded = m[4] or 'standard'
if recorded ~= layout then
  return {-3, recorded}
end
for i = 1, n do
  local id = ARGV[7 + i]
  if not string.match(id, '^%d+$') then
    return {-2, 'acquire got id ' .. id}
  end
  local key, rec = KEYS[2 * i], KEYS[2 * i + 1]
  if redis.call('EXISTS', key) == 0 then
    local floor = '-1'
    local rk = redis.call('TYPE', rec)['ok']
    if rk ~= 'none' then
      local f = rk == 'hash' and redis.call('HGET', rec, 'floor')
      if not f or not string.match(f, '^%d+$') then
        return {-2, rec .. ' is malformed (no decimal floor)'}
      end
      floor = f
    end
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local token = string.format('%.0f', math.max(tonumber(m[3]) + 1, now * 1000))
    redis.call('HSET', meta, 'last', token)
    redis.call('HSET', key, 'grant', ARGV[5], 'holder', ARGV[4], 'token', token)
    redis.call('PEXPIRE', key, ARGV[2])
    local new = tonumber(ARGV[3])
    if floor ~= '-1' and tonumber(floor) > new then new = tonumber(floor) end
    redis.call('HSET', rec, 'grant', ARGV[5], 'holder', ARGV[4], 'token', token,
      'floor', string.format('%.0f', new))
    return {tonumber(id), token, floor, m[2]}
  end
end
return {-1}
`
	renewLua = `-- nonceforge lease protocol 2, Redis, renew.
-- KEYS: the namespace's record, the id's lease key, the id's record.
-- ARGV: ns, id, grant id, ttl ms, cap, incarnation, holder, token
-- -> {1} held (or re-taken: the key had expired, nobody took the id since),
--    {0, 'store'} the store lost its data, {0, 'rollback'} the store went back to
--    a copy older than the grant (its last token, or the id's, below the grant's),
--    {0, 'taken'} another grant has the id, {0, 'evicted'} an operator freed it.
local meta, key, rec = KEYS[1], KEYS[2], KEYS[3]
if redis.call('TYPE', meta)['ok'] ~= 'hash' or redis.call('HGET', meta, 'incarnation') ~= ARGV[6] then
  return {0, 'store'}
end
local token = tonumber(ARGV[8])
if (tonumber(redis.call('HGET', meta, 'last')) or 0) < token then
  return {0, 'rollback'}
end
if redis.call('TYPE', rec)['ok'] ~= 'hash' then
  return {0, 'store'}
end
local ours = redis.call('HGET', rec, 'grant')
if ours ~= ARGV[3] and (tonumber(redis.call('HGET', rec, 'token')) or 0) < token then
  return {0, 'rollback'}
elseif ours == '' then
  return {0, 'evicted'}
elseif ours ~= ARGV[3] then
  return {0, 'taken'}
end
local kind = redis.call('TYPE', key)['ok']
if kind == 'hash' and redis.call('HGET', key, 'grant') == ARGV[3] then
  redis.call('PEXPIRE', key, ARGV[4])
elseif kind == 'none' then
  redis.call('HSET', key, 'grant', ARGV[3], 'holder', ARGV[7], 'token', ARGV[8])
  redis.call('PEXPIRE', key, ARGV[4])
else
  return {0, 'taken'}
end
local f = redis.call('HGET', rec, 'floor')
if not f or not string.match(f, '^%d+$') or tonumber(ARGV[5]) > tonumber(f) then
  redis.call('HSET', rec, 'floor', ARGV[5])
end
return {1}
`
	releaseLua = `-- nonceforge lease protocol 2, Redis, release.
-- KEYS: the namespace's record, the id's lease key, the id's record.
-- ARGV: ns, id, grant id, floor, incarnation -> 1 released, 0 no longer ours.
local meta, key, rec = KEYS[1], KEYS[2], KEYS[3]
if redis.call('TYPE', meta)['ok'] ~= 'hash' or redis.call('HGET', meta, 'incarnation') ~= ARGV[5] then
  return 0
end
if redis.call('TYPE', rec)['ok'] ~= 'hash' or redis.call('HGET', rec, 'grant') ~= ARGV[3] then
  return 0
end
local kind = redis.call('TYPE', key)['ok']
if kind ~= 'none' and (kind ~= 'hash' or redis.call('HGET', key, 'grant') ~= ARGV[3]) then
  return 0
end
redis.call('DEL', key)
redis.call('HSET', rec, 'grant', '', 'holder', '', 'floor', ARGV[4])
return 1
`
)

var (
	acquireScript = redis.NewScript(acquireLua)
	renewScript   = redis.NewScript(renewLua)
	releaseScript = redis.NewScript(releaseLua)
)

type redisStore struct {
	c    redis.UniversalClient
	keys redisKeys
	// FastVerify: how many replicas each write waits for (WAIT), and whether
	// the last grant reached them all (nil) or why the store cannot be checked.
	replicas int
	wait     time.Duration
	sync     error
}

// decimal reads a decimal field of a script's answer; anything else is an error, never 0.
func decimal(v any, what string) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("unexpected answer: %s %v is not a number", what, v)
}

func (r *redisStore) acquire(ctx context.Context, s *settled, capMs int64, grantID string) (*grant, error) {
	// The whole range at once, lowest first, or samples of a wide one
	// (candidates): a few scripts whatever the number held.
	var v []any
	var code int64
	for round := 0; ; round++ {
		ids := candidates(s.first, s.last, round)
		if ids == nil {
			return nil, nil
		}
		args := []any{s.ns, s.ttl.Milliseconds(), capMs, s.holder, grantID, randomID(), s.layout.String()}
		for _, id := range ids {
			args = append(args, id)
		}
		var err error
		v, err = acquireScript.Run(ctx, r.c, r.keys.span(ids), args...).Slice()
		if err != nil {
			return nil, err
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("empty answer")
		}
		code, err = decimal(v[0], "id")
		if err != nil {
			return nil, err
		}
		switch {
		case code == -1:
			continue
		case code == -2 && len(v) > 1:
			return nil, refused(fmt.Sprint(v[1]))
		case code == -3 && len(v) > 1:
			return nil, layoutRefusal(s.ns, fmt.Sprint(v[1]), s.layout)
		case code < 0 || !slices.Contains(ids, int(code)) || len(v) != 4:
			return nil, fmt.Errorf("unexpected answer to acquire: %v", v)
		}
		break
	}
	token, err := decimal(v[1], "token")
	if err != nil {
		return nil, err
	}
	floor, err := decimal(v[2], "floor")
	if err != nil {
		return nil, err
	}
	inc, _ := v[3].(string)
	if r.replicas > 0 {
		r.sync = r.replicated(ctx, "grant")
	}
	return &grant{id: int(code), token: uint64(token), floor: max(floor, 0), history: floor >= 0, grantID: grantID, incarnation: inc}, nil
}

func (r *redisStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (LostReason, error) {
	v, err := renewScript.Run(ctx, r.c, r.keys.one(g.id), s.ns, g.id, g.grantID, s.ttl.Milliseconds(), capMs, g.incarnation, s.holder, g.token).Slice()
	if err != nil {
		return 0, err
	}
	if len(v) == 0 {
		return 0, fmt.Errorf("empty answer")
	}
	if n, err := decimal(v[0], "answer"); err != nil {
		return 0, err
	} else if n == 1 {
		// A renewal the replicas may not have counts for nothing: with fast
		// starts, a failover that lost it would let a member start right
		// above the floor it did not raise.
		return 0, r.replicated(ctx, "renewal")
	}
	if len(v) > 1 {
		switch v[1] {
		case "store":
			return LostStoreData, nil
		case "rollback":
			return LostStoreBack, nil
		case "evicted":
			return LostEvicted, nil
		}
	}
	return LostTaken, nil
}

func (r *redisStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	n, err := releaseScript.Run(ctx, r.c, r.keys.one(g.id), s.ns, g.id, g.grantID, floor, g.incarnation).Int64()
	if err == nil && n == 1 {
		if why := r.replicated(ctx, "release"); why != nil {
			s.log.Warn("nonceforge lease: " + why.Error())
		}
	}
	return n == 1, err
}

func (r *redisStore) close() { r.c.Close() }
