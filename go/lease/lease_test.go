package lease

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

func TestIDRanges(t *testing.T) {
	for in, want := range map[string][2]int{"0-511": {0, 511}, "7": {7, 7}, " 3 - 9 ": {3, 9}, "511": {511, 511}} {
		if a, b, ok := parseIDs(in, nonce.Standard); !ok || a != want[0] || b != want[1] {
			t.Errorf("parseIDs(%q) = %d, %d, %v", in, a, b, ok)
		}
	}
}

func TestBadOptionsAndURLs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		url  string
		o    Options
		code string
		want string
	}{
		{"redis://127.0.0.1:1", Options{TTL: 500 * time.Millisecond}, "bad-option", "TTL"},
		{"redis://127.0.0.1:1", Options{TTL: 10 * time.Second, Margin: 6 * time.Second}, "bad-option", "Margin"},
		{"redis://127.0.0.1:1", Options{RenewEvery: 9 * time.Second}, "bad-option", "RenewEvery"},
		{"redis://127.0.0.1:1", Options{IDs: "9-2"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "0-512"}, "bad-option", "IDs"},
		// What the CLI refuses (nonceforge --ids), refused here too.
		{"redis://127.0.0.1:1", Options{IDs: "0x10-0x1f"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "1_0"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "0-5 junk"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "1-2-3"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "+5"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "-3"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: " "}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{IDs: "99999999999999999999"}, "bad-option", "IDs"},
		{"redis://127.0.0.1:1", Options{MaxClockWait: -time.Second}, "bad-option", "MaxClockWait"},
		{"redis://127.0.0.1:1", Options{Namespace: "Bad-NS"}, "bad-option", "Namespace"},
		{"redis://127.0.0.1:1", Options{Holder: "a\nb"}, "bad-option", "Holder"},
		// The Rust crate's rule (char::is_control): C1 controls too, as NEL.
		{"redis://127.0.0.1:1", Options{Holder: "a\u0085b"}, "bad-option", "Holder"},
		{"redis://127.0.0.1:1", Options{Holder: "a\u009fb"}, "bad-option", "Holder"},
		{"mysql://x", Options{}, "bad-url", "unknown scheme"},
		{"127.0.0.1:6379", Options{}, "bad-url", "expected postgres://"},
		{"redis:///0", Options{}, "bad-url", "no host"},
		{"etcd://", Options{}, "bad-url", "no endpoint"},
		{"etcd://host", Options{}, "bad-url", "host:port"},
		{"etcd://host:99999", Options{}, "bad-url", "port"},
		{"redis+sentinel://h:26379", Options{}, "bad-url", "no service name"},
		{"redis+sentinel://h:26379/", Options{}, "bad-url", "no service name"},
		{"redis+sentinel://h/mymaster", Options{}, "bad-url", "port"},
		{"redis+sentinel://h:0/mymaster", Options{}, "bad-url", "port"},
		{"redis+sentinel://h:26379/mymaster/x", Options{}, "bad-url", "not a number"},
		{"redis+cluster://", Options{}, "bad-url", "no node"},
		{"redis+cluster://h", Options{}, "bad-url", "host:port"},
		{"redis+cluster://h:7000,h", Options{}, "bad-url", "host:port"},
		{"redis+cluster://h:7000/0", Options{}, "bad-url", "no database"},
		{"redis+cluster://h:7000?x=1", Options{}, "bad-url", "no database"},
		{"redis://127.0.0.1:1", Options{FastStart: 7}, "bad-option", "FastStart"},
		{"redis://127.0.0.1:1", Options{ConnectTimeout: 300 * time.Millisecond}, "unreachable", "127.0.0.1:1"},
		{"postgres://u:secret@127.0.0.1:1/db", Options{ConnectTimeout: 300 * time.Millisecond}, "unreachable", "***"},
	} {
		_, err := Acquire(ctx, tc.url, tc.o)
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Acquire(%q, %+v) = %v; want a %s error naming %q", tc.url, tc.o, err, tc.code, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the password shows: %v", err)
		}
	}
}

