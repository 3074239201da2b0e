package lease

// A mixed fleet (Rust CLI, Go and Node members) drawing counter nonces while
// the store loses its data: Redis flushed, Redis restarted without
// persistence, an etcd prefix wiped. Every old member reports the loss
// (reason "store") at its next renewal and stops; the new members find no
// history and start the TTL and margin ahead; no nonce repeats.

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

type member struct {
	face string
	p    *proc
}

// fleetWave starts two Rust, two Go, (with Node) two Node and (with
// Python) two Python members.
func fleetWave(t *testing.T, url string, withNode, withPy bool) []member {
	var ms []member
	for range 2 {
		ms = append(ms, member{"rust", rustHolder(t, url, "0-511", 100_000_000, "3000")})
		ms = append(ms, member{"go", goHolder(t, url, "0-511")})
		if withNode {
			ms = append(ms, member{"node", nodeHolder(t, url, "0-511")})
		}
		if withPy {
			ms = append(ms, member{"python", pyHolder(t, url, "0-511")})
		}
	}
	return ms
}

func drawingNonces(t *testing.T, ms []member) {
	t.Helper()
	for _, m := range ms {
		m.p.waitFor(t, m.face+" nonces", func(l string) bool { return isNonce(l) || hasNodeNonce(l) })
	}
}

// reportsLoss: the member said the store lost its data.
func reportsLoss(t *testing.T, m member) {
	t.Helper()
	want := map[string]func(string) bool{
		"rust": func(l string) bool {
			return strings.HasPrefix(l, "! ") && strings.Contains(l, "the store lost its data")
		},
		"go":     func(l string) bool { return l == "lost "+LostStoreData.String() },
		"node":   func(l string) bool { return l == "event lost store" },
		"python": func(l string) bool { return l == "lost store" },
	}[m.face]
	deadline := time.Now().Add(15 * time.Second)
	for !containsLine(m.p.snapshot(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("a %s member never reported the loss: %v", m.face, tail(m.p.snapshot()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func containsLine(lines []string, ok func(string) bool) bool {
	for _, l := range lines {
		if ok(l) {
			return true
		}
	}
	return false
}

func tail(lines []string) []string { return lines[max(0, len(lines)-5):] }

func stopMembers(ms []member) {
	for _, m := range ms {
		if m.face == "rust" {
			_ = m.p.cmd.Process.Signal(syscall.SIGTERM)
		} else {
			m.p.stdin.Close()
		}
	}
	for _, m := range ms {
		select {
		case <-m.p.done:
		case <-time.After(20 * time.Second):
		}
	}
}

func redisCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	port := strings.TrimSuffix(strings.TrimPrefix(url, "redis://127.0.0.1:"), "/0")
	out, err := exec.Command(need(t, "redis-cli"), append([]string{"-p", port}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestFleetSurvivesStoreDataLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real stores and processes (run without -short)")
	}
	for _, c := range []struct{ kind, how string }{{"redis", "flushall"}, {"redis", "restart-empty"}, {"etcd", "wipe-prefix"}} {
		t.Run(c.kind+"/"+c.how, func(t *testing.T) {
			st := startStore(t, c.kind)
			withNode, withPy := haveNode(t), havePython(t)
			old := fleetWave(t, st.url, withNode, withPy)
			drawingNonces(t, old)
			switch c.how {
			case "flushall":
				if got := redisCLI(t, st.url, "FLUSHALL"); got != "OK" {
					t.Fatal(got)
				}
			case "restart-empty":
				// Killed and started again without persistence: it comes back empty.
				dir := strings.TrimSpace(redisCLI(t, st.url, "CONFIG", "GET", "dir"))
				dir = strings.TrimSpace(strings.SplitN(dir, "\n", 2)[1])
				port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
				_ = exec.Command(need(t, "redis-cli"), "-p", port, "shutdown", "nosave").Run()
				run(t, need(t, "redis-server"), "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
					"--daemonize", "yes", "--dir", dir, "--logfile", dir+"/log2")
				waitPort(t, atoi(t, port), "redis")
			case "wipe-prefix":
				client := strings.TrimPrefix(st.url, "etcd://")
				out, err := exec.Command(need(t, "etcdctl"), "--endpoints", "http://"+client, "del", "--prefix", "/nonceforge/").CombinedOutput()
				if err != nil {
					t.Fatalf("etcdctl: %v %s", err, out)
				}
			}
			fresh := fleetWave(t, st.url, withNode, withPy)
			for _, m := range old {
				reportsLoss(t, m)
			}
			drawingNonces(t, fresh)
			stopMembers(append(append([]member{}, old...), fresh...))
			var counters, sortables [][]string
			for _, m := range append(old, fresh...) {
				counters = append(counters, m.p.nonces())
				sortables = append(sortables, nodeSortables(m.p))
			}
			n := distinct(t, counters...)
			ns := distinct(t, sortables...)
			t.Logf("%s: %d counter and %d sortable nonces from %d members, none twice", c.how, n, ns, len(old)+len(fresh))
		})
	}
}

// nodeSortables are the sortable-128 nonces (32 hex digits) of a Node
// member's `n <ms> …` lines.
func nodeSortables(p *proc) []string {
	var out []string
	for _, l := range p.snapshot() {
		if strings.HasPrefix(l, "n ") {
			for _, w := range strings.Fields(l)[2:] {
				if len(w) == 32 {
					out = append(out, w)
				}
			}
		}
	}
	return out
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatal(err)
	}
	return n
}
