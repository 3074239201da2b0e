package lease

// etcd, lease protocol 2: /{ns}/meta ("2 {incarnation}"), /{ns}/lease/{id}
// ("{grant} {holder}", attached to an etcd lease, created only if absent),
// /{ns}/rec/{id} ("v2 {grant} {token} {floor} {holder}"): the Rust crate's
// store/etcd.rs, transaction for transaction.

import (
	"github.com/nonceforge/nonceforge/go/nonce"

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
	var user, password string
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		u, p, ok := strings.Cut(rest[:at], ":")
		if !ok || u == "" {
			return nil, shown, badURL(shown, "etcd credentials are user:password@ before the endpoints")
		}
		user, password, rest = u, p, rest[at+1:]
	}
	rest = strings.TrimRight(rest, "/")
	if rest == "" {
		return nil, shown, badURL(shown, "no endpoint: etcd://host:port[,host:port…]")
	}
	var eps []string
	for _, ep := range strings.Split(rest, ",") {
		if why := checkHostPort("endpoint", ep); why != "" {
			return nil, shown, badURL(shown, why)
		}
		eps = append(eps, "http://"+ep)
	}
	dl, _ := ctx.Deadline()
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, Username: user, Password: password, DialTimeout: max(time.Until(dl), 100*time.Millisecond), Context: context.Background()})
	if err != nil {
		return nil, shown, unreachable(shown, err)
	}
	if _, err := c.Status(ctx, eps[0]); err != nil {
		c.Close()
		return nil, shown, unreachable(shown, err)
	}
	return &etcdStore{c: c}, shown, nil
}

type etcdStore struct{ c *clientv3.Client }

func metaKey(ns string) string          { return "/" + ns + "/meta" }
func leaseKey(ns string, id int) string { return fmt.Sprintf("/%s/lease/%d", ns, id) }
func recKey(ns string, id int) string   { return fmt.Sprintf("/%s/rec/%d", ns, id) }

type rec struct {
	grant        string // "" when released or evicted
	token, floor uint64
	holder       string
}

func recValue(grant string, token uint64, floor int64, holder string) string {
	if grant == "" {
		grant = "-"
	}
	return fmt.Sprintf("v2 %s %d %d %s", grant, token, floor, holder)
}

// parseRec reads a record strictly: anything else is an error, never token 0 and floor 0.
func parseRec(key string, v []byte) (rec, error) {
	bad := refused(fmt.Sprintf("%s is malformed or not a lease protocol 2 record (%q): protocol-1 members may use this namespace", key, v[:min(len(v), 80)]))
	f := strings.SplitN(string(v), " ", 5)
	if len(f) != 5 || f[0] != "v2" || f[1] == "" {
		return rec{}, bad
	}
	token, ok1 := digits(f[2])
	floor, ok2 := digits(f[3])
	if !ok1 || !ok2 {
		return rec{}, bad
	}
	r := rec{grant: f[1], token: token, floor: floor, holder: f[4]}
	if r.grant == "-" {
		r.grant = ""
	}
	return r, nil
}

// parseMeta reads the namespace's record: "2 {incarnation}", with " wide"
// after it for a namespace of the wide layout.
func parseMeta(key string, v []byte) (string, nonce.Layout, error) {
	tail, ok := strings.CutPrefix(string(v), "2 ")
	inc, rest, _ := strings.Cut(tail, " ")
	layout := nonce.Standard
	switch rest {
	case "":
	case "wide":
		layout = nonce.Wide
	default:
		ok = false
	}
	if !ok || inc == "" {
		return "", 0, refused(fmt.Sprintf("%s is not a lease protocol 2 namespace record (%q)", key, v[:min(len(v), 80)]))
	}
	return inc, layout, nil
}

// metaValue is the namespace's record for inc and layout.
func metaValue(inc string, layout nonce.Layout) string {
	if layout == nonce.Wide {
		return "2 " + inc + " wide"
	}
	return "2 " + inc
}

func ttlSecs(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

// ours: the lease key is the one g created, in the store g was made in.
func ours(ns string, g *grant, layout nonce.Layout) []clientv3.Cmp {
	return []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(leaseKey(ns, g.id)), "=", int64(g.token)),
		clientv3.Compare(clientv3.Value(metaKey(ns)), "=", metaValue(g.incarnation, layout)),
	}
}

