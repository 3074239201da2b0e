package lease

// Real lease stores on loopback ports for the tests — PostgreSQL 15, Redis,
// etcd from Debian (`make setup` installs them) — each in a temporary
// directory, stopped and removed when the test ends.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type testStore struct {
	kind, url string
}

func need(t *testing.T, program string) string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/lib/postgresql/15/bin", "/usr/sbin", "/usr/bin"} {
		if p := filepath.Join(dir, program); fileExists(p) {
			return p
		}
	}
	t.Fatalf("%s not found: run `make setup`", program)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPort(t *testing.T, port int, what string) {
	t.Helper()
	for range 400 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s did not open port %d", what, port)
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// releaseAtEnd releases l when the test ends, before its store stops
// (cleanups run last first), whether the test passed or not: a lease left
// renewing against a stopped store would outlive its test.
func releaseAtEnd(t *testing.T, l *Lease) {
	t.Cleanup(func() { _ = l.Release(context.Background()) })
}

func startStore(t *testing.T, kind string) testStore {
	t.Helper()
	// Not t.TempDir: its parent is closed to other users, and PostgreSQL runs as postgres.
	dir, err := os.MkdirTemp("", "nonceforge-go-"+kind+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	switch kind {
	case "redis":
		port := freePort(t)
		run(t, need(t, "redis-server"), "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--daemonize", "yes", "--dir", dir, "--pidfile", filepath.Join(dir, "pid"), "--logfile", filepath.Join(dir, "log"))
		t.Cleanup(func() { _ = exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(port), "shutdown", "nosave").Run() })
		waitPort(t, port, "redis")
		return testStore{kind, fmt.Sprintf("redis://127.0.0.1:%d", port)}
	case "redis-cluster":
		// Three primaries, each its own slots (redis-cli --cluster create).
		var addrs []string
		var ports []int
		for i := range 3 {
			port, bus := freePort(t), freePort(t)
			node := filepath.Join(dir, fmt.Sprint(i))
			if err := os.Mkdir(node, 0o700); err != nil {
				t.Fatal(err)
			}
			run(t, need(t, "redis-server"), "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
				"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", fmt.Sprint(bus),
				"--daemonize", "yes", "--dir", node, "--pidfile", filepath.Join(node, "pid"), "--logfile", filepath.Join(node, "log"))
			t.Cleanup(func() { _ = exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(port), "shutdown", "nosave").Run() })
			waitPort(t, port, "redis cluster node")
			addrs, ports = append(addrs, fmt.Sprintf("127.0.0.1:%d", port)), append(ports, port)
		}
		run(t, need(t, "redis-cli"), append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
		for _, port := range ports {
			for deadline := time.Now().Add(30 * time.Second); ; {
				out, _ := exec.Command(need(t, "redis-cli"), "-p", fmt.Sprint(port), "CLUSTER", "INFO").Output()
				if strings.Contains(string(out), "cluster_state:ok") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the cluster is not ok on port %d: %s", port, out)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return testStore{kind, "redis+cluster://" + strings.Join(addrs, ",")}
	case "etcd":
		client, peer := freePort(t), freePort(t)
		cmd := exec.Command(need(t, "etcd"), "--name", "t", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", client), "--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", client),
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer), "--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
			"--initial-cluster", fmt.Sprintf("t=http://127.0.0.1:%d", peer), "--unsafe-no-fsync")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitPort(t, client, "etcd")
		return testStore{kind, fmt.Sprintf("etcd://127.0.0.1:%d", client)}
	default:
		port := freePort(t)
		root := os.Getuid() == 0
		asPg := func(program string, args ...string) {
			p := need(t, program)
			if root {
				run(t, "runuser", append([]string{"-u", "postgres", "--", p}, args...)...)
			} else {
				run(t, p, args...)
			}
		}
		if root {
			run(t, "chown", "postgres", dir)
		}
		data := filepath.Join(dir, "data")
		asPg("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")
		// fsync off for the tests; NF_PG_FSYNC=on for figures (make
		// bench-lease-scale: every renewal's commit on disk, as in production).
		fsync := cmp.Or(os.Getenv("NF_PG_FSYNC"), "off")
		asPg("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-o",
			fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories=%s -c fsync=%s -c max_connections=200", port, dir, fsync), "start")
		t.Cleanup(func() { asPg("pg_ctl", "-D", data, "-m", "immediate", "stop") })
		return testStore{"postgres", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", port)}
	}
}
