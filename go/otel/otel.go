// Package otel exports nonceforge's figures through OpenTelemetry's metric
// API: a generator's (nonce.Generator.Stats) and a lease's (lease.Lease.Metrics),
// under the fleet's metric names (testdata/vectors/metrics.json, the same in
// every face; docs/operations.md says what each means and which alerts to
// set). It is a module of its own, so that a program using go/nonce alone
// pulls in nothing of OpenTelemetry.
//
// The instruments are asynchronous: the SDK reads the figures when it
// collects (a reader's Collect, an exporter's interval), and nothing is added
// to the hot path. Instrument names are the fleet's Prometheus-style names
// (counters end in _total, times are in seconds or microseconds as named), so
// an OpenTelemetry Prometheus exporter serves them under those names.
package otel

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/nonceforge/nonceforge/go/lease"
	"github.com/nonceforge/nonceforge/go/nonce"
	"github.com/nonceforge/nonceforge/go/sanitizer"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// def is one series family of the fleet: name, type, help.
type def struct {
	name, kind, help string
}

// Generator's and lease's families, as metrics.json lists them (the tests
// compare the two).
var (
	generatorDefs = []def{
		{"nonceforge_nonces_issued_total", "counter", "Nonces issued, by kind (counter: counter and encrypted nonces, one tick counter per size) and size in bits."},
		{"nonceforge_throttled_total", "counter", "Calls that waited because a millisecond's counter ran out or for the clock to reach a timestamp."},
		{"nonceforge_throttled_microseconds_total", "counter", "Time spent in those waits, in microseconds (an integer counter in every face)."},
		{"nonceforge_refusals_total", "counter", "Calls refused, by reason: disabled, deadline (a lease lapsed, lost or released), epoch_exhausted, counter_exhausted, no_key."},
		{"nonceforge_clock_behind_seconds", "gauge", "How far the wall clock is behind the generator's own clock (0 when it is not): a wall clock stepped back."},
		{"nonceforge_epoch_headroom_seconds", "gauge", "Time left before the 42-bit timestamp range of the generator's epoch ends."},
		{"nonceforge_deadline_headroom_seconds", "gauge", "Time the generator may still issue before its lease's local deadline (absent without a lease)."},
		{"nonceforge_generator_enabled", "gauge", "1 while the generator issues, 0 when disabled or past its deadline."},
	}
	leaseDefs = []def{
		{"nonceforge_lease_state", "gauge", "1 for the lease's state (held, lapsed, lost, released), 0 for the others."},
		{"nonceforge_lease_ready", "gauge", "1 while the lease lets its generators issue (held, past its start wait)."},
		{"nonceforge_lease_machine_id", "gauge", "The machine id the lease holds (or last held)."},
		{"nonceforge_lease_token", "gauge", "The grant's fencing token; it rises with every grant of the id."},
		{"nonceforge_lease_floor_seconds", "gauge", "Where the generators started above, in seconds since 1970."},
		{"nonceforge_lease_deadline_seconds", "gauge", "Time left until the lease's local deadline (0 unless held)."},
		{"nonceforge_lease_acquire_seconds", "gauge", "How long the acquisition took."},
		{"nonceforge_lease_start_wait_seconds", "gauge", "How long the first value waited after the grant (the TTL and margin on a slow start)."},
		{"nonceforge_lease_started_fast", "gauge", "1 when the grant started right above the store's floor."},
		{"nonceforge_lease_renewals_total", "counter", "Renewals that succeeded."},
		{"nonceforge_lease_renewal_failures_total", "counter", "Renewals that failed (and were retried), by kind: unreachable, timeout, store."},
		{"nonceforge_lease_renewal_microseconds_total", "counter", "The successful renewals' round trips added up, in microseconds (with the renewals: the mean)."},
		{"nonceforge_lease_renewal_last_seconds", "gauge", "The last successful renewal's round trip."},
		{"nonceforge_lease_renewal_max_seconds", "gauge", "The longest successful renewal's round trip."},
		{"nonceforge_lease_lapses_total", "counter", "Times the local deadline passed without a renewal (the generators stopped until one came)."},
		{"nonceforge_lease_lost", "gauge", "1 under the reason the lease was lost (taken, evicted, store, rollback), 0 under the others."},
	}
)

