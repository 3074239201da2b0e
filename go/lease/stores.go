package lease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func badURL(shown, rule string) error {
	return &Error{Code: "bad-url", Msg: fmt.Sprintf("backend URL %q is malformed: %s", shown, rule)}
}

// redact hides a password in a URL: scheme://user:***@host…
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return scheme + "://" + user + ":***" + rest[at:]
}

func unreachable(shown string, err error) error {
	return &Error{Code: "unreachable", Msg: fmt.Sprintf("cannot reach the lease store at %s: %v", shown, err), Err: err}
}

// connect parses url and connects to its store.
func connect(ctx context.Context, raw string, s *settled) (store, string, error) {
	raw = strings.TrimSpace(raw)
	shown := redact(raw)
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, shown, badURL(shown, "expected postgres://…, redis://… or etcd://host:port[,host:port…]")
	}
	switch scheme {
	case "postgres", "postgresql":
		cfg, err := pgx.ParseConfig(raw)
		if err != nil {
			return nil, shown, badURL(shown, err.Error())
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, shown, unreachable(shown, err)
		}
		st := &pgStore{conn: conn, table: s.ns + "_leases", tokens: s.ns + "_lease_tokens"}
		if err := st.ensure(ctx); err != nil {
			conn.Close(context.Background())
			return nil, shown, wrap(ctx, shown, err)
		}
		return st, shown, nil
	case "redis", "rediss":
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
	case "etcd":
		rest = strings.TrimRight(rest, "/")
		if rest == "" {
			return nil, shown, badURL(shown, "no endpoint: etcd://host:port[,host:port…]")
		}
		var eps []string
		for _, ep := range strings.Split(rest, ",") {
			i := strings.LastIndexByte(ep, ':')
			if i <= 0 || strings.ContainsAny(ep[:i], "/@?") {
				return nil, shown, badURL(shown, fmt.Sprintf("endpoint %q: host:port", ep))
			}
			if p, err := strconv.Atoi(ep[i+1:]); err != nil || p < 1 || p > 65535 {
				return nil, shown, badURL(shown, fmt.Sprintf("endpoint %q: port must be in 1..=65535", ep))
			}
			eps = append(eps, "http://"+ep)
		}
		dl, _ := ctx.Deadline()
		c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: max(time.Until(dl), 100*time.Millisecond), Context: context.Background()})
		if err != nil {
			return nil, shown, unreachable(shown, err)
		}
		if _, err := c.Status(ctx, eps[0]); err != nil {
			c.Close()
			return nil, shown, unreachable(shown, err)
		}
		return &etcdStore{c: c}, shown, nil
	}
	return nil, shown, badURL(shown, fmt.Sprintf("unknown scheme %q: use postgres://, redis:// or etcd://", scheme))
}

// PostgreSQL: docs/lease-protocol.md, "PostgreSQL".
type pgStore struct {
	conn          *pgx.Conn
	table, tokens string
}