// A store that goes away: past the local deadline the generator issues
// nothing and the lease reads lapsed; nothing it issued is later than that.
func TestOutageLapses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis")
	}
	st := startStore(t, "redis")
	l, g := leasedGenerator(t, st.url)
	if s, left := l.State(); s != Held || left <= 0 || left > 2*time.Second {
		t.Fatalf("state %v, %v", s, left)
	}
	if _, err := l.Generator(context.Background(), nonce.Options{}); err != nil {
		t.Fatalf("a second generator: %v", err)
	}
	other, _ := nonce.New(nonce.Options{MachineID: nonce.Machine((l.MachineID() + 1) % 512)})
	if err := l.Attach(other); err == nil {
		t.Fatal("attached a generator of another machine id")
	}
	// A generator of the other layout on the leased id: refused (the
	// namespace holds standard members; a wide one's values can meet theirs).
	if _, err := l.Generator(context.Background(), nonce.Options{Layout: nonce.Wide}); err == nil || !strings.Contains(err.Error(), "layout is not the lease's") {
		t.Fatalf("a wide generator from the lease: %v", err)
	}
	wide, _ := nonce.New(nonce.Options{MachineID: nonce.Machine(l.MachineID()), Layout: nonce.Wide})
	if err := l.Attach(wide); err == nil || !strings.Contains(err.Error(), "layout is not the lease's") {
		t.Fatalf("attached a wide generator: %v", err)
	}
	port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
	if out, err := exec.Command(need(t, "redis-cli"), "-p", port, "shutdown", "nosave").CombinedOutput(); err != nil && !strings.Contains(string(out), "") {
		t.Fatal(err)
	}
	shutAt := time.Now()
	last := issueUntilDisabled(t, g, 5*time.Second)
	if last.Sub(shutAt) > 2*time.Second {
		t.Fatalf("issued %v after the store went away, TTL 2 s", last.Sub(shutAt))
	}
	if s, _ := l.State(); s != Lapsed {
		t.Fatalf("state %v, want lapsed", s)
	}
	if l.LastError() == nil {
		t.Fatal("no renewal error recorded")
	}
	if err := l.Release(context.Background()); err == nil {
		t.Fatal("released into a store that is gone")
	}
}

// The Redis scripts are the protocol: Go sends the Rust crate's files exactly.
func TestRedisScriptsAreTheRustCrates(t *testing.T) {
	for name, lua := range map[string]string{"acquire": acquireLua, "renew": renewLua, "release": releaseLua} {
		want, err := os.ReadFile(filepath.Join("..", "..", "crates", "nonceforge-lease", "src", "store", "redis", name+".lua"))
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != lua {
			t.Errorf("the %s script differs from the Rust crate's redis/%s.lua", name, name)
		}
	}
}

// The PostgreSQL statements are the Rust crate's pg/statements.sql, byte for
// byte, and every one Go sends is there.
func TestPostgresStatementsAreTheRustCrates(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "crates", "nonceforge-lease", "src", "store", "pg", "statements.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != pgStatementsSQL {
		t.Fatal("pgStatementsSQL differs from the Rust crate's store/pg/statements.sql")
	}
	for _, name := range []string{"session", "verify", "v1_tables", "schema_owner", "create_schema", "create_lock",
		"create_tables", "check_owned", "shape", "add_layout", "create_indexes", "put_back_meta", "lock_meta",
		"take", "take_new", "renew", "release"} {
		if pgStatements[name] == "" {
			t.Errorf("no statement %q", name)
		}
	}
	p := &pgStore{ns: "n", leases: `"s"."n_leases"`, meta: `"s"."n_meta"`}
	if q := p.stmt("create_tables"); strings.Contains(q, "{") || !strings.Contains(q, "<=) 65535)") {
		t.Errorf("create_tables filled in: %s", q)
	}
	if q := p.stmt("create_indexes"); strings.Contains(q, "{") || !strings.Contains(q, `"n_leases_expiry" ON "s"."n_leases"`) {
		t.Errorf("create_indexes filled in: %s", q)
	}
}

