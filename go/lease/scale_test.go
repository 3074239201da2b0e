package lease

import (
	"bufio"
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nonceforge/nonceforge/go/nonce"
)

// TestHelperScale is a helper process of TestScaleChurn: it holds
// NF_SCALE_N leases of one wide namespace at once (32 acquiring at a time),
// prints "acq MS" for each, then every second "held NOW id:DEADLINE …" (the
// leases it may issue under, each until when, Unix ms), "rtt MS …" (each
// lease's last renewal round trip) and, from its first NF_SCALE_DRAW
// leases, counter nonces "n HEX …". It runs until killed (kill -9: nothing
// is released).
func TestHelperScale(t *testing.T) {
	url := os.Getenv("NF_SCALE_URL")
	if url == "" {
		t.Skip("a helper process for TestScaleChurn")
	}
	n, _ := strconv.Atoi(os.Getenv("NF_SCALE_N"))
	draw, _ := strconv.Atoi(os.Getenv("NF_SCALE_DRAW"))
	ttl, _ := time.ParseDuration(os.Getenv("NF_SCALE_TTL"))
	// Quiet: every id starts without history here (a warning each).
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := Options{TTL: ttl, Namespace: "scale", Layout: nonce.Wide, ConnectTimeout: 120 * time.Second, Logger: quiet}
	// NF_SCALE_POOL > 0: every lease of the process through one Pool of
	// that many connections (acquiring that many at a time), else each on a
	// connection of its own (32 acquiring at a time).
	conns, _ := strconv.Atoi(os.Getenv("NF_SCALE_POOL"))
	acquire := func() (*Lease, error) { return Acquire(context.Background(), url, o) }
	if conns > 0 {
		p, err := NewPool(context.Background(), url, o, conns)
		if err != nil {
			fmt.Printf("fail %v\n", err)
			os.Exit(2)
		}
		acquire = func() (*Lease, error) { return p.Acquire(context.Background()) }
	}
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	say := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, f, a...)
		out.Flush()
	}
	leases := make([]*Lease, n)
	gens := make([]*nonce.Generator, n)
	var wg sync.WaitGroup
	slots := make(chan struct{}, cmp.Or(conns, 32))
	for i := range n {
		wg.Go(func() {
			// An acquire that fails (a store too busy to answer in time) is
			// tried again, as a supervisor restarting the member would; each
			// failure is counted ("acqerr"), and a member that cannot get its
			// leases in five tries fails the test.
			var l *Lease
			var err error
			for try := 0; try < 5; try++ {
				slots <- struct{}{}
				t0 := time.Now()
				l, err = acquire()
				<-slots
				if err == nil {
					say("acq %.3f\n", float64(time.Since(t0).Microseconds())/1000)
					break
				}
				say("acqerr %v\n", err)
			}
			if err != nil {
				say("fail %v\n", err)
				os.Exit(2)
			}
			if i < draw {
				g, err := l.Generator(context.Background(), nonce.Options{})
				if err != nil {
					say("fail %v\n", err)
					os.Exit(2)
				}
				mu.Lock()
				gens[i] = g
				mu.Unlock()
			}
			mu.Lock()
			leases[i] = l
			mu.Unlock()
		})
	}
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	for {
		time.Sleep(time.Second)
		now := time.Now()
		var held, rtt, ns strings.Builder
		mu.Lock()
		ls, gs := slices.Clone(leases), slices.Clone(gens)
		mu.Unlock()
		for _, l := range ls {
			if l == nil {
				continue
			}
			if s, left := l.State(); s == Held {
				fmt.Fprintf(&held, " %d:%d", l.MachineID(), now.Add(left).UnixMilli())
			}
			if m := l.Metrics(); m.Renewals > 0 {
				fmt.Fprintf(&rtt, " %.2f", float64(m.RenewalLast.Microseconds())/1000)
			}
		}
		for _, g := range gs {
			for range 20 {
				if g == nil {
					break
				}
				v, err := g.Counter(96)
				if err != nil {
					break
				}
				ns.WriteString(" " + hex.EncodeToString(v.Bytes()))
			}
		}
		say("held %d%s\nrtt%s\nn%s\n", now.UnixMilli(), held.String(), rtt.String(), ns.String())
	}
}

// scaleRun is one member process of TestScaleChurn and what it printed.
type scaleRun struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	acq   []float64
	rtt   []float64
	held  []scaleHeld
	vals  []string
	fails []string
	errs  int
}

type scaleHeld struct {
	from     int64 // when the member said so (Unix ms)
	id       int
	deadline int64
	who      *scaleRun
}

