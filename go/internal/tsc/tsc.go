// Package tsc reads the CPU's time-stamp counter where it is invariant (a
// constant rate in every power state), and gates clock reads with it: a
// Ticker tells from the counter alone that the current millisecond cannot have
// ended, so the operating system's clock is read about once a millisecond.
//
// Reading CLOCK_MONOTONIC through the vDSO costs 25 ns on the reference
// machine (time.Since; runtime.nanotime alike); RDTSC costs 9.6 ns. That is
// the difference between 25 M and 40 M sortable nonces a second on one core,
// and it is why this package exists: the standard library offers no cheaper
// clock. The Rust core gates its clock the same way (crates/nonceforge/src/clock.rs).
package tsc

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Ticker is milliseconds on the wall scale, measured on the monotonic clock
// from one wall-clock reading, with the TSC gate. Safe for concurrent use.
type Ticker struct {
	base   time.Time // the monotonic origin
	wall0  int64     // Unix ns at base
	tsc    bool
	tsc0   uint64 // calibration start: counter and monotonic ns
	mono0  int64
	ms     atomic.Uint64 // the latest millisecond seen
	before atomic.Uint64 // below this count, ms is still the current millisecond
}

// NewTicker starts a ticker at base (a time.Time read with its monotonic
// reading), whose wall clock then read Unix ns wall0.
func NewTicker(base time.Time, wall0 int64) *Ticker {
	t := &Ticker{base: base, wall0: wall0}
	if c, ok := Read(); ok {
		t.tsc, t.tsc0, t.mono0 = true, c, int64(time.Since(base))
	}
	t.ms.Store(uint64(max(wall0, 0)) / 1e6)
	return t
}

// Elapsed reads the monotonic clock: the time since base.
func (t *Ticker) Elapsed() time.Duration { return time.Since(t.base) }

// UnixNano reads the clock (not gated): Unix ns on the monotonic scale.
func (t *Ticker) UnixNano() int64 { return t.wall0 + int64(t.Elapsed()) }

// UnixMilli is the current millisecond: never less than any it returned before.
func (t *Ticker) UnixMilli() uint64 {
	if t.tsc {
		if c := counter(); c < t.before.Load() {
			return t.ms.Load()
		}
	}
	return t.read()
}

func (t *Ticker) read() uint64 {
	var c uint64
	if t.tsc {
		c = counter()
	}
	mono := int64(t.Elapsed())
	ns := uint64(max(t.wall0+mono, 0))
	// (the counter was read first: the gate closes early, never late)
	ms := ns / 1e6
	prev := t.ms.Load()
	for prev < ms && !t.ms.CompareAndSwap(prev, ms) {
		prev = t.ms.Load()
	}
	if t.tsc && prev <= ms {
		if left := t.within(c, mono, 1e6-ns%1e6); left > 0 {
			until := c + left
			for b := t.before.Load(); b < until && !t.before.CompareAndSwap(b, until); b = t.before.Load() {
			}
		}
	}
	return max(ms, prev)
}

// within is a lower bound on the counts that pass in ns nanoseconds (0 while
// the rate is not known well enough): 97% of the rate measured since the
// ticker started, so that a millisecond's end is never passed unseen (an
// early look at the clock costs 25 ns).
func (t *Ticker) within(c uint64, mono int64, ns uint64) uint64 {
	dc, dn := c-t.tsc0, mono-t.mono0
	if c < t.tsc0 || dn < 20e6 {
		return 0
	}
	// dc·ns·97 / 100 / dn, in 128 bits.
	hi, lo := bits.Mul64(dc, ns*97)
	hi, r := bits.Div64(0, hi, 100)
	lo, _ = bits.Div64(r, lo, 100)
	if hi >= uint64(dn) {
		return 0 // a counter far off the clock: do not trust it
	}
	q, _ := bits.Div64(hi, lo, uint64(dn))
	return q
}