// The key names of testdata/vectors/lease-redis-keys.json, the Rust crate's.
func TestRedisKeyVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "lease-redis-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Namespace   string
			Cluster     bool
			First, Last int
			RangeKeys   []string `json:"range_keys"`
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 4 {
		t.Fatalf("%d cases", len(file.Cases))
	}
	for _, c := range file.Cases {
		k := newRedisKeys(c.Namespace, c.Cluster)
		ids := []int{}
		for id := c.First; id <= c.Last; id++ {
			ids = append(ids, id)
		}
		if got := k.span(ids); !slices.Equal(got, c.RangeKeys) {
			t.Errorf("%s cluster=%v: %v, want %v", c.Namespace, c.Cluster, got, c.RangeKeys)
		}
		if got := k.one(c.First); !slices.Equal(got, c.RangeKeys[:3]) {
			t.Errorf("%s cluster=%v: %v, want %v", c.Namespace, c.Cluster, got, c.RangeKeys[:3])
		}
	}
}

// Every URL form of testdata/vectors/lease-urls.json is shown as the Rust
// crate shows it, and its credential is recognised.
func TestRedactSharedVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "lease-urls.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			URL, Shown string
			Secret     bool
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 20 {
		t.Fatalf("%d cases", len(file.Cases))
	}
	for _, c := range file.Cases {
		if got := Redact(c.URL); got != c.Shown {
			t.Errorf("Redact(%q) = %q, want %q", c.URL, got, c.Shown)
		}
		if HasSecret(c.URL) != c.Secret {
			t.Errorf("HasSecret(%q) = %v", c.URL, !c.Secret)
		}
	}
}

// The id ranges of testdata/vectors/lease-syntax.json: the Rust crate's parse_ids
// reads the same file.
func TestIDsSharedVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "lease-syntax.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		IDs []struct {
			Text        string
			Layout      string
			First, Last *int
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	for _, c := range file.IDs {
		layout := nonce.Standard
		if c.Layout != "" {
			var err error
			if layout, err = nonce.ParseLayout(c.Layout); err != nil {
				t.Fatal(err)
			}
		}
		first, last, ok := parseIDs(c.Text, layout)
		if ok != (c.First != nil) || ok && (first != *c.First || last != *c.Last) {
			t.Errorf("parseIDs(%q, %v) = %d, %d, %v", c.Text, layout, first, last, ok)
		}
	}
}

