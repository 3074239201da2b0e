package nonce

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// manualClock moves only when told (Sleep advances it); its wall clock can be
// set apart from its monotonic clock.
type manualClock struct {
	mu    sync.Mutex
	wall  int64 // Unix ms at mono 0
	mono  time.Duration
	slept time.Duration
}

func newManual(unixMs int64) *manualClock { return &manualClock{wall: unixMs} }

func (c *manualClock) WallUnixMilli() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall + int64(c.mono/time.Millisecond)
}

func (c *manualClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

func (c *manualClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += d
	c.slept += d
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mono += d
}

func (c *manualClock) setWall(unixMs int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall = unixMs - int64(c.mono/time.Millisecond)
}

func (c *manualClock) sleptFor() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// requireDistinct fails the test unless the goroutines' outputs hold want
// values, none of them twice.
func requireDistinct(t *testing.T, what string, out [][]string, want int) {
	t.Helper()
	seen := make(map[string]bool, want)
	for _, o := range out {
		for _, v := range o {
			if seen[v] {
				t.Fatalf("%s: %q twice", what, v)
			}
			seen[v] = true
		}
	}
	if len(seen) != want {
		t.Fatalf("%s: %d values, want %d", what, len(seen), want)
	}
}

// Eight goroutines share one generator: every nonce of every kind and size is
// distinct, and each goroutine's sortable nonces strictly increase.
func TestConcurrentNoncesAreDistinct(t *testing.T) {
	g, err := New(Options{MachineID: Machine(3), Key: bytes.Repeat([]byte{1}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 20_000
	for _, kind := range []Kind{Counter, Sortable, Encrypted} {
		for _, bits := range []int{64, 96, 128} {
			out := make([][]string, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					prev := ""
					for range each {
						n, err := g.Next(kind, bits)
						if err != nil {
							t.Error(err)
							return
						}
						s := n.String()
						if kind == Sortable && s <= prev {
							t.Errorf("sortable %d: %s after %s", bits, s, prev)
							return
						}
						prev = s
						out[w] = append(out[w], s)
					}
				})
			}
			wg.Wait()
			requireDistinct(t, fmt.Sprintf("%v %d", kind, bits), out, workers*each)
		}
	}
}

// The wall clock is read once: stepping it back three years repeats nothing,
// and a generator built after it (a restart) starts in a later millisecond
// than anything the old one issued.
// (Counter and sortable nonces share the layout, so each is kept apart by kind.)
func TestClockStepsAndRestarts(t *testing.T) {
	c := newManual(1_767_225_600_000)
	g, err := New(Options{MachineID: Machine(9), Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var last Parts
	take := func(g *Generator) {
		for range 500 {
			for _, bits := range []int{64, 96, 128} {
				n, err := g.Sortable(bits)
				if err != nil {
					t.Fatal(err)
				}
				m, err := g.Counter(bits)
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range []string{"s" + n.String(), "c" + m.String()} {
					if seen[s] {
						t.Fatalf("%s twice", s)
					}
					seen[s] = true
				}
				last, _ = g.Decompose(n.AppendTo(nil))
			}
			c.advance(100 * time.Microsecond)
		}
	}
	take(g)
	c.setWall(1_767_225_600_000 - 3*365*24*3600*1000)
	take(g)
	if last.UnixMilli < 1_767_225_600_000 {
		t.Fatalf("the stepped wall clock leaked into a nonce: %d", last.UnixMilli)
	}
	// A restart with the wall clock right again: a new generator on the same id.
	c.setWall(1_767_225_600_000 + int64(c.Monotonic()/time.Millisecond))
	h, err := New(Options{MachineID: Machine(9), Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	if h.StartedUnixMilli() <= last.UnixMilli {
		t.Fatalf("restart at %d, last nonce at %d", h.StartedUnixMilli(), last.UnixMilli)
	}
	take(h)
}

// 64-bit counter nonces: 8192 a millisecond; idle milliseconds are banked; a
// burst beyond the bank sleeps (the manual clock records it), never spins.
// checkRate64: 8192 64-bit nonces in the first millisecond without sleeping,
// and the 8193rd sleeps into the next (at most 1 ms).
func checkRate64(t *testing.T, c *manualClock, next func(int) (Nonce, error)) {
	t.Helper()
	slept0 := c.sleptFor()
	for range 8192 {
		if _, err := next(64); err != nil {
			t.Fatal(err)
		}
	}
	if c.sleptFor() != slept0 {
		t.Fatalf("slept within the first millisecond's 8192")
	}
	if _, err := next(64); err != nil {
		t.Fatal(err)
	}
	if d := c.sleptFor() - slept0; d <= 0 || d > time.Millisecond {
		t.Fatalf("the 8193rd nonce slept %v, want up to 1 ms", d)
	}
}

func TestCounter64RateAndBank(t *testing.T) {
	c := newManual(1_767_225_600_000)
	g, err := New(Options{MachineID: Machine(1), Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	checkRate64(t, c, g.Counter)
	// Ten idle milliseconds: ten more thousand-ish without sleeping.
	c.advance(10 * time.Millisecond)
	s := c.sleptFor()
	buf := make([]byte, 8*8192*9)
	if err := g.Fill(Counter, 64, buf); err != nil {
		t.Fatal(err)
	}
	if c.sleptFor() != s {
		t.Fatalf("a burst within the bank slept %v", c.sleptFor()-s)
	}
	p, _ := g.Decompose(buf[len(buf)-8:])
	if now := c.WallUnixMilli(); p.UnixMilli > now {
		t.Fatalf("a nonce at %d is ahead of the clock %d", p.UnixMilli, now)
	}
}

func TestDeadlines(t *testing.T) {
	c := newManual(1_767_225_600_000)
	g, err := New(Options{MachineID: Machine(2), Clock: c, Key: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	g.SetValidUntil(g.StartedUnixMilli() + 5)
	if _, err := g.Counter(128); err != nil {
		t.Fatal(err)
	}
	c.advance(6 * time.Millisecond)
	// No clock read yet: a 128-bit counter nonce still carries the start time,
	// below the deadline (the core's rule: the deadline costs nothing per nonce).
	if n, err := g.Counter(128); err != nil {
		t.Fatalf("counter before any clock read: %v", err)
	} else if p, _ := g.Decompose(n.AppendTo(nil)); p.UnixMilli > g.StartedUnixMilli()+5 {
		t.Fatalf("a nonce past the deadline: %d", p.UnixMilli)
	}
	if err := g.CheckDeadline(); !errors.Is(err, ErrDisabled) {
		t.Fatalf("CheckDeadline past the deadline: %v", err)
	}
	for _, kind := range []Kind{Counter, Sortable, Encrypted} {
		for _, bits := range []int{64, 96, 128} {
			if _, err := g.Next(kind, bits); !errors.Is(err, ErrDisabled) {
				t.Fatalf("%v %d past the deadline: %v", kind, bits, err)
			}
		}
	}
	g.Enable()
	if _, err := g.Counter(64); !errors.Is(err, ErrDisabled) {
		t.Fatalf("Enable does not lift a deadline: %v", err)
	}
	// A later deadline (a renewal after a lapse) resumes it.
	g.SetValidUntil(g.ClockUnixMilli() + 100)
	if _, err := g.Counter(64); err != nil {
		t.Fatalf("resumed: %v", err)
	}
	g.SetValidUntil(-1)
	g.Disable()
	if err := g.Fill(Counter, 64, make([]byte, 16)); !errors.Is(err, ErrDisabled) {
		t.Fatal(err)
	}
}

func TestNotBeforeFloor(t *testing.T) {
	c := newManual(1_767_225_600_000)
	g, err := New(Options{MachineID: Machine(2), Clock: c, NotBeforeUnixMilli: 1_767_225_600_300})
	if err != nil {
		t.Fatal(err)
	}
	if g.StartedUnixMilli() != 1_767_225_600_301 {
		t.Fatalf("started at %d", g.StartedUnixMilli())
	}
	_, err = New(Options{MachineID: Machine(2), Clock: c, NotBeforeUnixMilli: 1_767_225_700_000})
	if err == nil || !strings.Contains(err.Error(), "behind the floor") {
		t.Fatalf("a floor 100 s ahead: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	for _, o := range []Options{
		{MachineID: Machine(512)}, {MachineID: Machine(-1)}, {Key: key[:31]}, {Key: key, Cipher64: "des"},
		{Key: key, Cipher128: "aes128"}, {Epoch: time.UnixMilli(-5)}, {Epoch: time.UnixMilli(4_000_000_000_000)},
		{Epoch: time.UnixMilli(5).Add(time.Microsecond)}, {MaxWait: -time.Second},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		} else {
			var e *Error
			if !errors.As(err, &e) || e.Arg == "" || e.Rule == "" {
				t.Errorf("New(%+v): %v is not a typed error naming the argument", o, err)
			}
		}
	}
	g, _ := New(Options{MachineID: Machine(1)})
	if _, err := g.Counter(65); err == nil || !strings.Contains(err.Error(), "bits") {
		t.Error(err)
	}
	if _, err := g.Encrypted(64); err == nil || !strings.Contains(err.Error(), "Key") {
		t.Error(err)
	}
	buf := bytes.Repeat([]byte{0xee}, 13)
	if err := g.Fill(Counter, 64, buf); err == nil || !bytes.Equal(buf, bytes.Repeat([]byte{0xee}, 13)) {
		t.Errorf("Fill with a partial nonce: %v, wrote %x", err, buf)
	}
	if err := g.Fill(Kind(7), 64, make([]byte, 8)); err == nil {
		t.Error("Fill of Kind(7)")
	}
	if _, err := Decompose(make([]byte, 9), time.Time{}); err == nil {
		t.Error("Decompose of 9 bytes")
	}
	if _, err := g.Decrypt(make([]byte, 8)); err == nil {
		t.Error("Decrypt without a key")
	}
	for _, tc := range []struct{ v string }{{"web"}, {"web-512"}, {"web-99999999999999999999999"}} {
		if _, err := MachineIDFromTrailingNumber("POD", tc.v); err == nil {
			t.Errorf("%q accepted", tc.v)
		}
	}
	if id, err := MachineIDFromTrailingNumber("POD", "nonces-12"); err != nil || id != 12 {
		t.Errorf("nonces-12: %d %v", id, err)
	}
	hosts := []string{"db-b", "db-a"}
	if id, err := MachineIDFromHostList(hosts, "db-a"); err != nil || id != 1 {
		t.Errorf("db-a: %d %v", id, err)
	}
	for _, hs := range [][]string{{"a", ""}, {"a", "a"}, {"b"}} {
		if _, err := MachineIDFromHostList(hs, "a"); err == nil {
			t.Errorf("%q accepted", hs)
		}
	}
	t.Setenv("NF_TEST_POD", "pod-7")
	if id, err := MachineIDFromEnv("NF_TEST_POD"); err != nil || id != 7 {
		t.Errorf("env: %d %v", id, err)
	}
	if _, err := MachineIDFromEnv("NF_TEST_UNSET_VARIABLE"); err == nil {
		t.Error("unset variable accepted")
	}
}

// Batches sort and agree with the fields: a Fill of sortable nonces increases.
func TestFillSortable(t *testing.T) {
	g, _ := New(Options{MachineID: Machine(5)})
	buf := make([]byte, 16*1000)
	if err := g.Fill(Sortable, 128, buf); err != nil {
		t.Fatal(err)
	}
	s := make([]string, 1000)
	for i := range s {
		s[i] = hex.EncodeToString(buf[i*16 : i*16+16])
	}
	if !sort.StringsAreSorted(s) {
		t.Fatal("a sortable batch does not sort")
	}
	p, _ := g.Decompose(buf[:16])
	if p.MachineID != 5 {
		t.Fatalf("%+v", p)
	}
}

func TestUnixEpoch(t *testing.T) {
	// The CLI accepts --epoch 0: Go makes and reads the same nonces.
	g, err := New(Options{MachineID: Machine(3), Epoch: time.UnixMilli(0)})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Epoch().Equal(time.UnixMilli(0)) {
		t.Fatalf("epoch %v", g.Epoch())
	}
	n, _ := g.Counter(64)
	p, err := Decompose(n.Bytes(), time.UnixMilli(0))
	if err != nil || p.MachineID != 3 || p.UnixMilli < g.StartedUnixMilli() || p.UnixMilli > time.Now().UnixMilli() {
		t.Fatalf("%+v %v", p, err)
	}
	// The timestamp field holds the Unix time itself.
	if ts := int64(n.Uint64() >> 22); ts != p.UnixMilli {
		t.Fatalf("timestamp field %d, Unix ms %d", ts, p.UnixMilli)
	}
	d, _ := New(Options{MachineID: Machine(3)})
	if !d.Epoch().Equal(DefaultEpoch) || d.Epoch().UnixMilli() != DefaultEpochUnixMilli {
		t.Fatalf("default epoch %v", d.Epoch())
	}
}

func TestZeroGeneratorIssuesNothing(t *testing.T) {
	var g Generator
	if _, err := g.Counter(128); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Counter(128) of a zero Generator: %v", err)
	}
	for _, bits := range []int{64, 96} {
		if _, err := g.Counter(bits); !errors.Is(err, ErrNotBuilt) {
			t.Fatalf("Counter(%d): %v", bits, err)
		}
		if _, err := g.Sortable(bits); !errors.Is(err, ErrNotBuilt) {
			t.Fatalf("Sortable(%d): %v", bits, err)
		}
	}
	if err := g.Fill(Counter, 96, make([]byte, 24)); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Fill: %v", err)
	}
	if _, err := g.Local().Counter(128); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Local().Counter: %v", err)
	}
	if g.Enabled() {
		t.Fatal("a zero Generator says it is enabled")
	}
	g.Enable()
	if _, err := g.Counter(96); !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("after Enable: %v", err)
	}
}

func TestSentinels(t *testing.T) {
	g, _ := New(Options{MachineID: Machine(1)})
	if _, err := g.Encrypted(96); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Encrypted without a key: %v", err)
	}
	if _, err := g.Decrypt(make([]byte, 12)); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Decrypt without a key: %v", err)
	}
	g.Disable()
	if _, err := g.Counter(64); !errors.Is(err, ErrDisabled) || !strings.HasPrefix(err.Error(), "nonce: ") {
		t.Fatalf("disabled: %v", err)
	}
	// An epoch whose 42-bit range has ended.
	_, err := New(Options{MachineID: Machine(1), Clock: newManual(DefaultEpochUnixMilli + 1<<42 + 10)})
	if !errors.Is(err, ErrExhausted) {
		t.Fatalf("an ended epoch: %v", err)
	}
}

func TestNewContextStopsWaiting(t *testing.T) {
	c := newManual(1_767_225_600_000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewContext(ctx, Options{MachineID: Machine(2), Clock: c, NotBeforeUnixMilli: 1_767_225_600_500})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

func TestNonceEncodings(t *testing.T) {
	g, _ := New(Options{MachineID: Machine(9)})
	for _, bits := range []int{64, 96, 128} {
		n, _ := g.Sortable(bits)
		j, err := json.Marshal(map[string]Nonce{"n": n})
		if err != nil || string(j) != `{"n":"`+n.String()+`"}` {
			t.Fatalf("json of %d bits: %s %v", bits, j, err)
		}
		var back map[string]Nonce
		if err := json.Unmarshal(j, &back); err != nil || back["n"] != n {
			t.Fatalf("json back: %v %v", back, err)
		}
		b, _ := n.MarshalBinary()
		var nb Nonce
		if err := nb.UnmarshalBinary(b); err != nil || nb != n {
			t.Fatalf("binary: %v", err)
		}
		v, _ := n.Value()
		var ns, nt Nonce
		if err := ns.Scan(v); err != nil || ns != n {
			t.Fatalf("Scan(bytes): %v", err)
		}
		if err := nt.Scan(strings.ToUpper(n.String())); err != nil || nt != n {
			t.Fatalf("Scan(hex): %v", err)
		}
	}
	var n Nonce
	for _, bad := range []string{"", "0011", strings.Repeat("g", 16), strings.Repeat("0", 20)} {
		if err := n.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", bad)
		}
	}
	if err := n.Scan(42); err == nil {
		t.Error("Scan(42) accepted")
	}
	// A bad length is refused by name and leaves the nonce as it was.
	kept, _ := g.Counter(96)
	for _, size := range []int{0, 1, 7, 9, 13, 15, 17, 32} {
		n = kept
		err := n.UnmarshalBinary(make([]byte, size))
		var e *Error
		if !errors.As(err, &e) || e.Op != "UnmarshalBinary" || n != kept {
			t.Errorf("UnmarshalBinary(%d bytes): %v, nonce now %v", size, err, n)
		}
		if err := n.Scan(make([]byte, size)); err == nil || n != kept {
			t.Errorf("Scan(%d bytes) accepted or wrote", size)
		}
	}
	if _, err := (Nonce{}).MarshalText(); err == nil {
		t.Error("the zero Nonce marshalled")
	}
}
