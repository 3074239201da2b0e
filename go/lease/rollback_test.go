package lease

// A mixed fleet (Rust CLI, Go and Node members) on a Redis that goes back to
// an older copy of its data — a dump taken 4 s before — the way a failover
// to a replica that was behind does (docs/lease-protocol.md, "A store that
// goes back"). Ids with history are released, the copy is taken, new
// members take those ids, the store goes back, and another wave finds them
// released and takes them at once: no nonce repeats, and every member whose
// grant the copy never saw reports that the store went back.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportsLossAfterGoingBack: the member said the store went back to an older
// copy — or, where a new member took its id before its next renewal looked,
// that another holder took it. It reports whether it was the former.
func reportsLossAfterGoingBack(t *testing.T, m member) bool {
	t.Helper()
	back := map[string]func(string) bool{
		"rust": func(l string) bool {
			return strings.HasPrefix(l, "! ") && strings.Contains(l, "the store went back to an older copy")
		},
		"go":     func(l string) bool { return l == "lost "+LostStoreBack.String() },
		"node":   func(l string) bool { return l == "event lost rollback" },
		"python": func(l string) bool { return l == "lost rollback" },
	}[m.face]
	taken := map[string]func(string) bool{
		"rust": func(l string) bool {
			return strings.HasPrefix(l, "! ") && strings.Contains(l, "was lost (another holder took the id)")
		},
		"go":     func(l string) bool { return l == "lost "+LostTaken.String() },
		"node":   func(l string) bool { return l == "event lost taken" },
		"python": func(l string) bool { return l == "lost taken" },
	}[m.face]
	deadline := time.Now().Add(20 * time.Second)
	for {
		lines := m.p.snapshot()
		if containsLine(lines, back) {
			return true
		}
		if containsLine(lines, taken) {
			return false
		}
		if time.Now().After(deadline) {
			t.Fatalf("a %s member never reported the loss: %v", m.face, tail(lines))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFleetSurvivesStoreGoingBack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real stores and processes (run without -short)")
	}
	st := startStore(t, "redis")
	withNode, withPy := haveNode(t), havePython(t)
	// Members ride out the restart (a hold of 3.6 s less a renewal period)
	// instead of lapsing, so each hears what happened: at TTL 2 s a Rust
	// member lapsed during the restart on a loaded machine (make test).
	fleetTTL = 4 * time.Second
	t.Cleanup(func() { fleetTTL = 2 * time.Second })
	port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
	dir := strings.TrimSpace(redisCLI(t, st.url, "CONFIG", "GET", "dir"))
	dir = strings.TrimSpace(strings.SplitN(dir, "\n", 2)[1])

	held := fleetWave(t, st.url, withNode, withPy) // hold their ids throughout
	drawingNonces(t, held)
	released := fleetWave(t, st.url, withNode, withPy) // leave history behind
	drawingNonces(t, released)
	stopMembers(released)

	// The copy: a dump as of now.
	if got := redisCLI(t, st.url, "SAVE"); got != "OK" {
		t.Fatal(got)
	}
	older := filepath.Join(dir, "older.rdb")
	run(t, "cp", filepath.Join(dir, "dump.rdb"), older)
	copied := time.Now()
	unseen := fleetWave(t, st.url, withNode, withPy) // grants the copy never sees
	for time.Since(copied) < 4*time.Second {
		time.Sleep(10 * time.Millisecond)
	}
	// The store goes back: killed, started from the copy.
	_ = exec.Command(need(t, "redis-cli"), "-p", port, "shutdown", "nosave").Run()
	run(t, "cp", older, filepath.Join(dir, "dump.rdb"))
	run(t, need(t, "redis-server"), "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "yes", "--dir", dir, "--logfile", dir+"/log2")
	waitPort(t, atoi(t, port), "redis")
	if _, err := os.Stat(older); err != nil {
		t.Fatal(err)
	}

	fresh := fleetWave(t, st.url, withNode, withPy) // takes the ids the copy shows released
	wentBack := 0
	for _, m := range unseen {
		if reportsLossAfterGoingBack(t, m) {
			wentBack++
		}
	}
	if wentBack == 0 {
		t.Error("no member the copy forgot said that the store went back")
	}
	drawingNonces(t, fresh)
	all := append(append(append(append([]member{}, held...), released...), unseen...), fresh...)
	stopMembers(all)
	var counters, sortables [][]string
	for _, m := range all {
		counters = append(counters, m.p.nonces())
		sortables = append(sortables, nodeSortables(m.p))
	}
	n := distinct(t, counters...)
	ns := distinct(t, sortables...)
	t.Logf("%d counter and %d sortable nonces from %d members, none twice", n, ns, len(all))
	if n < len(all)*20 {
		t.Fatalf("too few nonces: %d", n)
	}
}
