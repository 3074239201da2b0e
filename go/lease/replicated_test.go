package lease

// The stores as they run replicated: Redis through a Sentinel that fails the
// primary over to a replica (the lease follows it, and a grant the replica
// never saw is reported lost), PostgreSQL through a multi-host URL whose first
// host is down (libpq's rule: the next read-write one), FastVerify's check
// per store.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSentinelAndMultiHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real stores (run without -short)")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "nonceforge-go-sentinel-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	redisAt := func(name string, port int, more ...string) {
		args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--daemonize", "yes", "--dir", dir, "--dbfilename", name + ".rdb", "--pidfile", filepath.Join(dir, name+".pid"),
			"--logfile", filepath.Join(dir, name+".log")}, more...)
		run(t, need(t, "redis-server"), args...)
		t.Cleanup(func() { _ = exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(port), "shutdown", "nosave").Run() })
		waitPort(t, port, name)
	}
	primary, replica, sentinel := freePort(t), freePort(t), freePort(t)
	redisAt("primary", primary)
	redisAt("replica", replica, "--replicaof", "127.0.0.1", fmt.Sprint(primary))
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndir %s\n"+
		"sentinel monitor nf 127.0.0.1 %d 1\nsentinel down-after-milliseconds nf 1000\nsentinel failover-timeout nf 10000\n",
		sentinel, dir, primary)), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, need(t, "redis-server"), conf, "--sentinel", "--daemonize", "yes", "--pidfile", filepath.Join(dir, "s.pid"),
		"--logfile", filepath.Join(dir, "s.log"))
	t.Cleanup(func() { _ = exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(sentinel), "shutdown", "nosave").Run() })
	waitPort(t, sentinel, "sentinel")
	cli := func(port int, args ...string) string {
		out, _ := exec.Command(need(t, "redis-cli"), append([]string{"-p", fmt.Sprint(port)}, args...)...).Output()
		return strings.TrimSpace(string(out))
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(cli(replica, "INFO", "replication"), "master_link_status:up"); {
		if time.Now().After(deadline) {
			t.Fatal("the replica never synced")
		}
		time.Sleep(50 * time.Millisecond)
	}

	url := fmt.Sprintf("redis+sentinel://127.0.0.1:%d/nf", sentinel)
	o := Options{TTL: 2 * time.Second, Namespace: "sent", FastStart: FastVerify}
	first, err := Acquire(ctx, url, o)
	if err != nil {
		t.Fatal(err)
	}
	if first.HasHistory() || first.StartedFast() {
		t.Fatal("a new namespace started fast")
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// History, and a replica that acknowledges each write: verified, fast.
	l, err := Acquire(ctx, url, o)
	if err != nil {
		t.Fatal(err)
	}
	if !l.StartedFast() {
		t.Fatalf("verify with a connected replica started slow: %v", l.SlowStartReason())
	}
	// The primary dies; the sentinel promotes the replica; the lease renews
	// there (the replica had every write: WAIT saw to it).
	_ = exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(primary), "shutdown", "nosave").Run()
	for deadline := time.Now().Add(30 * time.Second); !strings.HasPrefix(cli(replica, "ROLE"), "master"); {
		if time.Now().After(deadline) {
			t.Fatal("no failover")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Held for two TTLs past the failover: renewals reached the new primary
	// (a lease that could not renew lapses at its deadline, 1.8 s on).
	for until := time.Now().Add(4 * time.Second); time.Now().Before(until); {
		if st, _ := l.State(); st == Lost || st == Released {
			t.Fatalf("the lease did not follow the failover: %v %v", st, l.LastError())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, _ := l.State(); st != Held {
		t.Fatalf("the lease did not follow the failover: %v %v", st, l.LastError())
	}
	// No replica is left: verify cannot show a write survives a failover.
	l2, err := Acquire(ctx, url, Options{TTL: 2 * time.Second, Namespace: "sent", FastStart: FastVerify, IDs: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if l2.StartedFast() || l2.SlowStartReason() == nil {
		t.Fatal("verify without a replica started fast")
	}
	_ = l2.Release(ctx)
	_ = l.Release(ctx)

	// PostgreSQL: the first host is down, the second takes the lease.
	pg := startStore(t, "postgres")
	rest := strings.TrimPrefix(pg.url, "postgres://postgres@")
	multi := fmt.Sprintf("postgres://postgres@127.0.0.1:1,%s?target_session_attrs=read-write", rest)
	p, err := Acquire(ctx, multi, Options{TTL: 2 * time.Second, FastStart: FastVerify})
	if err != nil {
		t.Fatal(err)
	}
	if why := p.SlowStartReason(); why == nil || !strings.Contains(why.Error(), "history") {
		t.Fatalf("a new namespace: %v", why)
	}
	if err := p.Release(ctx); err != nil {
		t.Fatal(err)
	}
	p, err = Acquire(ctx, multi, Options{TTL: 2 * time.Second, FastStart: FastVerify})
	if err != nil {
		t.Fatal(err)
	}
	if why := p.SlowStartReason(); why == nil || !strings.Contains(why.Error(), "synchronous_standby_names") {
		t.Fatalf("verify without synchronous standbys: %v", why)
	}
	if err := p.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
