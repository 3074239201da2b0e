package lease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// testdata/vectors/pod-index.json, which the Rust lease crate's tests read too.
func TestPodIndexVectors(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors", "pod-index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Label   string
		Sources []struct {
			Source string
			OK     bool
		}
		LabelsFiles []struct {
			Text    string
			Layout  string
			Index   *int
			Refused string
		} `json:"labels_files"`
		EnvValues []struct {
			Value   string
			Layout  string
			Index   *int
			Refused bool
		} `json:"env_values"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Label != PodIndexLabel {
		t.Fatalf("label %q", v.Label)
	}
	// A source's syntax, apart from what it reads: env and file sources whose
	// variable or file exists.
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels")
	if err := os.WriteFile(labels, []byte(`apps.kubernetes.io/pod-index="1"`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("POD_INDEX", "1")
	for _, c := range v.Sources {
		source := c.Source
		if source == "file:/etc/podinfo/labels" {
			source = "file:" + labels
		}
		_, err := PodIndex(source)
		syntaxOK := err == nil || !strings.Contains(err.Error(), "use env:VAR") && !strings.Contains(err.Error(), "needs a")
		if source == "hostname" {
			syntaxOK = true // whatever this host is called
		}
		if syntaxOK != c.OK {
			t.Errorf("%q: %v", c.Source, err)
		}
	}
	for _, c := range v.LabelsFiles {
		if err := os.WriteFile(labels, []byte(c.Text), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := PodIndexIn("file:"+labels, layoutNamed(t, c.Layout))
		switch {
		case c.Index != nil && (err != nil || got != *c.Index):
			t.Errorf("%q: %d, %v", c.Text, got, err)
		case c.Index == nil && (err == nil || !strings.Contains(err.Error(), c.Refused)):
			t.Errorf("%q: %d, %v (want %q)", c.Text, got, err, c.Refused)
		}
	}
	for i, c := range v.EnvValues {
		name := fmt.Sprintf("NF_POD_VECTOR_%d", i)
		t.Setenv(name, c.Value)
		got, err := PodIndexIn("env:"+name, layoutNamed(t, c.Layout))
		if c.Refused != (err != nil) || (!c.Refused && got != *c.Index) {
			t.Errorf("%q: %d, %v", c.Value, got, err)
		}
	}
	if _, err := PodIndex("file:" + filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("missing file: %v", err)
	}
}

// layoutNamed is a vector's layout ("": standard).
func layoutNamed(t *testing.T, name string) nonce.Layout {
	t.Helper()
	if name == "" {
		return nonce.Standard
	}
	l, err := nonce.ParseLayout(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A StatefulSet: two pods with the same index on one real Redis. The second
// waits — logged once — while the first holds the id, and gets it only when
// the first has released it: never both issuing, and no value repeated.
func TestTwoPodsWithOneIndexTakeTurns(t *testing.T) {
	store := startStore(t, "redis")
	t.Setenv("NF_TEST_POD_NAME", "nonces-3")
	id, err := PodIndex("env:NF_TEST_POD_NAME")
	if err != nil || id != 3 {
		t.Fatal(id, err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	o := Options{TTL: time.Second, Namespace: "pods", Logger: slog.New(slog.NewTextHandler(&lockedWriter{&logMu, &logs}, nil))}
	ctx := context.Background()
	a, err := AcquireExact(ctx, store.url, id, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	ga, err := a.Generator(ctx, nonce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[nonce.Nonce]bool{}
	draw := func(g *nonce.Generator, n int) {
		for range n {
			v, err := g.Counter(96)
			if err != nil {
				t.Fatal(err)
			}
			if seen[v] {
				t.Fatalf("repeated %v", v)
			}
			seen[v] = true
		}
	}
	draw(ga, 1000)
	type result struct {
		l   *Lease
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := AcquireExact(ctx, store.url, id, o, 0)
		got <- result{l, err}
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		logMu.Lock()
		said := strings.Count(logs.String(), "held by another member")
		logMu.Unlock()
		if said == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second pod did not say it waits")
		}
	}
	select {
	case r := <-got:
		t.Fatalf("the second pod got the id while the first held it: %v", r.err)
	case <-time.After(300 * time.Millisecond):
	}
	draw(ga, 1000)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ga.Counter(96); !errors.Is(err, nonce.ErrDisabled) {
		t.Fatalf("the first pod issues after its release: %v", err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.l.Release(ctx)
	if r.l.MachineID() != 3 {
		t.Fatalf("id %d", r.l.MachineID())
	}
	gb, err := r.l.Generator(ctx, nonce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	draw(gb, 1000)
	logMu.Lock()
	said := strings.Count(logs.String(), "held by another member")
	logMu.Unlock()
	if said != 1 {
		t.Fatalf("said %d times", said)
	}
	// A bounded wait gives up with ErrAllTaken while the id is held.
	if _, err := AcquireExact(ctx, store.url, id, o, 200*time.Millisecond); !errors.Is(err, ErrAllTaken) {
		t.Fatalf("bounded wait: %v", err)
	}
	if _, err := AcquireExact(ctx, store.url, 512, o, 0); err == nil || !strings.Contains(err.Error(), "0..511") {
		t.Fatalf("id 512: %v", err)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A wide StatefulSet (more than 512 pods): pod 40000 leases exactly id 40000
// of a wide namespace; a standard member is refused that id by name.
func TestWidePodIndex(t *testing.T) {
	store := startStore(t, "redis")
	t.Setenv("NF_TEST_WIDE_POD", "nonces-40000")
	if _, err := PodIndex("env:NF_TEST_WIDE_POD"); err == nil || !strings.Contains(err.Error(), "0..511") {
		t.Fatalf("a standard read of pod 40000: %v", err)
	}
	id, err := PodIndexIn("env:NF_TEST_WIDE_POD", nonce.Wide)
	if err != nil || id != 40000 {
		t.Fatal(id, err)
	}
	ctx := context.Background()
	if _, err := AcquireExact(ctx, store.url, id, Options{TTL: time.Second, Namespace: "widepods"}, 0); err == nil || !strings.Contains(err.Error(), "0..511 (the standard layout)") {
		t.Fatalf("a standard AcquireExact of 40000: %v", err)
	}
	l, err := AcquireExact(ctx, store.url, id, Options{TTL: time.Second, Namespace: "widepods", Layout: nonce.Wide}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	g, err := l.Generator(ctx, nonce.Options{})
	if err != nil || l.MachineID() != 40000 {
		t.Fatal(l.MachineID(), err)
	}
	n, err := g.Counter(96)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := nonce.Wide.Decompose(n.Bytes(), nonce.DefaultEpoch); err != nil || p.MachineID != 40000 {
		t.Fatal(p, err)
	}
}