// meta returns the namespace's incarnation, creating its record when there
// is none, unless records of another protocol are there or the namespace is
// of another layout.
func (e *etcdStore) meta(ctx context.Context, ns string, layout nonce.Layout) (string, error) {
	for {
		resp, err := e.c.Get(ctx, metaKey(ns))
		if err != nil {
			return "", err
		}
		if len(resp.Kvs) > 0 {
			inc, recorded, err := parseMeta(metaKey(ns), resp.Kvs[0].Value)
			if err == nil && recorded != layout {
				err = layoutRefusal(ns, recorded.String(), layout)
			}
			return inc, err
		}
		recs, err := e.c.Get(ctx, "/"+ns+"/rec/", clientv3.WithPrefix())
		if err != nil {
			return "", err
		}
		for _, kv := range recs.Kvs {
			if _, err := parseRec(string(kv.Key), kv.Value); err != nil {
				return "", err
			}
		}
		if _, err := e.c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(metaKey(ns)), "=", 0)).
			Then(clientv3.OpPut(metaKey(ns), metaValue(randomID(), layout))).Commit(); err != nil {
			return "", err
		}
	}
}

// take creates the lease key for id if absent, attached to a fresh etcd
// lease, and writes the record; the etcd lease is revoked whenever no grant
// comes of it. nil: someone else has it, or the namespace's record changed.
func (e *etcdStore) take(ctx context.Context, s *settled, id int, capMs int64, grantID, inc string, prev []byte) (*grant, error) {
	lg, err := e.c.Grant(ctx, ttlSecs(s.ttl))
	if err != nil {
		return nil, err
	}
	g, err := e.takeWith(ctx, s, id, capMs, grantID, inc, prev, lg.ID)
	if g == nil || err != nil {
		_, _ = e.c.Revoke(context.Background(), lg.ID)
	}
	return g, err
}

func (e *etcdStore) takeWith(ctx context.Context, s *settled, id int, capMs int64, grantID, inc string, prev []byte, lease clientv3.LeaseID) (*grant, error) {
	lk, rk := leaseKey(s.ns, id), recKey(s.ns, id)
	when := []clientv3.Cmp{
		clientv3.Compare(clientv3.CreateRevision(lk), "=", 0),
		clientv3.Compare(clientv3.Value(metaKey(s.ns)), "=", metaValue(inc, s.layout)),
	}
	if prev != nil {
		when = append(when, clientv3.Compare(clientv3.Value(rk), "=", string(prev)))
	}
	resp, err := e.c.Txn(ctx).If(when...).Then(clientv3.OpPut(lk, grantID+" "+s.holder, clientv3.WithLease(lease)), clientv3.OpGet(rk)).Commit()
	if err != nil || !resp.Succeeded {
		return nil, err
	}
	g := &grant{id: id, token: uint64(resp.Header.Revision), grantID: grantID, incarnation: inc, etcdLease: int64(lease)}
	if r := resp.Responses[1].GetResponseRange(); r != nil && len(r.Kvs) > 0 {
		old, err := parseRec(rk, r.Kvs[0].Value)
		if err != nil {
			// A record we cannot read is not ours to overwrite: give the key back.
			_, _ = e.c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(lk), "=", int64(g.token))).Then(clientv3.OpDelete(lk)).Commit()
			return nil, err
		}
		g.floor, g.history = int64(old.floor), true
	}
	ok, err := e.writeRec(ctx, s, g, max(g.floor, capMs))
	if err != nil || !ok {
		return nil, err
	}
	return g, nil
}

// writeRec writes the record if the lease key is still the one g created.
func (e *etcdStore) writeRec(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	resp, err := e.c.Txn(ctx).If(ours(s.ns, g, s.layout)...).
		Then(clientv3.OpPut(recKey(s.ns, g.id), recValue(g.grantID, g.token, floor, s.holder))).Commit()
	if err != nil {
		return false, err
	}
	return resp.Succeeded, nil
}

// lostReason says why g is no longer ours.
func (e *etcdStore) lostReason(ctx context.Context, s *settled, g *grant) (LostReason, error) {
	m, err := e.c.Get(ctx, metaKey(s.ns))
	if err != nil {
		return notLost, err
	}
	if len(m.Kvs) == 0 {
		return LostStoreData, nil
	}
	if inc, _, err := parseMeta(metaKey(s.ns), m.Kvs[0].Value); err != nil || inc != g.incarnation {
		return LostStoreData, nil
	}
	r, err := e.c.Get(ctx, recKey(s.ns, g.id))
	if err != nil {
		return notLost, err
	}
	// A store restored from an older snapshot: its revision (restored
	// without --bump-revision) or the id's record is below this grant.
	if r.Header != nil && uint64(max(r.Header.Revision, 0)) < g.token {
		return LostStoreBack, nil
	}
	if len(r.Kvs) == 0 {
		return LostStoreData, nil
	}
	old, err := parseRec(recKey(s.ns, g.id), r.Kvs[0].Value)
	if err != nil {
		return notLost, err
	}
	switch {
	case old.grant != g.grantID && old.token < g.token:
		return LostStoreBack, nil
	case old.grant == "":
		return LostEvicted, nil
	}
	return LostTaken, nil
}

