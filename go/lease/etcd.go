package lease

// etcd: a key per id attached to an etcd lease, created in a transaction only if absent.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func connectEtcd(ctx context.Context, rest, shown string) (store, string, error) {
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
