package sanitizer

import (
	"sync"
	"sync/atomic"
)

// ViolationKinds names the refusals as Stats.Refused orders them and the
// fleet's metrics label them (testdata/vectors/metrics.json,
// "sanitizer_metrics", label "violation"; the Rust core's order, where
// "suspected" is its Bloom filter's, which this port does not have: always 0).
var ViolationKinds = [6]string{"reuse", "suspected", "counter_too_old", "seal_limit", "byte_limit", "replay"}

// fleetKind maps a Kind to its place in ViolationKinds.
var fleetKind = [...]int{Reuse: 0, CounterTooOld: 2, SealLimit: 3, ByteLimit: 4, Replay: 5}

// tally is what a key's state counts for Stats, kept apart from it so that
// the process's totals can take it over when the state is collected.
type tally struct {
	refused [6]atomic.Uint64
	// taken: the seal budget the shards have taken (budgetChunk at a time).
	taken   atomic.Uint64
	counter *counterTrack // nil outside counter mode
}

// seals is what the tally has checked: the budget taken, plus in counter
// mode the highest counter sealed plus one.
func (t *tally) seals() uint64 {
	n := t.taken.Load()
	if t.counter != nil {
		n += t.counter.high.Load() &^ counterLocked
	}
	return n
}

// Stats is a key's detector's figures (AEAD.Stats), or the process's
// (ProcessStats).
type Stats struct {
	// Seals checked: the seal budget taken (256 at a time per shard, so up to
	// 256 per shard ahead of the seals made), plus, in counter mode, the
	// highest counter sealed plus one (a counter that skipped values counts
	// them).
	Seals uint64
	// Refused: refusals by kind, in ViolationKinds' order.
	Refused [6]uint64
	// MemoryBytes: the memory the state (or every state) holds now.
	MemoryBytes int
	// Keys: keys whose state is held (ProcessStats only).
	Keys int
}

func (t *tally) add(to *Stats) {
	to.Seals += t.seals()
	for i := range to.Refused {
		to.Refused[i] += t.refused[i].Load()
	}
}

// Stats returns this key's figures, shared by every AEAD of the key.
func (a *AEAD) Stats() Stats {
	var s Stats
	a.state.tally.add(&s)
	s.MemoryBytes = a.state.memoryBytes()
	return s
}

// retired holds what collected states had counted, so that the process's
// totals never go down.
var retired struct {
	sync.Mutex
	Stats
}

func retire(t *tally) {
	retired.Lock()
	defer retired.Unlock()
	t.add(&retired.Stats)
}

// ProcessStats returns the sanitizer's figures for the process: keys held
// (in use, or retained: RetainFor, RetainKeys), their memory, and the seals
// and refusals under every key since the process started.
func ProcessStats() Stats {
	registry.Lock()
	live := make([]*keyState, 0, len(registry.m))
	for _, p := range registry.m {
		if s := p.Value(); s != nil {
			live = append(live, s)
		}
	}
	registry.Unlock()
	retired.Lock()
	out := retired.Stats
	retired.Unlock()
	out.Keys, out.MemoryBytes = len(live), 0
	for _, s := range live {
		s.tally.add(&out)
		out.MemoryBytes += s.memoryBytes()
	}
	return out
}
