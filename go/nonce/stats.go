package nonce

import (
	"errors"
	"sync/atomic"
	"time"
)

// Refusal reasons, as Stats.Refused and the fleet's metrics name them
// (testdata/vectors/metrics.json, label "reason").
const (
	RefusedDisabled         = "disabled"          // Disable, or a zero Generator
	RefusedDeadline         = "deadline"          // past the deadline (a lease lapsed, lost or released)
	RefusedEpochExhausted   = "epoch_exhausted"   // the epoch's 42-bit timestamp range has ended
	RefusedCounterExhausted = "counter_exhausted" // a 128-bit counter ran out
	RefusedNoKey            = "no_key"            // an encrypted nonce without a base key
)

// RefusalReasons lists the reasons in the order of the fleet's metrics.
var RefusalReasons = [5]string{RefusedDisabled, RefusedDeadline, RefusedEpochExhausted, RefusedCounterExhausted, RefusedNoKey}

const (
	refusedDisabled = iota
	refusedDeadline
	refusedEpochExhausted
	refusedCounterExhausted
	refusedNoKey
)

// counts are what a generator counts on its slow paths (waits, refusals,
// ticks and words that made no nonce), apart from its hot state.
type counts struct {
	ticksUnused     [3]atomic.Uint64
	sortableSkipped [3]atomic.Uint64
	throttled       atomic.Uint64
	throttledNs     atomic.Uint64
	refused         [5]atomic.Uint64
}

// refuse counts a refusal and returns err.
func (g *Generator) refuse(why int, err error) error {
	if g.counts != nil {
		g.counts.refused[why].Add(1)
	}
	return err
}

// refuseErr counts a refusal by the kind of err (a stop or an exhaustion of
// the epoch) and returns it; other errors pass uncounted.
func (g *Generator) refuseErr(err error) error {
	switch {
	case err == nil || g.counts == nil:
	case errors.Is(err, ErrDisabled):
		why := refusedDisabled
		if g.state.Load()&stoppedPastDeadline != 0 {
			why = refusedDeadline
		}
		g.counts.refused[why].Add(1)
	case errors.Is(err, ErrExhausted):
		g.counts.refused[refusedEpochExhausted].Add(1)
	}
	return err
}

// Stats is what a generator has issued and how much room it has left, at
// one moment (Generator.Stats). Counts are since New.
type Stats struct {
	// CounterIssued: counter and encrypted nonces of 64, 96 and 128 bits (one
	// tick counter per size). A Local reserves ticks a block at a time (256
	// at 64 bits, 65,536 wider) and counts the whole block when it reserves it.
	CounterIssued [3]uint64
	// SortableIssued: sortable nonces of 64, 96 and 128 bits.
	SortableIssued [3]uint64
	// Throttled: calls that waited for the clock (a millisecond's counter ran
	// out, or the clock had to reach a timestamp); ThrottledFor: how long.
	Throttled    uint64
	ThrottledFor time.Duration
	// Refused: calls refused, by reason (RefusalReasons' order).
	Refused [5]uint64
	// ClockBehind: how far the wall clock is behind the generator's own (0
	// when it is not): a wall clock stepped back.
	ClockBehind time.Duration
	// EpochEndsIn: time left before the epoch's 42-bit timestamp range ends.
	EpochEndsIn time.Duration
	// DeadlineIn: time left before the deadline (SetValidUntil); HasDeadline
	// is false without one.
	DeadlineIn  time.Duration
	HasDeadline bool
	// Enabled: the generator issues now.
	Enabled bool
}

// Sizes are the sizes, in bits, of Stats' arrays, in order.
var Sizes = [3]int{64, 96, 128}

// Stats returns the generator's figures now. Nothing on the hot path is
// written for them: counter nonces are counted by the tick counters they are
// made from, sortable nonces by the words they are taken from; waits,
// refusals and ticks that made no nonce are counted where they happen.
func (g *Generator) Stats() Stats {
	var s Stats
	if g.counts == nil {
		return s
	}
	c := g.counts
	for i, k := range []uint{13, 21, 21} {
		s.CounterIssued[i] = g.counters[i].Load() - c.ticksUnused[i].Load()
		s.SortableIssued[i] = g.sortables[i].Load() - g.initTs<<k - c.sortableSkipped[i].Load()
	}
	s.Throttled = c.throttled.Load()
	s.ThrottledFor = time.Duration(c.throttledNs.Load())
	for i := range s.Refused {
		s.Refused[i] = c.refused[i].Load()
	}
	now := g.nowMs()
	if wall := g.clock.WallUnixMilli(); wall >= 0 && uint64(wall) < now {
		s.ClockBehind = time.Duration(now-uint64(wall)) * time.Millisecond
	}
	if end := g.epoch + timestampEnd; end > now {
		s.EpochEndsIn = time.Duration(end-now) * time.Millisecond
	}
	if until := g.validUntil.Load(); until != ^uint64(0) {
		s.HasDeadline = true
		if until > now {
			s.DeadlineIn = time.Duration(until-now) * time.Millisecond
		}
	}
	s.Enabled = g.state.Load() == stateLive && now <= g.validUntil.Load()
	return s
}
