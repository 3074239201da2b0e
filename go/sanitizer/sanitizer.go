// Package sanitizer wraps a cipher.AEAD so that it refuses to seal twice under
// one (key, nonce), with byte-identical output: a seat belt against the nonce
// reuse that destroys AES-GCM and ChaCha20-Poly1305.
//
//	aead, _ := chacha20poly1305.New(key)
//	safe := sanitizer.New(aead, "ChaCha20-Poly1305", key)
//	ct := safe.Seal(nil, nonce, msg, nil) // as aead.Seal
//	safe.Seal(nil, nonce, other, nil)     // panics: "nonceforge: nonce reuse: ..."
//
// State is per key, not per instance: a salted fingerprint of the key (never
// the key) is computed once, and every instance wrapping the same key and
// algorithm in this process shares one state while any of them lives. The
// state grows with use, up to the configured windows: a new key holds a few
// hundred bytes, so a server may hold a key per session or per file (100,000
// live keys sealing a few messages each: 1.5–3.2 KB a key; bench/RESULTS.md).
//
// What is checked, as in the Rust crate's aead module:
//   - counter-shaped nonces (XOR with the key's first nonce is a big-endian
//     counter: counters from zero, age's stream nonces, TLS's IV XOR sequence):
//     a high-water mark and an out-of-order bitmap, exact over all history;
//   - any nonce: an exact window of the last Config.Window seals (default
//     1024), sharded so goroutines do not serialise on one lock, with no
//     allocation per Seal once grown;
//   - optionally, the same message sealed again under the same nonce
//     (Config.AllowIdentical): equal tags under one key and nonce mean the
//     same message;
//   - limits per key: seals (default 2^32) and bytes; optionally, replays on
//     Open (Config.CheckOpen).
//
// On a violation nothing sealed leaves: by default Seal panics; with
// Config.OnViolation set it calls that and returns dst with nothing appended.
package sanitizer

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// Mode says how nonces are checked.
type Mode int

const (
	// Auto: counter-shaped nonces take the counter path; others, and counters
	// more than the counter window below the highest, take the exact window.
	Auto Mode = iota
	// Counter: every nonce is a counter; one more than the counter window
	// below the highest is refused, since it cannot be proven fresh.
	Counter
	// Random: the exact window only.
	Random
)

