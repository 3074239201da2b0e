package lease

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata/vectors/lease-options.json: the defaults, the values derived from
// the TTL and every refusal, as the Rust crate settles them. The Go port
// restates the rules; this file ties the two.
type optionVectors struct {
	Defaults struct {
		TTL      int64  `json:"ttl_ms"`
		Margin   int64  `json:"margin_ms"`
		Renew    int64  `json:"renew_every_ms"`
		Request  int64  `json:"request_timeout_ms"`
		Connect  int64  `json:"connect_timeout_ms"`
		MaxWait  int64  `json:"max_clock_wait_ms"`
		IDs      [2]int `json:"ids"`
		NS       string `json:"namespace"`
		PGSchema string `json:"pg_schema"`
	}
	Derived  []map[string]int64
	Refusals []struct {
		Option string
		GoName string `json:"go_name"`
		Rule   string
		Input  map[string]any
	}
}

// optionsOf sets the vector's inputs (ms durations and texts) on Options.
func optionsOf(t *testing.T, in map[string]any) Options {
	t.Helper()
	var o Options
	for k, v := range in {
		switch k {
		case "ttl_ms":
			o.TTL = time.Duration(v.(float64)) * time.Millisecond
		case "margin_ms":
			o.Margin = time.Duration(v.(float64)) * time.Millisecond
		case "renew_every_ms":
			o.RenewEvery = time.Duration(v.(float64)) * time.Millisecond
		case "request_timeout_ms":
			o.RequestTimeout = time.Duration(v.(float64)) * time.Millisecond
		case "ids":
			o.IDs = v.(string)
		case "namespace":
			o.Namespace = v.(string)
		case "pg_schema":
			o.PGSchema = v.(string)
		case "holder":
			o.Holder = v.(string)
		default:
			t.Fatalf("lease-options.json: an input this test does not know: %s", k)
		}
	}
	return o
}

func TestOptionVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "lease-options.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v optionVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	s, err := settle(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	got := [6]int64{ms(s.ttl), ms(s.margin), ms(s.renew), ms(s.request), ms(s.connect), ms(s.maxWait)}
	want := [6]int64{v.Defaults.TTL, v.Defaults.Margin, v.Defaults.Renew, v.Defaults.Request, v.Defaults.Connect, v.Defaults.MaxWait}
	if got != want || [2]int{s.first, s.last} != v.Defaults.IDs || s.ns != v.Defaults.NS || s.schema != v.Defaults.PGSchema {
		t.Fatalf("defaults: got %v %d-%d %q %q, want %v %v %q %q", got, s.first, s.last, s.ns, s.schema, want, v.Defaults.IDs, v.Defaults.NS, v.Defaults.PGSchema)
	}
	for _, d := range v.Derived {
		s, err := settle(Options{TTL: time.Duration(d["ttl_ms"]) * time.Millisecond})
		if err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		if ms(s.margin) != d["margin_ms"] || ms(s.renew) != d["renew_every_ms"] || ms(s.request) != d["request_timeout_ms"] || ms(s.maxWait) != d["max_clock_wait_ms"] {
			t.Errorf("%v: margin %v, renew %v, request %v, max clock wait %v", d, s.margin, s.renew, s.request, s.maxWait)
		}
	}
	if len(v.Refusals) < 15 {
		t.Fatalf("only %d refusals", len(v.Refusals))
	}
	for _, r := range v.Refusals {
		_, err := settle(optionsOf(t, r.Input))
		if err == nil || !strings.HasPrefix(err.Error(), "lease: "+r.GoName+" = ") || !strings.HasSuffix(err.Error(), ": "+r.Rule) {
			t.Errorf("%v: want %s refused (%s), got %v", r.Input, r.GoName, r.Rule, err)
		}
	}
}
