package lease

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// A wide namespace (machine ids 0..65535) shared by Rust CLI and Go members
// on each store: the namespace records the layout; members of one layout in
// both languages get distinct ids and their wide values do not repeat; a
// standard member of either language is refused with both layouts named.
func TestWideFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the stores and the CLI")
	}
	for _, kind := range []string{"postgres", "redis", "etcd"} {
		t.Run(kind, func(t *testing.T) {
			st := startStore(t, kind)
			ctx := context.Background()
			o := Options{TTL: fleetTTL, Namespace: "widefleet", Layout: nonce.Wide, ConnectTimeout: 30 * time.Second}
			// The CLI member first: it makes the namespace's record.
			rust := start(t, exec.Command(cli(t), "gen", "counter", "--bits", "96", "-n", "2000", "--rate", "4000",
				"--lease", st.url, "--layout", "wide", "--ttl", fleetTTL.String(), "--namespace", "widefleet", "--connect-timeout", "30s"))
			rust.waitFor(t, "the CLI's first nonce", isNonce)
			var mu sync.Mutex
			var leases []*Lease
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					l, err := Acquire(ctx, st.url, o)
					if err != nil {
						t.Error(err)
						return
					}
					releaseAtEnd(t, l)
					mu.Lock()
					leases = append(leases, l)
					mu.Unlock()
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			ids := map[int]string{}
			seen := map[string]bool{}
			for i, l := range leases {
				g, err := l.Generator(ctx, nonce.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if g.Layout() != nonce.Wide || l.Layout() != nonce.Wide {
					t.Fatalf("layout %v, lease %v", g.Layout(), l.Layout())
				}
				ids[l.MachineID()] = fmt.Sprint("go ", i)
				for range 500 {
					n := counterThroughLapses(t, l, g)
					seen[hex.EncodeToString(n.Bytes())] = true
				}
			}
			if len(ids) != 6 {
				t.Fatalf("Go members share ids: %v", ids)
			}
			// The CLI's values, taken apart in the wide layout: its one id is
			// none of the Go members'.
			_ = rust.cmd.Wait()
			var rustID = -1
			for _, h := range rust.nonces() {
				b, _ := hex.DecodeString(h)
				p, err := nonce.Wide.Decompose(b, time.Time{})
				if err != nil {
					t.Fatal(err)
				}
				if rustID >= 0 && p.MachineID != rustID {
					t.Fatalf("the CLI's values carry ids %d and %d", rustID, p.MachineID)
				}
				rustID = p.MachineID
				if seen[h] {
					t.Fatalf("%s repeated", h)
				}
				seen[h] = true
			}
			if rustID < 0 {
				t.Fatal("no values from the CLI")
			} else if who, ok := ids[rustID]; ok {
				t.Fatalf("id %d held by the CLI and %s", rustID, who)
			}
			// Standard members of the wide namespace: refused in both languages.
			std := o
			std.Layout = nonce.Standard
			if _, err := Acquire(ctx, st.url, std); err == nil || !strings.Contains(err.Error(), "holds members of the wide layout; this member asks for the standard layout") {
				t.Fatalf("a standard Go member: %v", err)
			}
			out, err := exec.Command(cli(t), "gen", "counter", "--bits", "96", "-n", "1", "--lease", st.url,
				"--ttl", fleetTTL.String(), "--namespace", "widefleet").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "holds members of the wide layout; this member asks for the standard layout") {
				t.Fatalf("a standard CLI member: %v: %s", err, out)
			}
		})
	}
}

// counterThroughLapses draws a counter-96 nonce from g, which l holds. On a
// loaded machine a 2 s lease may lapse (a renewal not answered within the
// hold): the generator then refuses, as it must, until a renewal succeeds.
// That refusal is waited out (up to 20 s, and logged); any other error, or
// a lease lost, fails the test.
func counterThroughLapses(t *testing.T, l *Lease, g *nonce.Generator) nonce.Nonce {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := g.Counter(96)
		if err == nil {
			return n
		}
		state, _ := l.State()
		if !errors.Is(err, nonce.ErrDisabled) || state != Lapsed || time.Now().After(deadline) {
			t.Fatalf("machine id %d (lease %v, last renewal error %v): %v", l.MachineID(), state, l.LastError(), err)
		}
		t.Logf("machine id %d lapsed (a renewal late on a busy machine): waiting for the next", l.MachineID())
		for s, _ := l.State(); s == Lapsed && time.Now().Before(deadline); s, _ = l.State() {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