func (m Mode) String() string {
	switch m {
	case Auto:
		return "Auto"
	case Counter:
		return "Counter"
	case Random:
		return "Random"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Kind says what went wrong.
type Kind int

const (
	// Reuse: the nonce was sealed before under this key, with another message.
	Reuse Kind = iota
	// CounterTooOld: a counter nonce too far below the highest (Counter mode).
	CounterTooOld
	// SealLimit: the key's seal limit is reached.
	SealLimit
	// ByteLimit: the key's byte limit is reached.
	ByteLimit
	// Replay: the nonce was opened before (CheckOpen).
	Replay
)

// ErrNonceReuse matches every *Violation with errors.Is.
var ErrNonceReuse = errors.New("nonceforge: nonce reuse")

// Violation is a refused Seal (or Open).
type Violation struct {
	Kind      Kind
	Algorithm string
	// KeyID is a short per-process id of the key (from its salted
	// fingerprint), never the key.
	KeyID uint32
	Nonce []byte
	// Limit is the limit for SealLimit and ByteLimit, the window for CounterTooOld.
	Limit uint64
}

func (v *Violation) Error() string {
	switch v.Kind {
	case CounterTooOld:
		return fmt.Sprintf("nonceforge: nonce reuse not ruled out: %s key #%08x, counter nonce %x is more than %d below the highest sealed", v.Algorithm, v.KeyID, v.Nonce, v.Limit)
	case SealLimit:
		return fmt.Sprintf("nonceforge: nonce reuse risk: %s key #%08x has sealed its limit of %d messages; use a new key", v.Algorithm, v.KeyID, v.Limit)
	case ByteLimit:
		return fmt.Sprintf("nonceforge: nonce reuse risk: %s key #%08x has sealed its limit of %d bytes; use a new key", v.Algorithm, v.KeyID, v.Limit)
	case Replay:
		return fmt.Sprintf("nonceforge: nonce reuse by the sender: %s key #%08x opened nonce %x before (a replay?)", v.Algorithm, v.KeyID, v.Nonce)
	default:
		return fmt.Sprintf("nonceforge: nonce reuse: %s key #%08x sealed a second message under nonce %x", v.Algorithm, v.KeyID, v.Nonce)
	}
}

// Is makes errors.Is(v, ErrNonceReuse) true.
func (v *Violation) Is(target error) bool { return target == ErrNonceReuse }

// Config holds the sanitizer's settings; the zero value is the defaults. The
// per-key state is made by the first instance for a key, with its settings;
// later instances share it and keep their own OnViolation.
type Config struct {
	Mode Mode
	// Window: seals remembered exactly (default 1024; 64..2^24). Memory grows
	// as the key is used, to under 2 × Window × (nonce size + 16) bytes a
	// shard (8 × Window more above 65536, and 34 × Window more with
	// AllowIdentical).
	Window int
	// CounterWindow: how far below the highest a counter may arrive and still
	// be checked exactly (default 65536; 64..2^30, one bit a value once a
	// value is skipped).
	CounterWindow int
	// Shards of the window (default min(GOMAXPROCS, 8); 1..64); each holds a
	// whole window. More shards let more goroutines seal under one key at
	// once; fewer keep the window in cache: a key sealed by one goroutine at a
	// time is quickest with 1 (long messages most: bench/RESULTS.md).
	Shards int
	// AllowIdentical: the same message sealed again under a nonce is fine.
	AllowIdentical bool
	// MaxSeals per key (default 2^32; for counters, the counter's value).
	MaxSeals uint64
	// MaxBytes of plaintext per key (default: no limit).
	MaxBytes uint64
	// CheckOpen: refuse a nonce opened twice (replays).
	CheckOpen bool
	// OnViolation, when set, is called instead of panicking, and Seal returns
	// dst with nothing appended.
	OnViolation func(error)
}

// DefaultMaxSeals is NIST SP 800-38D's bound for random 96-bit nonces.
const DefaultMaxSeals = 1 << 32

// budgetChunk: seals a shard takes from the key's budget at a time, for
// limits of 2^24 and more (smaller limits are kept exactly).
const budgetChunk = 256

type shard struct {
	mu     sync.Mutex
	budget uint64
	w      window   // in the shard: one load fewer before the table
	_      [64]byte // keep shards' hot words on separate cache lines
}

type keyState struct {
	algorithm      string
	keyID          uint32
	n              int
	mode           Mode
	allowIdentical bool
	first          atomic.Pointer[firstNonce]
	counter        *counterTrack
	counterMax     uint64
	shards         []shard
	k0, k1         uint64
	sealsLeft      atomic.Uint64
	maxSeals       uint64
	chunk          uint64
	bytesLeft      atomic.Uint64
	maxBytes       uint64
	// fast: a new nonce may skip begin/finish (no byte limit, no tags to keep).
	fast    bool
	open    []shard
	openKey [2]uint64
	// tally: what Stats reports, apart so that it outlives the state (the
	// process's totals keep what a collected key counted: stats.go).
	tally *tally
}

// newKeyState makes the state; fp, the key's fingerprint, gives its id (the
// first 4 bytes) and the windows' hash keys (bits shown nowhere, as secret as
// the process's salt).
func newKeyState(algorithm string, fp [32]byte, n int, c *Config) *keyState {
	word := func(i int) uint64 { return binary.LittleEndian.Uint64(fp[i:]) }
	window := c.Window
	if window == 0 {
		window = 1024
	}
	window = max(64, min(window, 1<<24))
	cw := c.CounterWindow
	if cw == 0 {
		cw = 1 << 16
	}
	// The Rust core's bounds (testdata/vectors/sanitizer-defaults.json): a
	// counter window of 2^40 would be a 2^40-bit map at the first skipped value.
	cw = max(64, min(cw, 1<<30))
	shards := c.Shards
	if shards <= 0 {
		shards = min(runtime.GOMAXPROCS(0), 8)
	}
	shards = min(shards, 64)
	s := &keyState{
		algorithm: algorithm, keyID: binary.BigEndian.Uint32(fp[:4]), n: n, mode: c.Mode,
		allowIdentical: c.AllowIdentical,
		k0:             word(16), k1: word(24) | 1,
		maxSeals: c.MaxSeals, maxBytes: c.MaxBytes,
	}
	if s.maxSeals == 0 {
		s.maxSeals = DefaultMaxSeals
	}
	s.chunk = 1
	if s.maxSeals >= 1<<24 {
		s.chunk = budgetChunk
	}
	s.sealsLeft.Store(s.maxSeals)
	s.bytesLeft.Store(c.MaxBytes)
	if c.Mode != Random {
		s.counter = newCounterTrack(cw, c.AllowIdentical, c.MaxBytes != 0)
		s.counterMax = counterLimit
		if c.MaxSeals != 0 {
			s.counterMax = min(c.MaxSeals, counterLimit)
		}
	}
	s.fast = !c.AllowIdentical && c.MaxBytes == 0
	s.shards = make([]shard, shards)
	sealHash := func(b []byte) uint64 { return hash(b, s.k0, s.k1) }
	for i := range s.shards {
		s.shards[i].w = newWindow(window, n, c.AllowIdentical, sealHash)
	}
	if c.CheckOpen {
		s.openKey = [2]uint64{word(4), word(8) | 1}
		openHash := func(b []byte) uint64 { return hash(b, s.openKey[0], s.openKey[1]) }
		s.open = make([]shard, shards)
		for i := range s.open {
			s.open[i].w = newWindow(window, n, false, openHash)
		}
	}
	s.tally = &tally{counter: s.counter}
	return s
}

// shardOf scales the hash's top 32 bits to 0..n (a multiply, not a division).
func shardOf(h uint64, n int) int {
	return int(((h >> 32) * uint64(n)) >> 32)
}

func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// hash is a keyed multiply-fold hash of the nonce (8 to 24 bytes); the keys
// are random per state, so nobody outside the process can aim nonces at one
// shard. The last word is read overlapping the one before: nonces of one state
// all have one length, so the hash is still a function of every byte.
func hash(nonce []byte, k0, k1 uint64) uint64 {
	// The last 8 bytes are read as one word and the bytes before them in
	// words: nonces are usually written as a prefix and a 64-bit counter, and
	// a load spanning both stores cannot be forwarded from them (reading a
	// 12-byte nonce as bytes 0..8 and 4..12 stalled every Seal; see
	// bench/RESULTS.md).
	lead := len(nonce) - 8
	h := k0
	i := 0
	for ; i+8 <= lead; i += 8 {
		h = mix(h^binary.LittleEndian.Uint64(nonce[i:]), k1)
	}
	if r := lead - i; r > 0 {
		var w uint64
		if r == 4 {
			w = uint64(binary.LittleEndian.Uint32(nonce[i:]))
		} else {
			for j := range r {
				w |= uint64(nonce[i+j]) << (8 * j)
			}
		}
		h = mix(h^w, k1)
	}
	return mix(h^binary.LittleEndian.Uint64(nonce[lead:]), k1)
}

// hash12 is hash for 12-byte nonces (the AEADs' usual size), without the loop,
// so that it inlines.
func hash12(nonce []byte, k0, k1 uint64) uint64 {
	h := mix(k0^uint64(binary.LittleEndian.Uint32(nonce)), k1)
	return mix(h^binary.LittleEndian.Uint64(nonce[4:12]), k1)
}

func (s *keyState) violation(k Kind, nonce []byte, limit uint64) *Violation {
	s.tally.refused[fleetKind[k]].Add(1)
	return &Violation{Kind: k, Algorithm: s.algorithm, KeyID: s.keyID, Nonce: append([]byte(nil), nonce...), Limit: limit}
}

// place kinds
const (
	placeCounter uint8 = iota
	placeWindow
	placeRepeat
)

// ticket is what begin hands to finish. begin and place write it through a
// pointer into the caller's frame, field by field: returned by value, Go
// copied it through the stack in 16-byte moves that straddled the fields'
// separate stores, and every such load waited for its stores to commit
// (bench/RESULTS.md, "The measurements behind the code").
type ticket struct {
	x     uint64    // the counter value, or the window entry
	tag   *[16]byte // the first message's tag, for placeRepeat
	shard uint16
	table uint8
	kind  uint8
}

// firstNonce is the key's first nonce, against which counters are read.
type firstNonce struct {
	bytes  []byte
	low    uint64 // its last 8 bytes
	high32 uint32 // its first 4, for 12-byte nonces
}

func (s *keyState) setFirst(nonce []byte) *firstNonce {
	f := &firstNonce{bytes: append([]byte(nil), nonce...), low: binary.BigEndian.Uint64(nonce[len(nonce)-8:])}
	if len(nonce) == 12 {
		f.high32 = binary.BigEndian.Uint32(nonce)
	}
	if !s.first.CompareAndSwap(nil, f) {
		return s.first.Load()
	}
	return f
}

// counterValue reads nonce as a counter: its XOR with the key's first nonce,
// when every byte but the last 8 is equal.
func (s *keyState) counterValue(nonce []byte) (uint64, bool) {
	f := s.first.Load()
	if f == nil {
		f = s.setFirst(nonce)
	}
	if len(nonce) == 12 {
		// The common size: one 4-byte compare, not a call to memequal.
		if binary.BigEndian.Uint32(nonce) != f.high32 {
			return 0, false
		}
	} else if string(nonce[:len(nonce)-8]) != string(f.bytes[:len(nonce)-8]) {
		return 0, false
	}
	x := binary.BigEndian.Uint64(nonce[len(nonce)-8:]) ^ f.low
	return x, x < counterLimit
}

func (s *keyState) begin(nonce []byte, length int, t *ticket) *Violation {
	n := uint64(length)
	if s.maxBytes != 0 {
		for {
			left := s.bytesLeft.Load()
			if left < n {
				return s.violation(ByteLimit, nonce, s.maxBytes)
			}
			if s.bytesLeft.CompareAndSwap(left, left-n) {
				break
			}
		}
	}
	v := s.place(nonce, t)
	if v != nil && s.maxBytes != 0 {
		s.bytesLeft.Add(n)
	}
	return v
}

func (s *keyState) place(nonce []byte, t *ticket) *Violation {
	if s.counter != nil {
		if x, ok := s.counterValue(nonce); ok {
			if x >= s.counterMax {
				return s.violation(SealLimit, nonce, s.counterMax)
			}
			seen, tag := s.counter.checkAndInsert(x)
			switch seen {
			case counterNew:
				t.kind, t.x = placeCounter, x
				return nil
			case counterAgain:
				return s.repeat(nonce, tag, t)
			default:
				if s.mode == Counter {
					return s.violation(CounterTooOld, nonce, s.counter.width)
				}
			}
		}
	}
	h := hash(nonce, s.k0, s.k1)
	i := shardOf(h, len(s.shards))
	sh := &s.shards[i]
	sh.mu.Lock()
	if sh.budget == 0 {
		for {
			left := s.sealsLeft.Load()
			if left == 0 {
				sh.mu.Unlock()
				return s.violation(SealLimit, nonce, s.maxSeals)
			}
			take := min(left, s.chunk)
			if s.sealsLeft.CompareAndSwap(left, left-take) {
				sh.budget = take
				s.tally.taken.Add(take)
				break
			}
		}
	}
	pos, seen, tag := sh.w.checkAndInsert(nonce, h)
	if !seen {
		sh.budget--
		sh.mu.Unlock()
		t.kind, t.shard, t.table, t.x = placeWindow, uint16(i), uint8(pos.table), pos.entry
		return nil
	}
	var first *[16]byte
	if tag != nil {
		first = new([16]byte) // a repeat: off the hot path
		copy(first[:], tag)
	}
	sh.mu.Unlock()
	return s.repeat(nonce, first, t)
}

// windowFast remembers nonce and reports true if it is new and within the
// budget; anything else (a repeat, an empty budget) is left to place, which
// finds the nonce again and reports it.
func (s *keyState) windowFast(nonce []byte) bool {
	var h uint64
	if len(nonce) == 12 {
		h = hash12(nonce, s.k0, s.k1) // inlined: a call and its spills cost ~1 ns a Seal
	} else {
		h = hash(nonce, s.k0, s.k1)
	}
	sh := &s.shards[shardOf(h, len(s.shards))]
	sh.mu.Lock()
	if sh.budget == 0 {
		sh.mu.Unlock()
		return false
	}
	_, seen, _ := sh.w.checkAndInsert(nonce, h)
	if seen {
		sh.mu.Unlock()
		return false
	}
	sh.budget--
	sh.mu.Unlock()
	return true
}

func (s *keyState) repeat(nonce []byte, tag *[16]byte, t *ticket) *Violation {
	if s.allowIdentical && tag != nil {
		t.kind, t.tag = placeRepeat, tag
		return nil
	}
	return s.violation(Reuse, nonce, 0)
}

func (s *keyState) finish(t *ticket, nonce, tag []byte) *Violation {
	switch {
	case t.kind == placeRepeat:
		if subtle.ConstantTimeCompare(t.tag[:], tag) == 1 {
			return nil
		}
		return s.violation(Reuse, nonce, 0)
	case !s.allowIdentical:
		return nil
	case t.kind == placeCounter:
		s.counter.setTag(t.x, tag)
	default:
		sh := &s.shards[t.shard]
		sh.mu.Lock()
		sh.w.setTag(wpos{int(t.table), t.x}, nonce, tag)
		sh.mu.Unlock()
	}
	return nil
}

func (s *keyState) checkOpen(nonce []byte) *Violation {
	if s.open == nil {
		return nil
	}
	h := hash(nonce, s.openKey[0], s.openKey[1])
	sh := &s.open[shardOf(h, len(s.open))]
	sh.mu.Lock()
	_, seen, _ := sh.w.checkAndInsert(nonce, h)
	sh.mu.Unlock()
	if seen {
		return s.violation(Replay, nonce, 0)
	}
	return nil
}

func (s *keyState) memoryBytes() int {
	total := 0
	if s.counter != nil {
		total += s.counter.memoryBytes()
	}
	for _, shards := range [][]shard{s.shards, s.open} {
		for i := range shards {
			shards[i].mu.Lock()
			total += shards[i].w.memoryBytes()
			shards[i].mu.Unlock()
		}
	}
	return total
}

// AEAD is a sanitized cipher.AEAD.
type AEAD struct {
	inner       cipher.AEAD
	state       *keyState
	onViolation func(error)
}

var _ cipher.AEAD = (*AEAD)(nil)

// New wraps aead (which uses key) under the default settings: a violation
// panics. algorithm names the AEAD ("AES-256-GCM", "ChaCha20-Poly1305",
// "XChaCha20-Poly1305"...): instances with the same name and key share state.
func New(aead cipher.AEAD, algorithm string, key []byte) *AEAD {
	a, err := NewWithConfig(aead, algorithm, key, Config{})
	if err != nil {
		panic(err) // the zero Config is always valid
	}
	return a
}

// NewWithConfig wraps aead with these settings.
func NewWithConfig(aead cipher.AEAD, algorithm string, key []byte, cfg Config) (*AEAD, error) {
	if aead == nil {
		return nil, errors.New("sanitizer: aead is nil")
	}
	n := aead.NonceSize()
	if n < 8 || n > 24 {
		return nil, fmt.Errorf("sanitizer: nonce size %d: nonces of 8 to 24 bytes are supported", n)
	}
	if aead.Overhead() != 16 {
		return nil, fmt.Errorf("sanitizer: overhead %d: AEADs with 16-byte tags are supported", aead.Overhead())
	}
	if cfg.Window < 0 || cfg.CounterWindow < 0 || cfg.Shards < 0 || cfg.Mode < Auto || cfg.Mode > Random {
		return nil, errors.New("sanitizer: Window, CounterWindow and Shards must be 0 (default) or positive, Mode one of Auto, Counter, Random")
	}
	return &AEAD{inner: aead, state: stateFor(algorithm, key, n, &cfg), onViolation: cfg.OnViolation}, nil
}

// NonceSize is the wrapped AEAD's.
func (a *AEAD) NonceSize() int { return a.inner.NonceSize() }

// Overhead is the wrapped AEAD's.
func (a *AEAD) Overhead() int { return a.inner.Overhead() }

// MemoryBytes is the size of this key's state now: it grows with use, up to
// the configured windows.
func (a *AEAD) MemoryBytes() int { return a.state.memoryBytes() }

// SharesStateWith says whether a and b guard one key.
func (a *AEAD) SharesStateWith(b *AEAD) bool { return a.state == b.state }

func (a *AEAD) refuse(v *Violation) {
	if a.onViolation == nil {
		panic(v.Error())
	}
	a.onViolation(v)
}

// Seal is the wrapped AEAD's Seal, refused on a repeated nonce: then nothing
// is appended to dst (and anything written is wiped) and, without
// OnViolation, it panics.
func (a *AEAD) Seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if len(nonce) != a.state.n { // the inner AEAD's size: it is in the state's fingerprint
		return a.inner.Seal(dst, nonce, plaintext, additionalData) // panics as the original does
	}
	if s := a.state; s.fast {
		if s.counter != nil {
			// The next counter in order: one compare-and-swap, nothing to finish.
			x, ok := s.counterValue(nonce)
			if ok && x < s.counterMax && s.counter.tryFast(x) {
				return a.inner.Seal(dst, nonce, plaintext, additionalData)
			}
			if !ok && s.windowFast(nonce) {
				return a.inner.Seal(dst, nonce, plaintext, additionalData)
			}
		} else if s.windowFast(nonce) {
			return a.inner.Seal(dst, nonce, plaintext, additionalData)
		}
	}
	var t ticket
	if v := a.state.begin(nonce, len(plaintext), &t); v != nil {
		a.refuse(v)
		return dst
	}
	out := a.inner.Seal(dst, nonce, plaintext, additionalData)
	if v := a.state.finish(&t, nonce, out[len(out)-16:]); v != nil {
		clear(out[len(dst):])
		a.refuse(v)
		return dst
	}
	return out
}

// Open is the wrapped AEAD's Open, plus the replay check when CheckOpen is on
// (a replay wipes the plaintext and returns the *Violation; it never panics:
// the peer chose the nonce).
func (a *AEAD) Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	out, err := a.inner.Open(dst, nonce, ciphertext, additionalData)
	if err != nil || a.state.open == nil {
		return out, err
	}
	if v := a.state.checkOpen(nonce); v != nil {
		clear(out[len(dst):])
		if a.onViolation != nil {
			a.onViolation(v)
		}
		return nil, v
	}
	return out, nil
}
