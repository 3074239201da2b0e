package lease

// Mixed fleets on the real stores: Rust CLI processes (`nonceforge gen
// --lease`), Go processes (this test binary re-run as a holder) and Node
// processes (node/test/support/holder.js on the addon) and Python processes
// (python/tests/support/holder.py on the installed wheel) lease from one store
// at once and get distinct ids; a Go holder killed with kill -9 is succeeded
// by a Rust one that starts above its floor, and the other way round, and
// likewise between Node and Go; every nonce of every process is distinct.

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// TestHelperHolder is a Go holder process when NF_HOLDER_URL is set: it
// leases an id, prints `id N`, then counter-96 nonces in hex, one a line,
// until its stdin closes; then it releases and prints `released`.
func TestHelperHolder(t *testing.T) {
	url := os.Getenv("NF_HOLDER_URL")
	if url == "" {
		t.Skip("a helper process for the fleet tests")
	}
	ttl, _ := time.ParseDuration(os.Getenv("NF_HOLDER_TTL"))
	l, err := Acquire(context.Background(), url, Options{IDs: os.Getenv("NF_HOLDER_IDS"), TTL: ttl})
	if err != nil {
		fmt.Println("fail", err)
		os.Exit(2)
	}
	g, err := l.Generator(context.Background(), nonce.Options{})
	if err != nil {
		fmt.Println("fail", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "id %d\n", l.MachineID())
	out.Flush()
	closed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(closed) }()
	saidLost := false
	for {
		select {
		case <-closed:
			if err := l.Release(context.Background()); err != nil {
				fmt.Println("release-error", err)
				os.Exit(1)
			}
			fmt.Println("released")
			os.Exit(0)
		default:
		}
		for range 20 {
			n, err := g.Counter(96)
			if err != nil {
				fmt.Fprintf(out, "e %v\n", err)
				if reason, lost := l.LostReason(); lost && !saidLost {
					fmt.Fprintf(out, "lost %s\n", reason)
					saidLost = true
				}
				break
			}
			fmt.Fprintln(out, n.String())
		}
		out.Flush()
		time.Sleep(time.Millisecond)
	}
}

// proc is a holder process and what it printed.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

func start(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Its stderr is passed on, and kept as lines starting "! ".
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.done })
	var readers sync.WaitGroup
	read := func(r io.Reader, prefix string) {
		defer readers.Done()
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64*1024), 1<<20)
		for s.Scan() {
			if prefix != "" {
				fmt.Fprintln(os.Stderr, s.Text())
			}
			p.mu.Lock()
			p.lines = append(p.lines, prefix+s.Text())
			p.mu.Unlock()
		}
	}
	readers.Add(2)
	go read(stdout, "")
	go read(stderr, "! ")
	go func() {
		readers.Wait()
		_ = cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *proc) snapshot() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// nonces are the counter-96 nonces it printed: the 24-hex-digit lines (Rust,
// Go), and the 24-digit words of `n <ms> …` lines (Node: counter-96,
// sortable-128 and encrypted-64 nonces in turn, of 24, 32 and 16 digits).
func (p *proc) nonces() []string {
	var out []string
	for _, l := range p.snapshot() {
		if isNonce(l) {
			out = append(out, l)
		} else if strings.HasPrefix(l, "n ") {
			for _, w := range strings.Fields(l)[2:] {
				if len(w) == 24 {
					out = append(out, w)
				}
			}
		}
	}
	return out
}

