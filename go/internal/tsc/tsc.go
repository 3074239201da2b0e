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

// Ticker is time on the wall scale, measured on the monotonic clock from one
// wall-clock reading, with the TSC gate. Safe for concurrent use.
type Ticker struct {
	base  time.Time // the monotonic origin
	wall0 int64     // Unix ns at base
	wall  bool      // follow the wall clock at each read (NewWallTicker)
	tsc   bool
	tsc0  uint64 // calibration start: counter and monotonic ns
	mono0 int64
	snap  atomic.Pointer[snapshot]
}

// maxReadNs bounds the time between the counter readings around a clock
// read whose snapshot may gate and estimate (a clock read takes 25-50 ns;
// estimates are off by at most half of this).
const maxReadNs = 400

// snapshot is one reading of the OS clock: until the counter reaches before,
// the millisecond ms has not ended, and the time is ns plus the counts since
// c times nsPerCount (Q32).
type snapshot struct {
	ms, c, before, nsPerCount uint64
	ns                        int64
}

// NewTicker starts a ticker at base (a time.Time read with its monotonic
// reading), whose wall clock then read Unix ns wall0.
func NewTicker(base time.Time, wall0 int64) *Ticker {
	t := &Ticker{base: base, wall0: wall0}
	if c, ok := Read(); ok {
		t.tsc, t.tsc0, t.mono0 = true, c, int64(time.Since(base))
	}
	t.snap.Store(&snapshot{ms: uint64(max(wall0, 0)) / 1e6})
	return t
}

// NewWallTicker is a ticker that reads the wall clock each time it reads the
// OS clock (about once a millisecond), so it follows a wall clock stepped
// forward; one stepped back holds it where it was until the clock catches up.
// For time-ordered UUIDs, whose timestamps are compared across machines.
func NewWallTicker() *Ticker {
	now := time.Now()
	t := NewTicker(now, now.UnixNano())
	t.wall = true
	return t
}

// Elapsed reads the monotonic clock: the time since base.
func (t *Ticker) Elapsed() time.Duration { return time.Since(t.base) }

// UnixNano reads the clock (not gated): Unix ns on the monotonic scale.
func (t *Ticker) UnixNano() int64 { return t.wall0 + int64(t.Elapsed()) }

// UnixMilli is the current millisecond: never less than any it returned before.
func (t *Ticker) UnixMilli() uint64 {
	if t.tsc {
		if s := t.snap.Load(); counter() < s.before {
			return s.ms
		}
	}
	return t.read().ms
}

// UnixNanoCoarse is the time in Unix ns: within the current millisecond it
// is estimated from the counter (off by at most 3% of the time since the OS
// clock was read, never into the next millisecond); it does not go back
// within a millisecond, but may across one (an estimate a little high).
func (t *Ticker) UnixNanoCoarse() int64 {
	if t.tsc {
		s := t.snap.Load()
		if c := counter(); c < s.before {
			if c <= s.c {
				return s.ns // a counter behind the snapshot's (another CPU's)
			}
			ns := s.ns + int64((c-s.c)*s.nsPerCount>>32)
			return min(ns, int64(s.ms)*1e6+999_999)
		}
	}
	return t.read().ns
}

func (t *Ticker) read() *snapshot {
	var c uint64
	if t.tsc {
		c = counter() // read first: the gate closes early, never late
	}
	mono := int64(t.Elapsed())
	ns := max(t.wall0+mono, 0)
	if t.wall {
		now := time.Now()
		mono, ns = int64(now.Sub(t.base)), max(now.UnixNano(), 0)
	}
	s := &snapshot{ms: uint64(ns) / 1e6, ns: ns}
	if t.tsc {
		// The clock was read between two counter readings: estimates count
		// from their midpoint, and only when they lie close together (a
		// goroutine held up between them would skew every estimate of the
		// millisecond by as much); the gate counts from the first.
		c2 := counter()
		if left := t.within(c, mono, 1e6-uint64(ns)%1e6); left > 0 {
			s.nsPerCount = t.nsPerCount(c, mono)
			if (c2-c)*s.nsPerCount>>32 <= maxReadNs {
				s.before, s.c = c+left, c+(c2-c)/2
			}
		}
	}
	for {
		old := t.snap.Load()
		if old.ms > s.ms {
			// Another goroutine saw a later millisecond: never go back.
			return old
		}
		if t.snap.CompareAndSwap(old, s) {
			return s
		}
	}
}

// nsPerCount is the measured ns per count, Q32 (0: unknown).
func (t *Ticker) nsPerCount(c uint64, mono int64) uint64 {
	dc, dn := c-t.tsc0, uint64(mono-t.mono0)
	if dc == 0 || dn>>32 >= dc {
		return 0
	}
	q, _ := bits.Div64(dn>>32, dn<<32, dc)
	return q
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
