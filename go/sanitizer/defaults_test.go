package sanitizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// testdata/vectors/sanitizer-defaults.json: the Rust core's defaults and
// bounds, which this port restates (the core's aead::tests::the_shared_defaults
// reads the same file).
func TestDefaultsSharedVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "sanitizer-defaults.json"))
	if err != nil {
		t.Fatal(err)
	}
	type bounds struct{ Default, Min, Max int }
	var v struct {
		Window        bounds
		CounterWindow bounds `json:"counter_window"`
		Shards        struct {
			DefaultAtMost int `json:"default_at_most"`
			Min, Max      int
		}
		MaxSealsDefault uint64 `json:"max_seals_default"`
		RetainForS      int64  `json:"retain_for_s"`
		RetainKeys      int    `json:"retain_keys"`
		Clamps          []struct {
			Option         string
			Given, Becomes int
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if DefaultMaxSeals != v.MaxSealsDefault || int64(RetainFor.Seconds()) != v.RetainForS || RetainKeys != v.RetainKeys {
		t.Fatalf("constants: %d %v %d, want %d %ds %d", uint64(DefaultMaxSeals), RetainFor, RetainKeys, v.MaxSealsDefault, v.RetainForS, v.RetainKeys)
	}
	var fp [32]byte
	// What each option becomes in the state a Config makes (0: the default).
	got := func(option string, given int) int {
		var c Config
		switch option {
		case "window":
			c.Window = given
			return newKeyState("test", fp, 12, &c).shards[0].w.capacity
		case "counter_window":
			c.CounterWindow = given
			return int(newKeyState("test", fp, 12, &c).counter.width)
		case "shards":
			c.Shards = given
			return len(newKeyState("test", fp, 12, &c).shards)
		}
		t.Fatalf("sanitizer-defaults.json: unknown option %s", option)
		return 0
	}
	if got("window", 0) != v.Window.Default || got("counter_window", 0) != v.CounterWindow.Default {
		t.Fatalf("defaults: window %d, counter window %d", got("window", 0), got("counter_window", 0))
	}
	if n := got("shards", 0); n < v.Shards.Min || n > v.Shards.DefaultAtMost {
		t.Fatalf("default shards %d", n)
	}
	for _, b := range []struct {
		option   string
		min, max int
	}{{"window", v.Window.Min, v.Window.Max}, {"counter_window", v.CounterWindow.Min, v.CounterWindow.Max}, {"shards", v.Shards.Min, v.Shards.Max}} {
		if got(b.option, 1) != b.min || got(b.option, 1<<40) != b.max {
			t.Errorf("%s: 1 → %d, 2^40 → %d; want %d and %d", b.option, got(b.option, 1), got(b.option, 1<<40), b.min, b.max)
		}
	}
	if len(v.Clamps) < 9 {
		t.Fatalf("only %d clamps", len(v.Clamps))
	}
	for _, c := range v.Clamps {
		if g := got(c.Option, c.Given); g != c.Becomes {
			t.Errorf("%s = %d became %d, want %d", c.Option, c.Given, g, c.Becomes)
		}
	}
}
