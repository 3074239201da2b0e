package sanitizer

// The registry: one state per key and algorithm in a process, shared by every
// instance of it, kept a while after the last one is gone.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	stdhash "hash"
	"runtime"
	"sync"
	"time"
	"weak"
)

// RetainFor is how long a key's state is kept after an AEAD of it was last
// made, even when no AEAD of it is left, for the RetainKeys keys made most
// recently: a repeat across two AEADs of one key is caught whether or not the
// garbage collector took the first before the second was made, within these
// bounds (the Rust core's rule, so Node's too).
const (
	RetainFor  = 10 * time.Minute
	RetainKeys = 128
)

var registry struct {
	sync.Mutex
	m    map[[32]byte]weak.Pointer[keyState]
	salt [32]byte
	// retained keeps states alive (strong references) with when their key was
	// last made; order lists (when, key) as made, entries whose time is no
	// longer the key's in retained being stale.
	retained map[[32]byte]retainedState
	order    []retainedAt
}

// gone is what a collected state leaves behind: its fingerprint and its tally.
type gone struct {
	fp [32]byte
	t  *tally
}

type retainedState struct {
	when time.Time
	s    *keyState
}

type retainedAt struct {
	when time.Time
	fp   [32]byte
}

func init() {
	registry.m = make(map[[32]byte]weak.Pointer[keyState])
	registry.retained = make(map[[32]byte]retainedState)
	_, _ = rand.Read(registry.salt[:])
}

// retain keeps s for RetainFor from now, dropping what is past the bounds
// (amortized O(1)); registry is locked.
func retain(fp [32]byte, s *keyState, now time.Time) {
	registry.retained[fp] = retainedState{now, s}
	registry.order = append(registry.order, retainedAt{now, fp})
	i := 0
	for ; i < len(registry.order); i++ {
		o := registry.order[i]
		if r, ok := registry.retained[o.fp]; !ok || !r.when.Equal(o.when) {
			continue // stale: made again since
		}
		if now.Sub(o.when) < RetainFor && len(registry.retained) <= RetainKeys {
			break
		}
		delete(registry.retained, o.fp)
	}
	if i > 0 {
		registry.order = append(registry.order[:0], registry.order[i:]...)
	}
}

// saltedMAC is HMAC-SHA-256 keyed with the salt and fed the domain string,
// made once: each key clones it (two compressions fewer than keying anew).
var saltedMAC = sync.OnceValue(func() stdhash.Cloner {
	mac := hmac.New(sha256.New, registry.salt[:])
	mac.Write([]byte("nonceforge sanitizer v1\x00"))
	return mac.(stdhash.Cloner)
})

func stateFor(algorithm string, key []byte, n int, cfg *Config) *keyState {
	mac, err := saltedMAC().Clone()
	if err != nil {
		panic("sanitizer: HMAC-SHA-256 cannot be cloned: " + err.Error())
	}
	mac.Write([]byte(algorithm))
	mac.Write([]byte{0, byte(n)})
	mac.Write(key)
	var fp [32]byte
	copy(fp[:], mac.Sum(nil))
	registry.Lock()
	defer registry.Unlock()
	now := time.Now()
	if s := registry.m[fp].Value(); s != nil {
		retain(fp, s, now)
		return s
	}
	s := newKeyState(algorithm, fp, n, cfg)
	registry.m[fp] = weak.Make(s)
	retain(fp, s, now)
	runtime.AddCleanup(s, func(g gone) {
		registry.Lock()
		if registry.m[g.fp].Value() == nil {
			delete(registry.m, g.fp)
		}
		registry.Unlock()
		retire(g.t)
	}, gone{fp, s.tally})
	return s
}
