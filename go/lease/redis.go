package lease

// Redis: a key per id, set by Lua scripts that are the Rust crate's byte for byte.

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

func connectRedis(ctx context.Context, raw, rest, shown string) (store, string, error) {
	if rest == "" || strings.HasPrefix(rest, "/") {
		return nil, shown, badURL(shown, "no host: redis://host:port[/db]")
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, shown, badURL(shown, err.Error())
	}
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, shown, unreachable(shown, err)
	}
	return &redisStore{c: c}, shown, nil
}

// Redis: docs/lease-protocol.md, "Redis" — the same script text as the Rust
// crate, byte for byte (TestRedisScriptsAreTheRustCrates checks).
const (
	acquireLua = `
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
`
	renewLua = `
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
`
	releaseLua = `
local key, rec = ARGV[1] .. ':lease:' .. ARGV[2], ARGV[1] .. ':rec:' .. ARGV[2]
local cur = redis.call('GET', key)
if cur == ARGV[3] or (cur == false and redis.call('HGET', rec, 'token') == ARGV[3]) then
  redis.call('DEL', key)
  redis.call('HSET', rec, 'holder', '', 'floor', ARGV[4])
  return 1
end
return 0
`
)

var (
	acquireScript = redis.NewScript(acquireLua)
	renewScript   = redis.NewScript(renewLua)
	releaseScript = redis.NewScript(releaseLua)
)

type redisStore struct{ c *redis.Client }

func (r *redisStore) acquire(ctx context.Context, s *settled, capMs int64) (*grant, error) {
	v, err := acquireScript.Run(ctx, r.c, nil, s.ns, s.first, s.last, s.ttl.Milliseconds(), capMs, s.holder).Slice()
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, fmt.Errorf("empty answer")
	}
	if id, _ := v[0].(int64); id < 0 || len(v) < 3 {
		return nil, nil
	}
	id, _ := v[0].(int64)
	token, _ := v[1].(int64)
	floor, _ := strconv.ParseInt(fmt.Sprint(v[2]), 10, 64)
	return &grant{id: int(id), token: uint64(token), floor: max(floor, 0)}, nil
}

func (r *redisStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (bool, error) {
	n, err := renewScript.Run(ctx, r.c, nil, s.ns, g.id, g.token, s.ttl.Milliseconds(), capMs).Int64()
	return n == 1, err
}

func (r *redisStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	n, err := releaseScript.Run(ctx, r.c, nil, s.ns, g.id, g.token, floor).Int64()
	return n == 1, err
}

func (r *redisStore) close() { r.c.Close() }