// durable: Raft acknowledges a write once a quorum has it, and a new leader
// has every acknowledged write; only a snapshot restore goes back.
func (e *etcdStore) durable() error { return nil }

func (e *etcdStore) acquire(ctx context.Context, s *settled, capMs int64, grantID string) (*grant, error) {
again:
	inc, err := e.meta(ctx, s.ns, s.layout)
	if err != nil {
		return nil, err
	}
	for round := 0; ; round++ {
		ids := candidates(s.first, s.last, round)
		if ids == nil {
			return nil, nil
		}
		free, err := e.freeAmong(ctx, s.ns, ids)
		if err != nil {
			return nil, err
		}
		for _, id := range free {
			g, err := e.take(ctx, s, id, capMs, grantID, inc, nil)
			if err != nil || g != nil {
				return g, err
			}
			// Lost a race for this id (the next one), or the namespace's
			// record changed (look again).
			if now, err := e.meta(ctx, s.ns, s.layout); err != nil {
				return nil, err
			} else if now != inc {
				goto again
			}
		}
	}
}

// freeAmong returns the ids without a lease key, in their order: one read of
// the namespace's lease keys (keys only) for a small range tried whole, one
// transaction of reads (keys only) for a sample.
func (e *etcdStore) freeAmong(ctx context.Context, ns string, ids []int) ([]int, error) {
	free := []int{}
	if len(ids) > sample {
		prefix := fmt.Sprintf("/%s/lease/", ns)
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
		for _, id := range ids {
			if !taken[id] {
				free = append(free, id)
			}
		}
		return free, nil
	}
	reads := make([]clientv3.Op, len(ids))
	for i, id := range ids {
		reads[i] = clientv3.OpGet(leaseKey(ns, id), clientv3.WithKeysOnly())
	}
	resp, err := e.c.Txn(ctx).Then(reads...).Commit()
	if err != nil {
		return nil, err
	}
	for i, r := range resp.Responses {
		if g := r.GetResponseRange(); g != nil && len(g.Kvs) == 0 {
			free = append(free, ids[i])
		}
	}
	return free, nil
}

func (e *etcdStore) renew(ctx context.Context, s *settled, g *grant, capMs int64) (LostReason, error) {
	ka, err := e.c.KeepAliveOnce(ctx, clientv3.LeaseID(g.etcdLease))
	expired := errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && ka.TTL <= 0)
	if err != nil && !expired {
		return notLost, err
	}
	if expired {
		// Re-take the id if nobody has taken it since (the record is still this grant's).
		resp, err := e.c.Get(ctx, recKey(s.ns, g.id))
		if err != nil {
			return notLost, err
		}
		if len(resp.Kvs) == 0 {
			return e.lostReason(ctx, s, g)
		}
		old, err := parseRec(recKey(s.ns, g.id), resp.Kvs[0].Value)
		if err != nil {
			return notLost, err
		}
		if old.grant != g.grantID {
			return e.lostReason(ctx, s, g)
		}
		ng, err := e.take(ctx, s, g.id, capMs, g.grantID, g.incarnation, resp.Kvs[0].Value)
		if err != nil {
			return notLost, err
		}
		if ng == nil {
			return e.lostReason(ctx, s, g)
		}
		ng.floor, ng.history = g.floor, g.history
		*g = *ng
		return notLost, nil
	}
	ok, err := e.writeRec(ctx, s, g, capMs)
	if err != nil {
		return notLost, err
	}
	if !ok {
		return e.lostReason(ctx, s, g)
	}
	return notLost, nil
}

func (e *etcdStore) release(ctx context.Context, s *settled, g *grant, floor int64) (bool, error) {
	resp, err := e.c.Txn(ctx).If(ours(s.ns, g, s.layout)...).
		Then(clientv3.OpPut(recKey(s.ns, g.id), recValue("", g.token, floor, "")), clientv3.OpDelete(leaseKey(s.ns, g.id))).Commit()
	if err != nil {
		return false, err
	}
	_, _ = e.c.Revoke(ctx, clientv3.LeaseID(g.etcdLease))
	return resp.Succeeded, nil
}

func (e *etcdStore) close() { e.c.Close() }