// sanitizerDefs are metrics.json's sanitizer_metrics.
var sanitizerDefs = []def{
	{"nonceforge_sanitizer_seals_total", "counter", "Seals the nonce sanitizer checked, under every key, since the process started (counted as the seal budget is taken: up to 256 per shard ahead)."},
	{"nonceforge_sanitizer_refusals_total", "counter", "Seals and opens the nonce sanitizer refused, by violation: reuse (a repeated nonce caught), suspected, counter_too_old, seal_limit, byte_limit, replay."},
	{"nonceforge_sanitizer_keys", "gauge", "Keys whose state the nonce sanitizer holds (in use, or retained after their last instance)."},
	{"nonceforge_sanitizer_memory_bytes", "gauge", "Bytes of memory those states hold (their windows grow with use, up to the configured sizes)."},
}

// lostReasons are the lost_reason label's values, in metrics.json's order.
var lostReasons = []lease.LostReason{lease.LostTaken, lease.LostEvicted, lease.LostStoreData, lease.LostStoreBack}

// stateNames are the state label's values.
var stateNames = []string{"held", "lapsed", "lost", "released"}

// instruments makes one observable instrument per family.
func instruments(m metric.Meter, defs []def) (map[string]metric.Observable, []metric.Observable, error) {
	by := make(map[string]metric.Observable, len(defs))
	all := make([]metric.Observable, 0, len(defs))
	for _, d := range defs {
		var (
			o   metric.Observable
			err error
		)
		if d.kind == "counter" {
			o, err = m.Int64ObservableCounter(d.name, metric.WithDescription(d.help))
		} else {
			o, err = m.Float64ObservableGauge(d.name, metric.WithDescription(d.help))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("nonceforge otel: instrument %s: %w", d.name, err)
		}
		by[d.name] = o
		all = append(all, o)
	}
	return by, all, nil
}

// observer writes one family's values whatever its instrument's type.
type observer struct {
	o  metric.Observer
	by map[string]metric.Observable
	at []attribute.KeyValue // the caller's attributes, on every series
}

