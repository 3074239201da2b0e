package lease

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// How a member looks for a free id (docs/lease-protocol.md, "Finding a free
// id"): the Rust crate's store::candidates, restated; both read
// testdata/vectors/lease-search.json in their tests.
const (
	// searchWhole: a range of at most this many ids is tried whole, lowest first.
	searchWhole = 1024
	// sample: ids tried in one round trip when sampling a wider range.
	sample = 64
	// sampleRounds: samples before a wide range is tried whole, in chunks.
	sampleRounds = 8
)

// candidates are the ids to try in round (from 0) of an acquire, in order;
// nil when every round is done: the whole range at once when it is small,
// otherwise sampleRounds samples of sample distinct random ids, then the
// range in chunks of searchWhole, lowest first.
func candidates(first, last, round int) []int {
	size := last - first + 1
	if size <= searchWhole {
		if round != 0 {
			return nil
		}
		out := make([]int, 0, size)
		for id := first; id <= last; id++ {
			out = append(out, id)
		}
		return out
	}
	if round < sampleRounds {
		out := make([]int, 0, sample)
		seen := map[int]bool{}
		var b [4 * sample]byte
		for len(out) < sample {
			if _, err := rand.Read(b[:]); err != nil {
				panic("nonceforge lease: the operating system's random generator failed: " + err.Error())
			}
			for i := 0; i < len(b) && len(out) < sample; i += 4 {
				id := first + int(binary.LittleEndian.Uint32(b[i:])%uint32(size))
				if !seen[id] {
					seen[id] = true
					out = append(out, id)
				}
			}
		}
		return out
	}
	start := first + (round-sampleRounds)*searchWhole
	if start > last {
		return nil
	}
	out := []int{}
	for id := start; id <= min(last, start+searchWhole-1); id++ {
		out = append(out, id)
	}
	return out
}

// layoutRefusal refuses a member whose layout is not the namespace's (the
// Rust crate's store::layout_refusal says the same).
func layoutRefusal(ns, recorded string, asked nonce.Layout) error {
	return refused(fmt.Sprintf("namespace %q holds members of the %s layout; this member asks for the %s layout: a fleet uses one layout (docs/contracts.md, \"The wide layout\"), so give it its own namespace", ns, recorded, asked))
}
