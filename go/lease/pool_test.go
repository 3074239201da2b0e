package lease

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// A Pool on each store: 50 leases over 3 connections beside 10 leases of
// their own take the 60 ids of the range, each once; the 61st is refused
// and the pool goes on; every pooled lease renews; connections the server
// cuts are reopened and the leases renew again; a released id comes back
// through the pool; Close releases the rest and Acquire then refuses.
func TestPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stores")
	}
	ctx := context.Background()
	for _, bad := range []int{-1, MaxPoolConns + 1} {
		var e *Error
		if _, err := NewPool(ctx, "redis://127.0.0.1:1", Options{}, bad); !errors.As(err, &e) || e.Code != "bad-option" || e.Msg == "" {
			t.Fatalf("NewPool(conns %d): %v", bad, err)
		}
	}
	for _, kind := range []string{"postgres", "redis", "etcd"} {
		t.Run(kind, func(t *testing.T) {
			st := startStore(t, kind)
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			o := Options{TTL: 4 * time.Second, Namespace: "pool", IDs: "0-59", ConnectTimeout: 30 * time.Second, Logger: quiet}
			p, err := NewPool(ctx, st.url, o, 3)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			var mu sync.Mutex
			var pooled, own []*Lease
			var wg sync.WaitGroup
			for i := range 60 {
				wg.Go(func() {
					var l *Lease
					var err error
					if i%6 == 5 {
						l, err = Acquire(ctx, st.url, o)
					} else {
						l, err = p.Acquire(ctx)
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if i%6 == 5 {
						releaseAtEnd(t, l)
						own = append(own, l)
					} else {
						pooled = append(pooled, l)
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			ids := map[int]bool{}
			for _, l := range append(append([]*Lease{}, pooled...), own...) {
				if ids[l.MachineID()] {
					t.Fatalf("machine id %d leased twice", l.MachineID())
				}
				ids[l.MachineID()] = true
			}
			if len(ids) != 60 || p.Len() != 50 {
				t.Fatalf("%d ids, %d in the pool", len(ids), p.Len())
			}
			if _, err := p.Acquire(ctx); !errors.Is(err, ErrAllTaken) {
				t.Fatalf("the 61st: %v", err)
			}
			renewed := func(after []uint64) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for i, l := range pooled {
					for {
						s, _ := l.State()
						if l.Metrics().Renewals >= after[i]+2 && s == Held {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("lease %d: %d renewals (from %d), %v, %v", l.MachineID(), l.Metrics().Renewals, after[i], s, l.LastError())
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
			}
			counts := func() []uint64 {
				c := make([]uint64, len(pooled))
				for i, l := range pooled {
					c[i] = l.Metrics().Renewals
				}
				return c
			}
			renewed(make([]uint64, len(pooled)))
			if kind != "etcd" {
				// The server cuts every client connection: the pool's requests
				// on them fail, the connections are opened again, and every
				// pooled lease renews twice more.
				before := counts()
				cutConnections(t, st)
				renewed(before)
				var failed uint64
				for _, l := range pooled {
					f := l.Metrics().RenewalFailures
					failed += f[0] + f[1] + f[2]
				}
				// (go-redis retries a request on a cut connection itself.)
				if failed == 0 && kind == "postgres" {
					t.Fatal("no renewal failed after the server cut the pool's connections")
				}
			}
			gone := pooled[7]
			if err := gone.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if p.Len() != 49 {
				t.Fatalf("%d in the pool after one release", p.Len())
			}
			back, err := p.Acquire(ctx)
			if err != nil || back.MachineID() != gone.MachineID() {
				t.Fatalf("after releasing %d: %v, %v", gone.MachineID(), back, err)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			for _, l := range append(pooled, back) {
				if s, _ := l.State(); s != Released {
					t.Fatalf("lease %d after Close: %v", l.MachineID(), s)
				}
			}
			var e *Error
			if _, err := p.Acquire(ctx); !errors.As(err, &e) || e.Code != "closed" {
				t.Fatalf("Acquire after Close: %v", err)
			}
			// Close gave the 50 ids back: another holder takes them.
			q, err := NewPool(ctx, st.url, o, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close(ctx)
			for range 50 {
				if _, err := q.Acquire(ctx); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// cutConnections has the server drop every client connection but the one
// asking (PostgreSQL), or every one (Redis).
func cutConnections(t *testing.T, st testStore) {
	t.Helper()
	ctx := context.Background()
	switch st.kind {
	case "postgres":
		c, err := pgx.Connect(ctx, st.url)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		var n int
		if err := c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&n); err != nil || n == 0 {
			t.Fatalf("pg_terminate_backend: %d, %v", n, err)
		}
	case "redis":
		opt, err := redis.ParseURL(st.url)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(opt)
		defer c.Close()
		if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			t.Fatal(err)
		}
	}
}
