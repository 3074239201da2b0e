package nonce

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Every sentinel the README names holds on every entry point that can meet
// its case: a zero Generator (ErrNotBuilt), no base key (ErrNoKey), stopped or
// past its deadline (ErrDisabled), the epoch's range ended (ErrExhausted).
func TestSentinelsHoldOnEveryEntryPoint(t *testing.T) {
	type call struct {
		name      string
		generates bool // issues nonces (Encrypt/Decrypt only transform)
		needsKey  bool
		counter   bool // takes ticks, not the clock's millisecond
		f         func(*Generator) error
	}
	var calls []call
	for _, bits := range []int{64, 96, 128} {
		b := bits
		size := bits / 8
		calls = append(calls,
			call{"Counter", true, false, true, func(g *Generator) error { _, err := g.Counter(b); return err }},
			call{"Sortable", true, false, false, func(g *Generator) error { _, err := g.Sortable(b); return err }},
			call{"Encrypted", true, true, true, func(g *Generator) error { _, err := g.Encrypted(b); return err }},
			call{"Next(Counter)", true, false, true, func(g *Generator) error { _, err := g.Next(Counter, b); return err }},
			call{"Next(Sortable)", true, false, false, func(g *Generator) error { _, err := g.Next(Sortable, b); return err }},
			call{"Next(Encrypted)", true, true, true, func(g *Generator) error { _, err := g.Next(Encrypted, b); return err }},
			call{"Fill(Counter)", true, false, true, func(g *Generator) error { return g.Fill(Counter, b, make([]byte, 4*size)) }},
			call{"Fill(Sortable)", true, false, false, func(g *Generator) error { return g.Fill(Sortable, b, make([]byte, 4*size)) }},
			call{"Fill(Encrypted)", true, true, true, func(g *Generator) error { return g.Fill(Encrypted, b, make([]byte, 4*size)) }},
			call{"Local.Counter", true, false, true, func(g *Generator) error { _, err := g.Local().Counter(b); return err }},
			call{"Local.Sortable", true, false, false, func(g *Generator) error { _, err := g.Local().Sortable(b); return err }},
			call{"Local.Encrypted", true, true, true, func(g *Generator) error { _, err := g.Local().Encrypted(b); return err }},
			call{"Encrypt", false, true, false, func(g *Generator) error { _, err := g.Encrypt(make([]byte, size)); return err }},
			call{"Decrypt", false, true, false, func(g *Generator) error { _, err := g.Decrypt(make([]byte, size)); return err }},
		)
	}
	key := make([]byte, 32)
	build := func(t *testing.T, o Options) *Generator {
		t.Helper()
		g, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	cases := []struct {
		name string
		make func(t *testing.T) *Generator
		want func(c call) error // nil: the call succeeds
	}{
		{"zero Generator", func(*testing.T) *Generator { return &Generator{} },
			func(call) error { return ErrNotBuilt }},
		{"no base key", func(t *testing.T) *Generator { return build(t, Options{MachineID: Machine(1)}) },
			func(c call) error {
				if c.needsKey {
					return ErrNoKey
				}
				return nil
			}},
		{"disabled", func(t *testing.T) *Generator {
			g := build(t, Options{MachineID: Machine(1), Key: key})
			g.Disable()
			return g
		}, func(c call) error {
			if c.generates {
				return ErrDisabled
			}
			return nil
		}},
		{"disabled, no key", func(t *testing.T) *Generator {
			g := build(t, Options{MachineID: Machine(1)})
			g.Disable()
			return g
		}, func(c call) error {
			if c.needsKey {
				return ErrNoKey // the lasting cause first
			}
			return ErrDisabled
		}},
		{"past its deadline, as a lease's timer finds it", func(t *testing.T) *Generator {
			clock := newManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
			g := build(t, Options{MachineID: Machine(1), Key: key, Clock: clock})
			g.SetValidUntil(clock.WallUnixMilli() + 10)
			clock.advance(time.Second)
			if err := g.CheckDeadline(); !errors.Is(err, ErrDisabled) {
				t.Fatalf("CheckDeadline: %v", err)
			}
			return g
		}, func(c call) error {
			if c.generates {
				return ErrDisabled
			}
			return nil
		}},
		{"epoch's range ended", func(t *testing.T) *Generator {
			// 2^42 ms after the epoch: 139 years. The clock stands a minute
			// before the end, then moves past it.
			epoch := time.UnixMilli(0)
			clock := newManual(1<<42 - 60_000)
			g := build(t, Options{MachineID: Machine(1), Key: key, Clock: clock, Epoch: epoch})
			clock.advance(2 * time.Minute)
			return g
		}, func(c call) error {
			if c.generates && !c.counter {
				return ErrExhausted
			}
			return nil // counters carry their start time: they go on
		}},
	}
	for _, tc := range cases {
		for _, c := range calls {
			g := tc.make(t)
			err := c.f(g)
			want := tc.want(c)
			if want == nil {
				if err != nil {
					t.Errorf("%s: %s: %v, want success", tc.name, c.name, err)
				}
				continue
			}
			if !errors.Is(err, want) {
				t.Errorf("%s: %s: %v, want errors.Is %v", tc.name, c.name, err, want)
			}
		}
	}
}

// No default machine id: the zero Options is refused, naming the ways to
// choose one; Machine(0) is an id chosen on purpose.
func TestNoDefaultMachineID(t *testing.T) {
	_, err := New(Options{})
	if !errors.Is(err, ErrNoMachineID) {
		t.Fatalf("New(Options{}): %v, want ErrNoMachineID", err)
	}
	for _, way := range []string{"nonce.Machine(n)", "MachineIDFromEnv", "MachineIDFromHostList", "lease"} {
		if !strings.Contains(err.Error(), way) {
			t.Errorf("the error does not name %q: %v", way, err)
		}
	}
	if _, err := New(Options{Key: make([]byte, 32)}); !errors.Is(err, ErrNoMachineID) {
		t.Fatalf("a key but no id: %v", err)
	}
	g, err := New(Options{MachineID: Machine(0)})
	if err != nil || g.MachineID() != 0 {
		t.Fatalf("Machine(0): %v, %v", g, err)
	}
	if id, ok := (MachineID{}).Int(); ok || id != 0 || (MachineID{}).String() != "none" || Machine(7).String() != "7" {
		t.Fatal("MachineID's zero value must read as no id")
	}
}