func (p *pgStore) ensure(ctx context.Context) error {
	var exists bool
	if err := p.conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", p.table).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	tx, err := p.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	for _, q := range []string{
		fmt.Sprintf("SELECT pg_advisory_xact_lock(hashtext('%s'))", p.table),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			machine_id    smallint PRIMARY KEY CHECK (machine_id BETWEEN 0 AND 511),
			holder        text,
			token         bigint NOT NULL DEFAULT 0,
			expires_at    timestamptz,
			floor_unix_ms bigint NOT NULL DEFAULT 0)`, p.table),
		fmt.Sprintf("COMMENT ON TABLE %s IS 'nonceforge machine-id leases: one row per id; holder/expires_at while leased; floor_unix_ms is the highest timestamp its holders may have issued'", p.table),
		fmt.Sprintf("CREATE SEQUENCE IF NOT EXISTS %s", p.tokens),
		fmt.Sprintf("INSERT INTO %s (machine_id) SELECT generate_series(0, 511) ON CONFLICT DO NOTHING", p.table),
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

func (p *pgStore) acquire(ctx context.Context, s *settled, capMs int64) (*grant, error) {
	q := fmt.Sprintf(`WITH free AS (
		SELECT machine_id, floor_unix_ms FROM %[1]s
		 WHERE machine_id BETWEEN $1::int2 AND $2::int2
		   AND (holder IS NULL OR expires_at <= clock_timestamp())
		 ORDER BY machine_id LIMIT 1
		 FOR UPDATE SKIP LOCKED)
	UPDATE %[1]s l
	   SET holder = $3::text, token = nextval('%[2]s'),
	       expires_at = clock_timestamp() + $4::float8 * interval '1 millisecond',
	       floor_unix_ms = greatest(l.floor_unix_ms, $5::int8)
	  FROM free WHERE l.machine_id = free.machine_id
	RETURNING l.machine_id, l.token, free.floor_unix_ms`, p.table, p.tokens)
	var id int16
	var token, floor int64
	err := p.conn.QueryRow(ctx, q, s.first, s.last, s.holder, float64(s.ttl.Milliseconds()), capMs).Scan(&id, &token, &floor)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &grant{id: int(id), token: uint64(token), floor: max(floor, 0)}, nil
}

func (p *pgStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (bool, error) {
	tag, err := p.conn.Exec(ctx, fmt.Sprintf(`UPDATE %s SET expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond',
		floor_unix_ms = greatest(floor_unix_ms, $4::int8)
		WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $5::text`, p.table),
		g.id, int64(g.token), float64(s.ttl.Milliseconds()), capMs, s.holder)
	return err == nil && tag.RowsAffected() == 1, err
}

func (p *pgStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	tag, err := p.conn.Exec(ctx, fmt.Sprintf(`UPDATE %s SET holder = NULL, expires_at = NULL, floor_unix_ms = $3::int8
		WHERE machine_id = $1::int2 AND token = $2::int8 AND holder = $4::text`, p.table),
		g.id, int64(g.token), floor, s.holder)
	return err == nil && tag.RowsAffected() == 1, err
}

func (p *pgStore) close() { p.conn.Close(context.Background()) }

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

// etcd: docs/lease-protocol.md, "etcd".
type etcdStore struct{ c *clientv3.Client }

func leaseKey(ns string, id int) string { return fmt.Sprintf("/%s/lease/%d", ns, id) }
func recKey(ns string, id int) string   { return fmt.Sprintf("/%s/rec/%d", ns, id) }

func recValue(token uint64, floor int64, holder string) string {
	return fmt.Sprintf("%d %d %s", token, floor, holder)
}

// parseRec reads "token floor holder".
func parseRec(v []byte) (uint64, int64) {
	f := strings.SplitN(string(v), " ", 3)
	var token uint64
	var floor int64
	if len(f) > 0 {
		token, _ = strconv.ParseUint(f[0], 10, 64)
	}
	if len(f) > 1 {
		floor, _ = strconv.ParseInt(f[1], 10, 64)
	}
	return token, floor
}

func ttlSecs(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

func (e *etcdStore) take(ctx context.Context, s *settled, id int, capMs int64, prev []byte) (*grant, error) {
	lg, err := e.c.Grant(ctx, ttlSecs(s.ttl))
	if err != nil {
		return nil, err
	}
	lk, rk := leaseKey(s.ns, id), recKey(s.ns, id)
	when := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(lk), "=", 0)}
	if prev != nil {
		when = append(when, clientv3.Compare(clientv3.Value(rk), "=", string(prev)))
	}
	resp, err := e.c.Txn(ctx).If(when...).Then(clientv3.OpPut(lk, s.holder, clientv3.WithLease(lg.ID)), clientv3.OpGet(rk)).Commit()
	if err != nil {
		return nil, err
	}
	if !resp.Succeeded {
		_, _ = e.c.Revoke(ctx, lg.ID)
		return nil, nil
	}
	g := &grant{id: id, token: uint64(resp.Header.Revision), etcdLease: int64(lg.ID)}
	if r := resp.Responses[1].GetResponseRange(); r != nil && len(r.Kvs) > 0 {
		_, g.floor = parseRec(r.Kvs[0].Value)
	}
	ok, err := e.writeRec(ctx, s, g, max(g.floor, capMs))
	if err != nil || !ok {
		return nil, err
	}
	return g, nil
}

// writeRec writes the record if the lease key is still the one g created.
func (e *etcdStore) writeRec(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	resp, err := e.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(leaseKey(s.ns, g.id)), "=", int64(g.token))).
		Then(clientv3.OpPut(recKey(s.ns, g.id), recValue(g.token, floor, s.holder))).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

func (e *etcdStore) acquire(ctx context.Context, s *settled, capMs int64) (*grant, error) {
	prefix := fmt.Sprintf("/%s/lease/", s.ns)
	for {
		resp, err := e.c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return nil, err
		}
		taken := map[int]bool{}
		for _, kv := range resp.Kvs {
			if id, err := strconv.Atoi(string(kv.Key[len(prefix):])); err == nil {
				taken[id] = true
			}
		}
		id := -1
		for i := s.first; i <= s.last; i++ {
			if !taken[i] {
				id = i
				break
			}
		}
		if id < 0 {
			return nil, nil
		}
		g, err := e.take(ctx, s, id, capMs, nil)
		if err != nil || g != nil {
			return g, err
		}
		// Lost a race for this id: look again.
	}
}

func (e *etcdStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (bool, error) {
	ka, err := e.c.KeepAliveOnce(ctx, clientv3.LeaseID(g.etcdLease))
	expired := errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && ka.TTL <= 0)
	if err != nil && !expired {
		return false, err
	}
	if expired {
		// Re-take the id if nobody has taken it since (the record is still ours).
		resp, err := e.c.Get(ctx, recKey(s.ns, g.id))
		if err != nil {
			return false, err
		}
		if len(resp.Kvs) == 0 {
			return false, nil
		}
		if token, _ := parseRec(resp.Kvs[0].Value); token != g.token {
			return false, nil
		}
		ng, err := e.take(ctx, s, g.id, capMs, resp.Kvs[0].Value)
		if err != nil || ng == nil {
			return false, err
		}
		ng.floor = g.floor
		*g = *ng
		return true, nil
	}
	return e.writeRec(ctx, s, g, capMs)
}

func (e *etcdStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	lk := leaseKey(s.ns, g.id)
	resp, err := e.c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(lk), "=", int64(g.token))).
		Then(clientv3.OpPut(recKey(s.ns, g.id), recValue(g.token, floor, "")), clientv3.OpDelete(lk)).Commit()
	if err != nil {
		return false, err
	}
	_, _ = e.c.Revoke(ctx, clientv3.LeaseID(g.etcdLease))
	return resp.Succeeded, nil
}

func (e *etcdStore) close() { e.c.Close() }
