package otel

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/lease"
	"github.com/nonceforge/nonceforge/go/nonce"
	"github.com/nonceforge/nonceforge/go/sanitizer"
	"go.opentelemetry.io/otel/attribute"
	sdk "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The families here are metrics.json's, in its order, with its types and help.
func TestDefsAreTheFleets(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Metrics          []struct{ Name, Type, Help string }
		SanitizerMetrics []struct{ Name, Type, Help string } `json:"sanitizer_metrics"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	defs := append(append(append([]def{}, generatorDefs...), leaseDefs...), sanitizerDefs...)
	fleet := append(v.Metrics, v.SanitizerMetrics...)
	if len(defs) != len(fleet) {
		t.Fatalf("%d families here, %d in metrics.json", len(defs), len(fleet))
	}
	for i, m := range fleet {
		if d := defs[i]; d.name != m.Name || d.kind != m.Type || d.help != m.Help {
			t.Errorf("family %d: %+v here, %+v in metrics.json", i, d, m)
		}
	}
}

// collect reads every series: name → attributes (as "k=v,…") → value.
func collect(t *testing.T, r *sdk.ManualReader) map[string]map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	key := func(s attribute.Set) string { return s.Encoded(attribute.DefaultEncoder()) }
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			series := map[string]float64{}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic || d.Temporality != metricdata.CumulativeTemporality {
					t.Errorf("%s: not a cumulative monotonic sum", m.Name)
				}
				for _, p := range d.DataPoints {
					series[key(p.Attributes)] = float64(p.Value)
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					series[key(p.Attributes)] = p.Value
				}
			default:
				t.Errorf("%s: %T", m.Name, m.Data)
			}
			out[m.Name] = series
		}
	}
	return out
}

// A generator's figures through the SDK's manual reader: what was issued and
// refused, with the caller's attributes on every series.
func TestGeneratorFigures(t *testing.T) {
	g, err := nonce.New(nonce.Options{MachineID: nonce.Machine(7)})
	if err != nil {
		t.Fatal(err)
	}
	r := sdk.NewManualReader()
	meter := sdk.NewMeterProvider(sdk.WithReader(r)).Meter("test")
	reg, err := RegisterGenerator(meter, g, attribute.String("service", "billing"))
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := g.Counter(64); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if _, err := g.Sortable(96); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Encrypted(128); !errors.Is(err, nonce.ErrNoKey) {
		t.Fatal(err)
	}
	got := collect(t, r)
	if len(got) != len(generatorDefs)-1 { // no deadline without a lease
		t.Fatalf("%d families: %v", len(got), got)
	}
	want := map[string]map[string]float64{
		"nonceforge_nonces_issued_total": {
			"bits=64,kind=counter,service=billing":  10,
			"bits=96,kind=sortable,service=billing": 5,
		},
		"nonceforge_refusals_total":       {"reason=no_key,service=billing": 1, "reason=disabled,service=billing": 0},
		"nonceforge_generator_enabled":    {"service=billing": 1},
		"nonceforge_clock_behind_seconds": {"service=billing": 0},
	}
	for name, series := range want {
		for k, v := range series {
			if got[name][k] != v {
				t.Errorf("%s{%s} = %v, want %v", name, k, got[name][k], v)
			}
		}
	}
	if n := len(got["nonceforge_nonces_issued_total"]); n != 6 {
		t.Errorf("%d issued series", n)
	}
	if h := got["nonceforge_epoch_headroom_seconds"]["service=billing"]; h < 100*365*86400 {
		t.Errorf("epoch headroom %v", h)
	}
	g.Disable()
	if got := collect(t, r); got["nonceforge_generator_enabled"]["service=billing"] != 0 {
		t.Error("enabled after Disable")
	}
	if err := reg.Unregister(); err != nil {
		t.Fatal(err)
	}
	if _, err := RegisterGenerator(meter, nil); err == nil {
		t.Error("a nil generator registered")
	}
}

// startRedis starts a Redis on a loopback port for the test (stopped after it).
func startRedis(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (make setup installs it)")
	}
	port := 26390 + os.Getpid()%300 // below the kernel's ephemeral range
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return "redis://" + addr, cmd
		}
	}
	t.Fatal("redis did not start")
	return "", nil
}

// A lease's figures on a real Redis: held and ready (once started), its id
// and renewals; the store stopped: renewals fail (unreachable), then lapsed.
func TestLeaseFigures(t *testing.T) {
	url, redis := startRedis(t)
	ctx := context.Background()
	l, err := lease.Acquire(ctx, url, lease.Options{TTL: time.Second, Namespace: "otel_test"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Release(ctx) }()
	r := sdk.NewManualReader()
	meter := sdk.NewMeterProvider(sdk.WithReader(r)).Meter("test")
	if _, err := RegisterLease(meter, l); err != nil {
		t.Fatal(err)
	}
	poll := func(what string, ok func(map[string]map[string]float64) bool) map[string]map[string]float64 {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if got := collect(t, r); ok(got) {
				return got
			}
		}
		t.Fatalf("never %s: %v", what, collect(t, r))
		return nil
	}
	got := poll("ready with a renewal", func(m map[string]map[string]float64) bool {
		return m["nonceforge_lease_ready"][""] == 1 && m["nonceforge_lease_renewals_total"][""] >= 1
	})
	if got["nonceforge_lease_state"]["state=held"] != 1 || got["nonceforge_lease_state"]["state=lapsed"] != 0 {
		t.Errorf("state %v", got["nonceforge_lease_state"])
	}
	if got["nonceforge_lease_machine_id"][""] != float64(l.MachineID()) || got["nonceforge_lease_token"][""] != float64(l.Token()) {
		t.Errorf("id %v token %v", got["nonceforge_lease_machine_id"], got["nonceforge_lease_token"])
	}
	if got["nonceforge_lease_renewal_last_seconds"][""] <= 0 || got["nonceforge_lease_acquire_seconds"][""] <= 0 {
		t.Errorf("round trips %v %v", got["nonceforge_lease_renewal_last_seconds"], got["nonceforge_lease_acquire_seconds"])
	}
	if len(got["nonceforge_lease_lost"]) != 4 || len(got["nonceforge_lease_renewal_failures_total"]) != 3 {
		t.Errorf("lost %v failures %v", got["nonceforge_lease_lost"], got["nonceforge_lease_renewal_failures_total"])
	}
	if len(got) != len(leaseDefs) {
		t.Errorf("%d families, want %d", len(got), len(leaseDefs))
	}
	// The store goes away: renewals fail (the store cannot be reached), the
	// deadline passes, the lease is lapsed and not ready.
	_ = redis.Process.Kill()
	got = poll("lapsed, the store unreachable", func(m map[string]map[string]float64) bool {
		return m["nonceforge_lease_state"]["state=lapsed"] == 1 &&
			m["nonceforge_lease_renewal_failures_total"]["failure=unreachable"] >= 1
	})
	if got["nonceforge_lease_ready"][""] != 0 || got["nonceforge_lease_lapses_total"][""] < 1 {
		t.Errorf("lapsed: ready %v lapses %v", got["nonceforge_lease_ready"], got["nonceforge_lease_lapses_total"])
	}
	if !errors.Is(l.Ready(), lease.ErrNotReady) {
		t.Errorf("Ready: %v", l.Ready())
	}
}

// The sanitizer's figures for the process, after a reuse caught.
func TestSanitizerFigures(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 0x5a
	block, _ := aes.NewCipher(key)
	inner, _ := cipher.NewGCM(block)
	a, err := sanitizer.NewWithConfig(inner, "AES-256-GCM", key, sanitizer.Config{Mode: sanitizer.Random, OnViolation: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, 12)
	a.Seal(nil, nonce, []byte("one"), nil)
	a.Seal(nil, nonce, []byte("two"), nil)
	r := sdk.NewManualReader()
	meter := sdk.NewMeterProvider(sdk.WithReader(r)).Meter("test")
	if _, err := RegisterSanitizer(meter); err != nil {
		t.Fatal(err)
	}
	got := collect(t, r)
	if got["nonceforge_sanitizer_refusals_total"]["violation=reuse"] < 1 || got["nonceforge_sanitizer_seals_total"][""] < 1 {
		t.Errorf("%v", got)
	}
	if len(got["nonceforge_sanitizer_refusals_total"]) != 6 || got["nonceforge_sanitizer_keys"][""] < 1 || got["nonceforge_sanitizer_memory_bytes"][""] <= 0 {
		t.Errorf("%v", got)
	}
	runtime.KeepAlive(a)
}
