package nonce

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// What a generator counts is what it returned: eight goroutines draw counter,
// encrypted and sortable nonces of every size (plain calls, Locals' blocks
// used up, Fill) on a manual clock that a ninth moves; the counts equal the
// nonces returned, by kind and size.
func TestStatsCountWhatWasIssued(t *testing.T) {
	clock := newManual(1_800_000_000_000)
	g, err := New(Options{MachineID: Machine(7), Clock: clock, Key: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		counter  [3]uint64
		sortable [3]uint64
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				clock.advance(time.Millisecond)
			}
		}
	}()
	for w := range 8 {
		wg.Go(func() {
			var c, s [3]uint64
			l := g.Local()
			for j := range 3000 {
				i := j % 3
				bits := Sizes[i]
				switch w % 4 {
				case 0:
					if _, err := g.Counter(bits); err != nil {
						t.Error(err)
						return
					}
				case 1:
					if _, err := g.Encrypted(bits); err != nil {
						t.Error(err)
						return
					}
				case 2:
					buf := make([]byte, 3*bits/8)
					if err := g.Fill(Counter, bits, buf); err != nil {
						t.Error(err)
						return
					}
					c[i] += 2 // and one more below
				case 3:
					if _, err := g.Sortable(bits); err != nil {
						t.Error(err)
						return
					}
					s[i]++
					continue
				}
				c[i]++
			}
			// A Local's blocks, used up exactly (a Local counts a block when it reserves it).
			for i, bits := range Sizes {
				for range blockLen(bits) {
					if _, err := l.Counter(bits); err != nil {
						t.Error(err)
						return
					}
				}
				c[i] += blockLen(bits)
			}
			mu.Lock()
			for i := range 3 {
				counter[i] += c[i]
				sortable[i] += s[i]
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stop)
	s := g.Stats()
	if s.CounterIssued != counter || s.SortableIssued != sortable {
		t.Fatalf("counted %v / %v, issued %v / %v", s.CounterIssued, s.SortableIssued, counter, sortable)
	}
	if !s.Enabled || s.Refused != [5]uint64{} || s.HasDeadline {
		t.Fatalf("stats %+v", s)
	}
}

// A millisecond's sortable words run out: the call waits for the next
// millisecond, counted with the time it waited; the skipped words are not
// counted as issued.
func TestStatsCountWaits(t *testing.T) {
	clock := newManual(1_800_000_000_000)
	g, err := New(Options{MachineID: Machine(1), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	for range 8192 + 10 {
		if _, err := g.Sortable(64); err != nil {
			t.Fatal(err)
		}
	}
	clock.advance(5 * time.Millisecond)
	if _, err := g.Sortable(64); err != nil {
		t.Fatal(err)
	}
	s := g.Stats()
	if s.SortableIssued[0] != 8192+11 {
		t.Fatalf("sortable issued %d, want %d", s.SortableIssued[0], 8192+11)
	}
	if s.Throttled != 1 || s.ThrottledFor <= 0 || s.ThrottledFor > time.Millisecond {
		t.Fatalf("throttled %d for %v", s.Throttled, s.ThrottledFor)
	}
}

// Refusals are counted by reason, and only refusals: Disable (disabled), past
// the deadline (deadline), no key; CheckDeadline is not a call for a nonce.
// The clock and headroom figures follow the clock.
func TestStatsCountRefusalsByReason(t *testing.T) {
	clock := newManual(1_800_000_000_000)
	g, err := New(Options{MachineID: Machine(1), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Encrypted(64); !errors.Is(err, ErrNoKey) {
		t.Fatal(err)
	}
	g.Disable()
	for _, bits := range Sizes {
		if _, err := g.Counter(bits); !errors.Is(err, ErrDisabled) {
			t.Fatal(err)
		}
	}
	if s := g.Stats(); s.Enabled {
		t.Fatal("enabled while disabled")
	}
	g.Enable()
	now := g.ClockUnixMilli()
	g.SetValidUntil(now + 10)
	if s := g.Stats(); !s.HasDeadline || s.DeadlineIn != 10*time.Millisecond || !s.Enabled {
		t.Fatalf("deadline %+v", s)
	}
	clock.advance(20 * time.Millisecond)
	if err := g.CheckDeadline(); !errors.Is(err, ErrDisabled) {
		t.Fatal(err)
	}
	if _, err := g.Sortable(96); !errors.Is(err, ErrDisabled) {
		t.Fatal(err)
	}
	s := g.Stats()
	want := [5]uint64{3, 1, 0, 0, 1}
	if s.Refused != want {
		t.Fatalf("refused %v, want %v (%v)", s.Refused, want, RefusalReasons)
	}
	if s.Enabled || s.DeadlineIn != 0 {
		t.Fatalf("past the deadline %+v", s)
	}
	if s.CounterIssued != [3]uint64{} || s.SortableIssued != [3]uint64{} {
		t.Fatalf("refused calls counted as issued: %+v", s)
	}
	// The wall clock stepped back a second: it is a second behind.
	clock.setWall(g.ClockUnixMilli() - 1000)
	if s := g.Stats(); s.ClockBehind != time.Second {
		t.Fatalf("clock behind %v", s.ClockBehind)
	}
	end := time.UnixMilli(int64(g.epoch + timestampEnd))
	if d := end.Sub(time.UnixMilli(g.ClockUnixMilli())) - g.Stats().EpochEndsIn; d != 0 {
		t.Fatalf("epoch headroom off by %v", d)
	}
	var zero Generator
	if s := zero.Stats(); s != (Stats{}) {
		t.Fatalf("a zero Generator's stats: %+v", s)
	}
}