// testdata/vectors/lease-search.json: the Rust crate's store::candidates
// reads the same numbers. A small range is tried whole; a wide one in
// samples of distinct ids, then whole in chunks, each id once.
func TestCandidates(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "lease-search.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SearchWhole  int `json:"search_whole"`
		Sample       int `json:"sample"`
		SampleRounds int `json:"sample_rounds"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.SearchWhole != searchWhole || v.Sample != sample || v.SampleRounds != sampleRounds {
		t.Fatalf("lease-search.json %+v, Go %d %d %d", v, searchWhole, sample, sampleRounds)
	}
	if got := candidates(3, 9, 0); !slices.Equal(got, []int{3, 4, 5, 6, 7, 8, 9}) || candidates(3, 9, 1) != nil {
		t.Fatalf("small range: %v", got)
	}
	for round := range sampleRounds {
		s := candidates(1000, 65535, round)
		seen := map[int]bool{}
		for _, id := range s {
			if id < 1000 || id > 65535 || seen[id] {
				t.Fatalf("sample %v", s)
			}
			seen[id] = true
		}
		if len(s) != sample {
			t.Fatalf("sample of %d", len(s))
		}
	}
	next := 1000
	for round := sampleRounds; ; round++ {
		c := candidates(1000, 65535, round)
		if c == nil {
			break
		}
		for _, id := range c {
			if id != next {
				t.Fatalf("chunk %d: %d, want %d", round, id, next)
			}
			next++
		}
	}
	if next != 65536 {
		t.Fatalf("chunks ended at %d", next)
	}
}

// Renewals that hang (the store stopped with SIGSTOP, not gone) lapse the
// lease by its deadline — single counter nonces read no clock, so the lease's
// deadline timer must stop them — then resume when the store answers again,
// and lapse again by the next deadline (the timer is armed anew).
func TestLapseResumeLapse(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Redis")
	}
	st := startStore(t, "redis")
	port := strings.TrimPrefix(st.url, "redis://127.0.0.1:")
	info, err := exec.Command(need(t, "redis-cli"), "-p", port, "info", "server").Output()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, line := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			pid, _ = strconv.Atoi(v)
		}
	}
	redis, err := os.FindProcess(pid)
	if pid == 0 || err != nil {
		t.Fatalf("redis pid: %v", err)
	}
	t.Cleanup(func() { _ = redis.Signal(syscall.SIGCONT) })
	l, g := leasedGenerator(t, st.url)
	lapse := func(round int) {
		t.Helper()
		_, left := l.State()
		if err := redis.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		stoppedAt := time.Now()
		last := issueUntilDisabled(t, g, 5*time.Second)
		// The deadline was `left` away when the store stopped (+ a timer's lateness).
		if late := last.Sub(stoppedAt) - left; late > 50*time.Millisecond {
			t.Fatalf("round %d: issued %v past the deadline", round, late)
		}
		if s, _ := l.State(); s != Lapsed {
			t.Fatalf("round %d: state %v, want lapsed", round, s)
		}
	}
	lapse(1)
	if err := redis.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); ; {
		if s, _ := l.State(); s == Held {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("never resumed: %v", l.LastError())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := g.Counter(96); err != nil {
		t.Fatalf("after resuming: %v", err)
	}
	lapse(2)
	_ = redis.Signal(syscall.SIGCONT)
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("release after resuming: %v", err)
	}
}

// issueUntilDisabled makes a counter nonce every millisecond until the
// generator refuses (ErrDisabled) or limit passes; it returns when the last
// one was made.
func issueUntilDisabled(t *testing.T, g *nonce.Generator, limit time.Duration) time.Time {
	t.Helper()
	var last time.Time
	for start := time.Now(); time.Since(start) < limit; {
		if _, err := g.Counter(96); err != nil {
			if !errors.Is(err, nonce.ErrDisabled) {
				t.Fatal(err)
			}
			break
		}
		last = time.Now()
		time.Sleep(time.Millisecond)
	}
	return last
}

// leasedGenerator leases an id with a TTL of 1 s and builds a generator on it.
func leasedGenerator(t *testing.T, url string) (*Lease, *nonce.Generator) {
	t.Helper()
	// TTL 2 s: at 1 s a renewal late by the rest of a loaded machine's work
	// (make test's two lanes) lapsed the lease before the test looked.
	l, err := Acquire(context.Background(), url, Options{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g, err := l.Generator(context.Background(), nonce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l, g
}

func TestFastStartAndReasonNames(t *testing.T) {
	for _, f := range []FastStart{FastOff, FastVerify, FastDeclared} {
		if got, err := ParseFastStart(f.String()); err != nil || got != f {
			t.Errorf("ParseFastStart(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := ParseFastStart("on"); err == nil || !strings.Contains(err.Error(), "off, verify or declared") {
		t.Errorf("ParseFastStart(on) = %v", err)
	}
	if (Options{}).FastStart != FastOff {
		t.Error("the zero Options do not start slow")
	}
	// The names every face gives (the Rust crate's LostReason::as_str).
	for r, want := range map[LostReason]string{LostTaken: "taken", LostEvicted: "evicted", LostStoreData: "store", LostStoreBack: "rollback"} {
		if r.Name() != want {
			t.Errorf("%v.Name() = %q, want %q", r, r.Name(), want)
		}
	}
}