func startScaleRun(t *testing.T, url string, n, draw, pool int, ttl time.Duration) *scaleRun {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScale$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NF_SCALE_URL="+url, fmt.Sprint("NF_SCALE_N=", n), fmt.Sprint("NF_SCALE_DRAW=", draw), fmt.Sprint("NF_SCALE_POOL=", pool), "NF_SCALE_TTL="+ttl.String())
	r := &scaleRun{cmd: cmd}
	var err error
	if r.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			r.mu.Lock()
			switch f[0] {
			case "acq":
				v, _ := strconv.ParseFloat(f[1], 64)
				r.acq = append(r.acq, v)
			case "rtt":
				for _, w := range f[1:] {
					v, _ := strconv.ParseFloat(w, 64)
					r.rtt = append(r.rtt, v)
				}
			case "held":
				at, _ := strconv.ParseInt(f[1], 10, 64)
				for _, w := range f[2:] {
					a, b, _ := strings.Cut(w, ":")
					id, _ := strconv.Atoi(a)
					d, _ := strconv.ParseInt(b, 10, 64)
					r.held = append(r.held, scaleHeld{at, id, d, r})
				}
			case "n":
				r.vals = append(r.vals, f[1:]...)
			case "fail":
				r.fails = append(r.fails, sc.Text())
			case "acqerr":
				r.errs++
			}
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return r
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// TestScaleChurn holds many leases of one wide namespace from several member
// processes and churns them: every renewal period a tenth of the holders
// (whole processes) are killed with kill -9 and as many started anew. No id
// is held by two live members at once (each member's "held until" windows
// never overlap another's for one id), and no value repeats among the
// members drawing nonces. It prints the figures (acquire p50/p99, renewal
// round trip p99, the store's operations a second and CPU, memory per held
// id). make test runs it small on every store; the full size
// (NF_SCALE_HOLDERS=10000 NF_SCALE_SECONDS=300 NF_SCALE_STORES=redis,etcd,postgres)
// is `make bench-lease-scale`, with its figures in bench/RESULTS.md.
func TestScaleChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stores and member processes")
	}
	env := func(k string, d int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return d
	}
	holders, seconds := env("NF_SCALE_HOLDERS", 200), env("NF_SCALE_SECONDS", 12)
	stores := strings.Split(os.Getenv("NF_SCALE_STORES"), ",")
	if stores[0] == "" {
		stores = []string{"redis", "etcd", "postgres"}
	}
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) {
			n := holders
			per := max(n/20, 1)
			procs := n / per
			// Each member process's leases share a Pool of 4 connections on
			// PostgreSQL (20 processes: 80 of the test server's 200); on
			// Redis and etcd each lease has its own unless NF_SCALE_POOL says.
			pool := env("NF_SCALE_POOL", map[string]int{"postgres": 4}[kind])
			ttl := 3 * time.Second // the default run's; the full size runs the default TTL (10 s)
			if v, err := time.ParseDuration(os.Getenv("NF_SCALE_TTL")); err == nil && os.Getenv("NF_SCALE_URL") == "" {
				ttl = v
			}
			period := ttl / 3
			st := startStore(t, kind)
			empty := storeStats(t, st)
			if kind == "redis" {
				port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
				run(t, need(t, "redis-cli"), "-p", port, "CONFIG", "SET", "maxclients", fmt.Sprint(n+1000))
			}
			var all []*scaleRun
			var live []*scaleRun
			for i := range procs {
				r := startScaleRun(t, st.url, per, min(per, 2)*boolInt(i%4 == 0), pool, ttl)
				all, live = append(all, r), append(live, r)
			}
			t0 := time.Now()
			statsBefore := storeStats(t, st)
			for _, r := range all {
				for deadline := time.Now().Add(60 * time.Second); ; {
					r.mu.Lock()
					got := len(r.acq) + len(r.fails)
					r.mu.Unlock()
					if got >= per || time.Now().After(deadline) {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			killed := 0
			for time.Since(t0) < time.Duration(seconds)*time.Second {
				time.Sleep(period)
				// A tenth of the holders: whole processes, killed with kill -9, replaced.
				k := max(procs/10, 1)
				for range k {
					i := int(time.Now().UnixNano() % int64(len(live)))
					_ = live[i].cmd.Process.Kill()
					live = slices.Delete(live, i, i+1)
					killed++
					r := startScaleRun(t, st.url, per, min(per, 2), pool, ttl)
					all, live = append(all, r), append(live, r)
				}
			}
			statsAfter := storeStats(t, st)
			elapsed := time.Since(t0).Seconds()
			for _, r := range live {
				_ = r.cmd.Process.Kill()
			}
			for _, r := range all {
				_ = r.cmd.Wait()
			}
			var acq, rtt []float64
			var held []scaleHeld
			seen := map[string]bool{}
			values, acqErrs := 0, 0
			for _, r := range all {
				r.mu.Lock()
				acqErrs += r.errs
				acq, rtt, held = append(acq, r.acq...), append(rtt, r.rtt...), append(held, r.held...)
				for _, v := range r.vals {
					if seen[v] {
						t.Errorf("%s: value %s repeated", kind, v)
					}
					seen[v] = true
					values++
				}
				for _, f := range r.fails {
					t.Errorf("%s: a member failed: %s", kind, f)
				}
				r.mu.Unlock()
			}
			// No id under two live members at once: per id, the windows
			// [said, deadline] of different members never overlap.
			byID := map[int][]scaleHeld{}
			for _, h := range held {
				byID[h.id] = append(byID[h.id], h)
			}
			overlaps := 0
			for id, hs := range byID {
				slices.SortFunc(hs, func(a, b scaleHeld) int { return int(a.from - b.from) })
				for i := 1; i < len(hs); i++ {
					for j := i - 1; j >= 0 && j >= i-8; j-- {
						if hs[j].who != hs[i].who && hs[i].from < hs[j].deadline {
							overlaps++
							if overlaps < 4 {
								t.Errorf("%s: id %d held by two live members (one said so at %d until %d, the other at %d)", kind, id, hs[j].from, hs[j].deadline, hs[i].from)
							}
						}
					}
				}
			}
			if len(acq) < n || len(held) == 0 || values == 0 {
				t.Fatalf("%s: %d acquires, %d held reports, %d values: the members did not run", kind, len(acq), len(held), values)
			}
			ops := float64(statsAfter.ops-statsBefore.ops) / elapsed // etcd: 0
			cpu := (statsAfter.cpu - statsBefore.cpu) / elapsed * 100
			t.Logf("%s: %d holders in %d processes (%s), %d killed with kill -9 and replaced in %.0f s (%d ids ever held); acquire p50 %.1f ms, p99 %.1f ms (%d, %d failed and tried again); renewal round trip p99 %.1f ms; store %.0f ops/s, %.0f%% of a core; %.0f bytes a held id; %d values distinct",
				kind, n, procs, map[bool]string{true: fmt.Sprintf("a pool of %d connections each", pool), false: "a connection a lease"}[pool > 0], killed*per, elapsed, len(byID), pct(acq, 0.5), pct(acq, 0.99), len(acq), acqErrs, pct(rtt, 0.99), ops, cpu, float64(statsAfter.bytes-min(statsAfter.bytes, empty.bytes))/float64(n), values)
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type scaleStats struct {
	ops   uint64  // commands (Redis), transactions (PostgreSQL), else 0
	cpu   float64 // seconds of CPU used by the store
	bytes uint64  // memory (Redis used_memory, etcd RSS) or PostgreSQL's database size
}

// storeStats reads the store's counters: Redis INFO; for etcd and
// PostgreSQL the CPU of every such process on the machine (ps), etcd's RSS
// and PostgreSQL's database size: figures for a quiet machine, which make
// bench-lease-scale is.
func storeStats(t *testing.T, st testStore) scaleStats {
	var s scaleStats
	switch st.kind {
	case "redis":
		port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
		out, _ := exec.Command(need(t, "redis-cli"), "-p", port, "INFO").Output()
		for _, l := range strings.Split(string(out), "\r\n") {
			k, v, _ := strings.Cut(l, ":")
			switch k {
			case "total_commands_processed":
				s.ops, _ = strconv.ParseUint(v, 10, 64)
			case "used_cpu_sys", "used_cpu_user":
				f, _ := strconv.ParseFloat(v, 64)
				s.cpu += f
			case "used_memory":
				s.bytes, _ = strconv.ParseUint(v, 10, 64)
			}
		}
	default:
		if st.kind == "postgres" {
			// The database's size (tables, indexes): the backends' RSS counts
			// shared buffers in each, and their number is the pools', not
			// the holders'.
			c, err := pgx.Connect(context.Background(), st.url)
			if err == nil {
				// Transactions (each request is one) stand for its operations.
				_ = c.QueryRow(context.Background(), "SELECT pg_database_size(current_database()), xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()").Scan(&s.bytes, &s.ops)
				c.Close(context.Background())
			}
		}
		// CPU: each process's own and its exited children's (a backend that
		// exited counts in the postmaster's), from /proc (clock ticks: 1/100 s).
		out, _ := exec.Command("ps", "-C", st.kind, "-o", "pid=,rss=").Output()
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				continue
			}
			if stat, err := os.ReadFile("/proc/" + f[0] + "/stat"); err == nil {
				_, rest, _ := strings.Cut(string(stat), ") ")
				if fs := strings.Fields(rest); len(fs) > 14 {
					for _, v := range fs[11:15] { // utime, stime, cutime, cstime
						ticks, _ := strconv.ParseFloat(v, 64)
						s.cpu += ticks / 100
					}
				}
			}
			if st.kind != "postgres" {
				r, _ := strconv.ParseUint(f[1], 10, 64)
				s.bytes += r * 1024
			}
		}
	}
	return s
}