// waitFor waits until some line satisfies ok, or the process ends.
func (p *proc) waitFor(t *testing.T, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range p.snapshot() {
			if ok(l) {
				return l
			}
		}
		select {
		case <-p.done:
			t.Fatalf("%s: the process ended first: %v", what, p.snapshot())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s: timed out: %v", what, p.snapshot())
	return ""
}

func goHolder(t *testing.T, url, ids string) *proc {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NF_HOLDER_URL="+url, "NF_HOLDER_IDS="+ids, "NF_HOLDER_TTL="+fleetTTL.String())
	return start(t, cmd)
}

// fleetTTL is every fleet member's TTL (2 s; a test that takes the store away
// for longer sets more, and puts it back).
var fleetTTL = 2 * time.Second

// nodeHolder runs node/test/support/holder.js (ids, fleetTTL); it prints
// `id N FLOOR`, then `n <ms> <nonces>` lines, and releases when stdin closes.
func nodeHolder(t *testing.T, url, ids string) *proc {
	script, _ := filepath.Abs(filepath.Join("..", "..", "node", "test", "support", "holder.js"))
	return start(t, exec.Command("node", script, url, ids, fmt.Sprint(fleetTTL.Milliseconds())))
}

// haveNode: node and the addon are here (make test builds the addon before the
// Go tests and sets NF_FLEET_NODE=1, which makes their absence an error).
func haveNode(t *testing.T) bool {
	_, err := exec.LookPath("node")
	addon := fileExists(filepath.Join("..", "..", "node", "nonceforge.node"))
	if err == nil && addon {
		return true
	}
	why := "node is not on PATH"
	if err == nil {
		why = "node/nonceforge.node is missing (cd node && npm run build)"
	}
	if os.Getenv("NF_FLEET_NODE") == "1" {
		t.Fatalf("Node holders: %s", why)
	}
	t.Logf("Node holders left out: %s", why)
	return false
}

// pyHolder runs python/tests/support/holder.py (ids, fleetTTL) with the
// Python of NF_FLEET_PYTHON (make test's venv, the wheel installed in it); it
// prints `id N FLOOR`, then counter-96 nonces one a line, `lost REASON` once
// its lease is lost, and releases when stdin closes.
func pyHolder(t *testing.T, url, ids string) *proc {
	script, _ := filepath.Abs(filepath.Join("..", "..", "python", "tests", "support", "holder.py"))
	return start(t, exec.Command(os.Getenv("NF_FLEET_PYTHON"), script, url, ids, fmt.Sprint(fleetTTL.Milliseconds())))
}

// havePython: NF_FLEET_PYTHON names a Python with nonceforge installed (make
// test sets it after installing the wheel; then its absence is an error).
func havePython(t *testing.T) bool {
	py := os.Getenv("NF_FLEET_PYTHON")
	if py == "" {
		t.Logf("Python holders left out: NF_FLEET_PYTHON is not set")
		return false
	}
	if out, err := exec.Command(py, "-c", "import nonceforge").CombinedOutput(); err != nil {
		t.Fatalf("Python holders: %s cannot import nonceforge: %v %s", py, err, out)
	}
	return true
}

func nodeID(t *testing.T, p *proc) (id int, floor int64) {
	t.Helper()
	line := p.waitFor(t, "a Node id", func(l string) bool { return strings.HasPrefix(l, "id ") })
	if _, err := fmt.Sscanf(line, "id %d %d", &id, &floor); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return id, floor
}

func hasNodeNonce(l string) bool { return strings.HasPrefix(l, "n ") }

// untilLeased starts holders with mk until one gets its id (prints a line
// ready accepts) instead of failing because the id is still taken, for up to
// 15 s: the previous holder's TTL has to run out first.
func untilLeased(t *testing.T, mk func() *proc, ready func(string) bool) *proc {
	t.Helper()
	failed := func(l string) bool { return strings.HasPrefix(l, "fail") }
	for end := time.Now().Add(15 * time.Second); ; {
		p := mk()
		for !slices.ContainsFunc(p.snapshot(), failed) {
			if slices.ContainsFunc(p.snapshot(), ready) {
				return p
			}
			select {
			case <-p.done:
				if slices.ContainsFunc(p.snapshot(), ready) {
					return p
				}
				if !slices.ContainsFunc(p.snapshot(), failed) {
					t.Fatalf("a holder ended without leasing or failing: %v", p.snapshot())
				}
			case <-time.After(10 * time.Millisecond):
			}
		}
		<-p.done
		if time.Now().After(end) {
			t.Fatalf("never leased: %v", p.snapshot())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func cli(t *testing.T) string {
	t.Helper()
	p := filepath.Join("..", "..", "target", "release", "nonceforge")
	if !fileExists(p) {
		t.Fatalf("%s is missing: build it with `cargo build --release -p nonceforge-cli` (make test does)", p)
	}
	abs, _ := filepath.Abs(p)
	return abs
}

// rustHolder runs `nonceforge gen counter --bits 96 --lease URL` for up to n nonces.
func rustHolder(t *testing.T, url, ids string, n int, rate string) *proc {
	args := []string{"gen", "counter", "--bits", "96", "-n", fmt.Sprint(n), "--lease", url, "--ttl", fleetTTL.String(), "--ids", ids}
	if rate != "" {
		args = append(args, "--rate", rate)
	}
	return start(t, exec.Command(cli(t), args...))
}

func machineOf(t *testing.T, hexNonce string) (id int, ms int64) {
	t.Helper()
	b, err := hex.DecodeString(hexNonce)
	if err != nil {
		t.Fatal(err)
	}
	p, err := nonce.Decompose(b, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return p.MachineID, p.UnixMilli
}

func lastMs(t *testing.T, nonces []string) int64 {
	var top int64
	for _, n := range nonces {
		_, ms := machineOf(t, n)
		top = max(top, ms)
	}
	return top
}

func distinct(t *testing.T, groups ...[]string) int {
	t.Helper()
	seen := map[string]bool{}
	for _, g := range groups {
		for _, n := range g {
			if seen[n] {
				t.Fatalf("nonce %s issued twice", n)
			}
			seen[n] = true
		}
	}
	return len(seen)
}

func isNonce(l string) bool { return len(l) == 24 && !strings.Contains(l, " ") }

func TestMixedFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real stores and processes (run without -short)")
	}
	for _, kind := range []string{"postgres", "redis", "redis-cluster", "etcd"} {
		t.Run(kind, func(t *testing.T) {
			st := startStore(t, kind)

			// Three Rust, three Go and two Node holders at once: distinct ids.
			withNode, withPy := haveNode(t), havePython(t)
			var rust, gos, nodes, pys []*proc
			for range 3 {
				rust = append(rust, rustHolder(t, st.url, "0-511", 1_000_000, "3000"))
				gos = append(gos, goHolder(t, st.url, "0-511"))
			}
			for i := 0; withNode && i < 2; i++ {
				nodes = append(nodes, nodeHolder(t, st.url, "0-511"))
			}
			for i := 0; withPy && i < 2; i++ {
				pys = append(pys, pyHolder(t, st.url, "0-511"))
			}
			ids := map[int]string{}
			for i, p := range rust {
				id, _ := machineOf(t, p.waitFor(t, "a Rust nonce", isNonce))
				if prev, ok := ids[id]; ok {
					t.Fatalf("machine id %d held by %s and rust #%d", id, prev, i)
				}
				ids[id] = fmt.Sprintf("rust #%d", i)
			}
			for i, p := range gos {
				var id int
				fmt.Sscanf(p.waitFor(t, "a Go id", func(l string) bool { return strings.HasPrefix(l, "id ") }), "id %d", &id)
				if prev, ok := ids[id]; ok {
					t.Fatalf("machine id %d held by %s and go #%d", id, prev, i)
				}
				ids[id] = fmt.Sprintf("go #%d", i)
			}
			for i, p := range nodes {
				id, _ := nodeID(t, p)
				if prev, ok := ids[id]; ok {
					t.Fatalf("machine id %d held by %s and node #%d", id, prev, i)
				}
				ids[id] = fmt.Sprintf("node #%d", i)
				p.waitFor(t, "Node nonces", hasNodeNonce)
			}
			for i, p := range pys {
				id, _ := nodeID(t, p)
				if prev, ok := ids[id]; ok {
					t.Fatalf("machine id %d held by %s and python #%d", id, prev, i)
				}
				ids[id] = fmt.Sprintf("python #%d", i)
				p.waitFor(t, "Python nonces", isNonce)
			}
			time.Sleep(300 * time.Millisecond)
			for _, p := range rust {
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
				<-p.done
			}
			for _, p := range gos {
				p.stdin.Close()
				<-p.done
				if !p.waitForLine("released") {
					t.Fatalf("a Go holder did not release: %v", p.snapshot()[max(0, len(p.snapshot())-3):])
				}
			}
			for _, p := range append(append([]*proc{}, nodes...), pys...) {
				p.stdin.Close()
				<-p.done
				if !p.waitForLine("released") {
					t.Fatalf("a Node or Python holder did not release: %v", p.snapshot()[max(0, len(p.snapshot())-3):])
				}
			}
			var all [][]string
			for _, p := range append(append(append(rust, gos...), nodes...), pys...) {
				all = append(all, p.nonces())
			}
			if n := distinct(t, all...); n < (6+len(nodes)+len(pys))*50 {
				t.Fatalf("only %d nonces", n)
			}

			// A Go holder killed with kill -9; a Rust one takes its id after the TTL.
			g := goHolder(t, st.url, "40")
			g.waitFor(t, "the Go holder's id", func(l string) bool { return l == "id 40" })
			g.waitFor(t, "a Go nonce", isNonce)
			_ = g.cmd.Process.Kill()
			<-g.done
			goLast := lastMs(t, g.nonces())
			var r *proc
			for end := time.Now().Add(15 * time.Second); ; {
				r = rustHolder(t, st.url, "40", 200, "")
				<-r.done
				if len(r.nonces()) > 0 || time.Now().After(end) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(r.nonces()) == 0 {
				t.Fatal("the Rust successor never got machine id 40")
			}
			if id, ms := machineOf(t, r.nonces()[0]); id != 40 || ms <= goLast {
				t.Fatalf("the Rust successor's first nonce: id %d at %d; the Go holder's last at %d", id, ms, goLast)
			}
			distinct(t, g.nonces(), r.nonces())

			// A Go holder stopped (SIGSTOP) past its TTL: a Rust holder takes the
			// id; once continued, the Go holder issues nothing more.
			stopped := goHolder(t, st.url, "42")
			stopped.waitFor(t, "the Go holder's id", func(l string) bool { return l == "id 42" })
			stopped.waitFor(t, "a Go nonce", isNonce)
			_ = stopped.cmd.Process.Signal(syscall.SIGSTOP)
			var taker *proc
			for end := time.Now().Add(15 * time.Second); ; {
				taker = rustHolder(t, st.url, "42", 200, "")
				<-taker.done
				if len(taker.nonces()) > 0 || time.Now().After(end) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if len(taker.nonces()) == 0 {
				_ = stopped.cmd.Process.Signal(syscall.SIGCONT)
				t.Fatal("nobody got machine id 42 from the stopped holder")
			}
			_ = stopped.cmd.Process.Signal(syscall.SIGCONT)
			stopped.waitFor(t, "a refusal after SIGCONT", func(l string) bool { return strings.HasPrefix(l, "e ") })
			time.Sleep(200 * time.Millisecond)
			// Nonces it made before the stop may reach the pipe after SIGCONT (its
			// buffer is flushed then), so the check is on what they carry: every one
			// lies below the first nonce of the holder that took the id over.
			_, takerFirst := machineOf(t, taker.nonces()[0])
			if goLast := lastMs(t, stopped.nonces()); goLast >= takerFirst {
				t.Fatalf("the stopped Go holder issued a nonce at %d, the new holder started at %d", goLast, takerFirst)
			}
			if !strings.HasPrefix(stopped.snapshot()[len(stopped.snapshot())-1], "e ") {
				t.Fatalf("the stopped holder still issues after SIGCONT: %v", stopped.snapshot()[len(stopped.snapshot())-1])
			}
			distinct(t, stopped.nonces(), taker.nonces())
			stopped.stdin.Close()
			<-stopped.done
			if !stopped.waitForLine("release-error") && !strings.Contains(strings.Join(stopped.snapshot(), "\n"), "release-error") {
				t.Fatalf("the stopped holder released an id it had lost: %v", stopped.snapshot()[max(0, len(stopped.snapshot())-2):])
			}

			if withNode {
				// A Node holder killed with kill -9; a Go one takes its id after
				// the TTL, above its floor. Then that Go holder is killed, and a
				// Node one takes the id above the Go holder's floor.
				nd := nodeHolder(t, st.url, "43")
				if id, _ := nodeID(t, nd); id != 43 {
					t.Fatalf("the Node holder got id %d", id)
				}
				nd.waitFor(t, "Node nonces", hasNodeNonce)
				time.Sleep(50 * time.Millisecond)
				_ = nd.cmd.Process.Kill()
				<-nd.done
				nodeLast := lastMs(t, nd.nonces())
				gsucc := untilLeased(t, func() *proc { return goHolder(t, st.url, "43") }, isNonce)
				first := gsucc.waitFor(t, "the Go successor's first nonce", isNonce)
				if id, ms := machineOf(t, first); id != 43 || ms <= nodeLast {
					t.Fatalf("the Go successor's first nonce: id %d at %d; the Node holder's last at %d", id, ms, nodeLast)
				}
				time.Sleep(50 * time.Millisecond)
				_ = gsucc.cmd.Process.Kill()
				<-gsucc.done
				goLast := lastMs(t, gsucc.nonces())
				nsucc := untilLeased(t, func() *proc { return nodeHolder(t, st.url, "43") }, func(l string) bool { return strings.HasPrefix(l, "id ") })
				if id, floor := nodeID(t, nsucc); id != 43 || floor < goLast {
					t.Fatalf("the Node successor: id %d, floor %d; the Go holder's last at %d", id, floor, goLast)
				}
				nsucc.waitFor(t, "the Node successor's nonces", hasNodeNonce)
				if _, ms := machineOf(t, nsucc.nonces()[0]); ms <= goLast {
					t.Fatalf("the Node successor's first nonce at %d; the Go holder's last at %d", ms, goLast)
				}
				nsucc.stdin.Close()
				<-nsucc.done
				distinct(t, nd.nonces(), gsucc.nonces(), nsucc.nonces())
			}

			if withPy {
				// A Python holder killed with kill -9; a Rust one takes its id
				// after the TTL, above its last nonce, and releases it; a Python
				// one takes it then, its floor the Rust one's last.
				py := pyHolder(t, st.url, "44")
				if id, _ := nodeID(t, py); id != 44 {
					t.Fatalf("the Python holder got id %d", id)
				}
				py.waitFor(t, "Python nonces", isNonce)
				_ = py.cmd.Process.Kill()
				<-py.done
				pyLast := lastMs(t, py.nonces())
				var rsucc *proc
				for end := time.Now().Add(15 * time.Second); ; {
					rsucc = rustHolder(t, st.url, "44", 200, "")
					<-rsucc.done
					if len(rsucc.nonces()) > 0 || time.Now().After(end) {
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				if len(rsucc.nonces()) == 0 {
					t.Fatal("the Rust successor never got machine id 44")
				}
				if id, ms := machineOf(t, rsucc.nonces()[0]); id != 44 || ms <= pyLast {
					t.Fatalf("the Rust successor's first nonce: id %d at %d; the Python holder's last at %d", id, ms, pyLast)
				}
				// It drew its 200 and released: the Python one starts above its last.
				rLast := lastMs(t, rsucc.nonces())
				psucc := untilLeased(t, func() *proc { return pyHolder(t, st.url, "44") }, func(l string) bool { return strings.HasPrefix(l, "id ") })
				if id, floor := nodeID(t, psucc); id != 44 || floor < rLast {
					t.Fatalf("the Python successor: id %d, floor %d; the Rust holder's last at %d", id, floor, rLast)
				}
				if _, ms := machineOf(t, psucc.waitFor(t, "the Python successor's nonce", isNonce)); ms <= rLast {
					t.Fatalf("the Python successor's first nonce at %d; the Rust holder's last at %d", ms, rLast)
				}
				psucc.stdin.Close()
				<-psucc.done
				distinct(t, py.nonces(), rsucc.nonces(), psucc.nonces())
			}

			// A Rust holder killed with kill -9; a Go one takes its id after the TTL.
			r = rustHolder(t, st.url, "41", 1_000_000, "3000")
			r.waitFor(t, "a Rust nonce", isNonce)
			time.Sleep(100 * time.Millisecond)
			_ = r.cmd.Process.Kill()
			<-r.done
			rustLast := lastMs(t, r.nonces())
			var l *Lease
			for end := time.Now().Add(15 * time.Second); ; {
				var err error
				l, err = Acquire(context.Background(), st.url, Options{IDs: "41", TTL: 2 * time.Second})
				if err == nil {
					break
				}
				if !errors.Is(err, ErrAllTaken) || time.Now().After(end) {
					t.Fatalf("the Go successor: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			gen, err := l.Generator(context.Background(), nonce.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var mine []string
			for range 1000 {
				n, err := gen.Counter(96)
				if err != nil {
					t.Fatal(err)
				}
				mine = append(mine, n.String())
			}
			if id, ms := machineOf(t, mine[0]); id != 41 || ms <= rustLast || l.FloorUnixMilli() < rustLast {
				t.Fatalf("the Go successor: id %d, first nonce at %d, floor %d; the Rust holder's last at %d", id, ms, l.FloorUnixMilli(), rustLast)
			}
			distinct(t, r.nonces(), mine)
			if err := l.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := gen.Counter(96); !errors.Is(err, nonce.ErrDisabled) {
				t.Fatalf("after release: %v", err)
			}
		})
	}
}

func (p *proc) waitForLine(line string) bool {
	for _, l := range p.snapshot() {
		if l == line {
			return true
		}
	}
	return false
}
