package sanitizer

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A key's figures: seals checked, a reuse caught, by kind; shared by every
// AEAD of the key; the memory grows with the window.
func TestStatsCountSealsAndRefusals(t *testing.T) {
	key := freshKey(t)
	var caught int
	cfg := Config{Mode: Random, OnViolation: func(error) { caught++ }}
	a, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	small := a.Stats().MemoryBytes
	nonce := make([]byte, 12)
	for i := range 1000 {
		binary.BigEndian.PutUint64(nonce[4:], uint64(i)*0x9e3779b97f4a7c15)
		a.Seal(nil, nonce, []byte("m"), nil)
	}
	a.Seal(nil, nonce, []byte("another"), nil) // the last nonce again
	s := a.Stats()
	if caught != 1 || s.Refused != [6]uint64{1, 0, 0, 0, 0, 0} {
		t.Fatalf("caught %d, refused %v", caught, s.Refused)
	}
	if s.Seals < 1000 || s.Seals > 1000+256*uint64(runtime.GOMAXPROCS(0)*4) {
		t.Fatalf("seals %d", s.Seals)
	}
	if s.MemoryBytes <= small {
		t.Fatalf("memory %d -> %d", small, s.MemoryBytes)
	}
	b, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, cfg)
	if b.Stats().Refused != s.Refused {
		t.Fatal("another AEAD of the key reads other figures")
	}
}

// Counter mode counts the highest counter sealed.
func TestStatsCounterMode(t *testing.T) {
	key := freshKey(t)
	cfg := Config{Mode: Counter, OnViolation: func(error) {}}
	a, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, cfg)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, 12)
	for i := range 500 {
		binary.BigEndian.PutUint64(nonce[4:], uint64(i))
		a.Seal(nil, nonce, []byte("m"), nil)
	}
	if s := a.Stats(); s.Seals != 500 {
		t.Fatalf("seals %d", s.Seals)
	}
}

// The process's totals hold what a collected key counted.
func TestProcessStatsKeepCollectedKeys(t *testing.T) {
	before := ProcessStats()
	func() {
		key := freshKey(t)
		a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: Random, OnViolation: func(error) {}})
		nonce := make([]byte, 12)
		a.Seal(nil, nonce, nil, nil)
		a.Seal(nil, nonce, []byte("x"), nil)
	}()
	after := ProcessStats()
	if after.Refused[0] <= before.Refused[0] || after.Seals <= before.Seals || after.Keys < 1 {
		t.Fatalf("before %+v after %+v", before, after)
	}
	// Past the retention the state may be collected: the totals stay.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		if now := ProcessStats(); now.Refused[0] < after.Refused[0] || now.Seals < after.Seals {
			t.Fatalf("the totals went down: %+v then %+v", after, now)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The kinds are metrics.json's violation label values.
func TestViolationKindsAreTheFleets(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		LabelValues map[string][]string `json:"label_values"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	got := v.LabelValues["violation"]
	if len(got) != 6 {
		t.Fatalf("violation values %v", got)
	}
	for i := range got {
		if got[i] != ViolationKinds[i] {
			t.Fatalf("%v here, %v in metrics.json", ViolationKinds, got)
		}
	}
}