func (w observer) put(name string, v float64, kv ...attribute.KeyValue) {
	opt := metric.WithAttributes(append(append([]attribute.KeyValue{}, w.at...), kv...)...)
	switch inst := w.by[name].(type) {
	case metric.Int64ObservableCounter:
		w.o.ObserveInt64(inst, int64(math.Round(v)), opt)
	case metric.Float64ObservableGauge:
		w.o.ObserveFloat64(inst, v, opt)
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// register makes defs' instruments on m and a callback that writes them
// through observe.
func register(m metric.Meter, defs []def, attrs []attribute.KeyValue, observe func(w observer)) (metric.Registration, error) {
	by, all, err := instruments(m, defs)
	if err != nil {
		return nil, err
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		observe(observer{o: o, by: by, at: attrs})
		return nil
	}, all...)
}

// RegisterGenerator exports g's figures on m, each series with attrs (a
// service's own attributes: service, pod, …). Unregister the returned
// registration when g is no longer used.
func RegisterGenerator(m metric.Meter, g *nonce.Generator, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if m == nil || g == nil {
		return nil, fmt.Errorf("nonceforge otel: RegisterGenerator: the meter and the generator must not be nil")
	}
	return register(m, generatorDefs, attrs, func(w observer) {
		s := g.Stats()
		for i, bits := range nonce.Sizes {
			b := attribute.String("bits", strconv.Itoa(bits))
			w.put("nonceforge_nonces_issued_total", float64(s.CounterIssued[i]), attribute.String("kind", "counter"), b)
			w.put("nonceforge_nonces_issued_total", float64(s.SortableIssued[i]), attribute.String("kind", "sortable"), b)
		}
		w.put("nonceforge_throttled_total", float64(s.Throttled))
		w.put("nonceforge_throttled_microseconds_total", float64(s.ThrottledFor.Microseconds()))
		for i, reason := range nonce.RefusalReasons {
			w.put("nonceforge_refusals_total", float64(s.Refused[i]), attribute.String("reason", reason))
		}
		w.put("nonceforge_clock_behind_seconds", s.ClockBehind.Seconds())
		w.put("nonceforge_epoch_headroom_seconds", s.EpochEndsIn.Seconds())
		if s.HasDeadline {
			w.put("nonceforge_deadline_headroom_seconds", s.DeadlineIn.Seconds())
		}
		w.put("nonceforge_generator_enabled", flag(s.Enabled))
	})
}

// RegisterLease exports l's figures on m, each series with attrs.
// Unregister the returned registration when the lease is released.
func RegisterLease(m metric.Meter, l *lease.Lease, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if m == nil || l == nil {
		return nil, fmt.Errorf("nonceforge otel: RegisterLease: the meter and the lease must not be nil")
	}
	var mu sync.Mutex // one collection at a time reads the lease
	return register(m, leaseDefs, attrs, func(w observer) {
		mu.Lock()
		defer mu.Unlock()
		x := l.Metrics()
		for _, s := range stateNames {
			w.put("nonceforge_lease_state", flag(x.State.String() == s), attribute.String("state", s))
		}
		w.put("nonceforge_lease_ready", flag(l.Ready() == nil))
		w.put("nonceforge_lease_machine_id", float64(x.MachineID))
		w.put("nonceforge_lease_token", float64(x.Token))
		w.put("nonceforge_lease_floor_seconds", float64(x.FloorUnixMilli)/1000)
		w.put("nonceforge_lease_deadline_seconds", x.DeadlineIn.Seconds())
		w.put("nonceforge_lease_acquire_seconds", x.AcquiredIn.Seconds())
		w.put("nonceforge_lease_start_wait_seconds", x.StartWait.Seconds())
		w.put("nonceforge_lease_started_fast", flag(x.StartedFast))
		w.put("nonceforge_lease_renewals_total", float64(x.Renewals))
		for i, kind := range lease.FailureKinds {
			w.put("nonceforge_lease_renewal_failures_total", float64(x.RenewalFailures[i]), attribute.String("failure", kind))
		}
		w.put("nonceforge_lease_renewal_microseconds_total", float64(x.RenewalTotal.Microseconds()))
		if x.RenewalLast > 0 {
			w.put("nonceforge_lease_renewal_last_seconds", x.RenewalLast.Seconds())
		}
		w.put("nonceforge_lease_renewal_max_seconds", x.RenewalMax.Seconds())
		w.put("nonceforge_lease_lapses_total", float64(x.Lapses))
		for _, r := range lostReasons {
			w.put("nonceforge_lease_lost", flag(x.LostReason == r), attribute.String("lost_reason", r.Name()))
		}
	})
}

// RegisterSanitizer exports the nonce sanitizer's figures for the process
// (sanitizer.ProcessStats: seals checked, refusals by violation, keys held,
// their memory) on m, each series with attrs.
func RegisterSanitizer(m metric.Meter, attrs ...attribute.KeyValue) (metric.Registration, error) {
	if m == nil {
		return nil, fmt.Errorf("nonceforge otel: RegisterSanitizer: the meter must not be nil")
	}
	return register(m, sanitizerDefs, attrs, func(w observer) {
		s := sanitizer.ProcessStats()
		w.put("nonceforge_sanitizer_seals_total", float64(s.Seals))
		for i, kind := range sanitizer.ViolationKinds {
			w.put("nonceforge_sanitizer_refusals_total", float64(s.Refused[i]), attribute.String("violation", kind))
		}
		w.put("nonceforge_sanitizer_keys", float64(s.Keys))
		w.put("nonceforge_sanitizer_memory_bytes", float64(s.MemoryBytes))
	})
}
