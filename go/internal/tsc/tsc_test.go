package tsc

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The gated millisecond is never ahead of the clock and never behind it:
// read against the same monotonic clock just before and just after, from
// four goroutines, across the 20 ms before the counter's rate is trusted and
// 60 ms after.
func TestTickerFollowsTheClock(t *testing.T) {
	base := time.Now()
	wall0 := base.UnixNano()
	tk := NewTicker(base, wall0)
	clockMs := func() uint64 { return uint64(wall0+int64(time.Since(base))) / 1e6 }
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	var opened atomic.Bool
	for range 4 {
		wg.Go(func() {
			last := uint64(0)
			for time.Since(base) < 80*time.Millisecond {
				a := clockMs()
				m := tk.UnixMilli()
				b := clockMs()
				if m < a || m > b || m < last {
					errs <- "out of step"
					t.Errorf("clock %d..%d, ticker %d, before %d", a, b, m, last)
					return
				}
				last = m
				if tk.snap.Load().before != 0 {
					opened.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if _, ok := Read(); ok && !opened.Load() && !raceEnabled {
		t.Error("an invariant counter, but the gate never opened")
	}
}

func TestWithin(t *testing.T) {
	tk := &Ticker{tsc: true, tsc0: 1000, mono0: 0}
	// 3 GHz: 30e6 counts in 10 ms (too early to trust), 3e9 in 1 s.
	if got := tk.within(1000+30e6, 10e6, 1e6); got != 0 {
		t.Fatalf("trusted after 10 ms: %d", got)
	}
	if got := tk.within(1000+3e9, 1e9, 1e6); got != 2_910_000 {
		t.Fatalf("1 ms at 3 GHz: %d counts, want 97%% of 3e6", got)
	}
	if got := tk.within(500, 1e9, 1e6); got != 0 {
		t.Fatalf("a counter behind its start: %d", got)
	}
}

// The estimated nanoseconds stay in the gated millisecond and within 1 µs of
// the clock, read just before and just after, sampled without pause for 20 ms
// (so within each millisecond, where the estimate is used).
func TestUnixNanoCoarse(t *testing.T) {
	for _, tk := range []*Ticker{NewWallTicker(), NewTicker(time.Now(), time.Now().UnixNano())} {
		time.Sleep(25 * time.Millisecond) // past calibration
		clock := func() int64 { return tk.UnixNano() }
		if tk.wall {
			clock = func() int64 { return time.Now().UnixNano() }
		}
		var worst int64
		estimated := 0
		for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
			a := clock()
			ns := tk.UnixNanoCoarse()
			b := clock()
			if ns < a-1000 || ns > b+1000 || ns/1e6 > b/1e6 {
				t.Fatalf("wall=%v: clock %d..%d, estimate %d", tk.wall, a, b, ns)
			}
			worst = max(worst, ns-b, a-ns)
			if tk.snap.Load().before != 0 {
				estimated++
			}
		}
		if _, ok := Read(); ok && estimated == 0 && !raceEnabled {
			t.Fatalf("wall=%v: an invariant counter, but no estimate was made", tk.wall)
		}
		t.Logf("wall=%v: worst distance from the clock %d ns", tk.wall, worst)
	}
}
