package sanitizer

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

func freshKey(t testing.TB) []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func gcm(t testing.TB, key []byte) cipher.AEAD {
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// collect returns a config whose violations are appended to *got.
func collect(got *[]*Violation, mu *sync.Mutex) Config {
	return Config{OnViolation: func(err error) {
		var v *Violation
		if !errors.As(err, &v) {
			panic("not a *Violation")
		}
		mu.Lock()
		*got = append(*got, v)
		mu.Unlock()
	}}
}

// refused seals msg under nonce and returns the violation, if any (then
// checking that nothing was appended to dst).
func refused(t *testing.T, a *AEAD, nonce, msg []byte) *Violation {
	t.Helper()
	var v *Violation
	a.onViolation = func(err error) { v = err.(*Violation) }
	out := a.Seal([]byte("prefix"), nonce, msg, nil)
	if v != nil && string(out) != "prefix" {
		t.Fatalf("refused Seal appended %d bytes", len(out)-6)
	}
	return v
}

func counterNonce(i uint64) []byte {
	n := make([]byte, 12)
	binary.BigEndian.PutUint64(n[4:], i)
	return n
}

func TestReuseInsideTheWindowIsCaughtEveryTime(t *testing.T) {
	for _, shards := range []int{1, 3, 8} {
		key := freshKey(t)
		a, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: Random, Shards: shards, OnViolation: func(error) {}})
		if err != nil {
			t.Fatal(err)
		}
		rng := mrand.New(mrand.NewPCG(uint64(shards), 1))
		var history [][]byte
		for i := 0; i < 20000; i++ {
			n := make([]byte, 12)
			binary.LittleEndian.PutUint64(n, rng.Uint64())
			binary.LittleEndian.PutUint32(n[8:], rng.Uint32())
			if v := refused(t, a, n, []byte("m")); v != nil {
				t.Fatalf("fresh nonce refused: %v", v)
			}
			history = append(history, n)
			k := i % 1024
			if len(history) > k {
				old := history[len(history)-1-k]
				if v := refused(t, a, old, []byte("other")); v == nil || v.Kind != Reuse {
					t.Fatalf("shards %d: the nonce sealed %d seals ago passed", shards, k)
				}
			}
		}
	}
}

func TestTwoInstancesWithOneKeyAreCrossChecked(t *testing.T) {
	key := freshKey(t)
	a := New(gcm(t, key), "AES-256-GCM", key)
	b := New(gcm(t, key), "AES-256-GCM", key)
	if !a.SharesStateWith(b) {
		t.Fatal("one key, two states")
	}
	nonce := counterNonce(7)
	a.Seal(nil, nonce, []byte("one"), nil)
	if v := refused(t, b, nonce, []byte("two")); v == nil || v.Kind != Reuse {
		t.Fatal("the second instance sealed the nonce again")
	}
	c, _ := chacha20poly1305.New(key)
	other := New(c, "ChaCha20-Poly1305", key)
	if other.SharesStateWith(a) {
		t.Fatal("another algorithm shares state")
	}
	other.Seal(nil, nonce, []byte("three"), nil)
}

func TestDefaultPolicyPanicsWithTheDocumentedMessage(t *testing.T) {
	key := freshKey(t)
	c, _ := chacha20poly1305.NewX(key)
	a := New(c, "XChaCha20-Poly1305", key)
	nonce := bytes.Repeat([]byte{1}, 24)
	a.Seal(nil, nonce, []byte("a"), nil)
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.HasPrefix(msg, "nonceforge: nonce reuse") || !strings.Contains(msg, "XChaCha20-Poly1305") {
			t.Fatalf("panic message: %q", msg)
		}
		if strings.Contains(msg, fmt.Sprintf("%x", key[:4])) {
			t.Fatal("the key is printed")
		}
	}()
	a.Seal(nil, nonce, []byte("b"), nil)
	t.Fatal("no panic")
}

func TestNoFalsePositiveOverTenMillionDistinctRandomNonces(t *testing.T) {
	if testing.Short() {
		t.Skip("10M seals")
	}
	key := freshKey(t)
	s := stateFor("test", key, 12, &Config{})
	rng := mrand.New(mrand.NewPCG(3, 3))
	n := make([]byte, 12)
	for i := uint32(0); i < 10_000_000; i++ {
		binary.BigEndian.PutUint32(n, i) // distinct by construction
		binary.LittleEndian.PutUint64(n[4:], rng.Uint64())
		var tk ticket
		if v := s.begin(n, 0, &tk); v != nil {
			t.Fatalf("#%d: %v", i, v)
		}
	}
}

func TestIdenticalMessagesAreAcceptedOnlyWhenEnabled(t *testing.T) {
	for _, allow := range []bool{false, true} {
		for _, mode := range []Mode{Random, Counter} {
			key := freshKey(t)
			var got []*Violation
			var mu sync.Mutex
			cfg := collect(&got, &mu)
			cfg.AllowIdentical, cfg.Mode = allow, mode
			a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, cfg)
			nonce := counterNonce(0)
			first := a.Seal(nil, nonce, []byte("msg"), []byte("ad"))
			again := a.Seal(nil, nonce, []byte("msg"), []byte("ad"))
			if allow != (len(again) > 0) || (allow && !bytes.Equal(first, again)) {
				t.Fatalf("allow=%v mode=%v: identical message sealed=%v", allow, mode, len(again) > 0)
			}
			if len(a.Seal(nil, nonce, []byte("msh"), []byte("ad"))) != 0 || len(a.Seal(nil, nonce, []byte("msg"), []byte("ae"))) != 0 {
				t.Fatal("a different message under the nonce was sealed")
			}
		}
	}
}

func TestCounterOutOfOrderAcceptedOnceRefusedTwice(t *testing.T) {
	key := freshKey(t)
	a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: Counter, CounterWindow: 1024, OnViolation: func(error) {}})
	seal := func(i uint64) bool { return len(a.Seal(nil, counterNonce(i), []byte("x"), nil)) > 0 }
	for i := uint64(0); i < 100; i++ {
		if !seal(i) {
			t.Fatal(i)
		}
	}
	if !seal(1000) {
		t.Fatal("jump")
	}
	for _, i := range []uint64{999, 100, 500, 101, 998} {
		if !seal(i) || seal(i) || seal(i) {
			t.Fatalf("%d: not once-then-refused", i)
		}
	}
	if !seal(5000) {
		t.Fatal("jump")
	}
	if v := refused(t, a, counterNonce(3000), nil); v == nil || v.Kind != CounterTooOld {
		t.Fatalf("too old: %v", v)
	}
}

func TestConcurrentSealsFromManyGoroutines(t *testing.T) {
	var got []*Violation
	var mu sync.Mutex
	cfg := collect(&got, &mu)
	cfg.Mode, cfg.CounterWindow = Counter, 1<<22
	ckey, rkey := freshKey(t), freshKey(t)
	counterAEAD, _ := NewWithConfig(gcm(t, ckey), "AES-256-GCM", ckey, cfg)
	rcfg := collect(&got, &mu)
	rcfg.Mode = Random
	rc, _ := chacha20poly1305.New(rkey)
	randomAEAD, _ := NewWithConfig(rc, "ChaCha20-Poly1305", rkey, rcfg)
	var next, sealed, mustCatch, didCatch atomic.Uint64
	const perG = 20000
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(g), 9))
			buf := make([]byte, 0, 128)
			for i := 0; i < perG; i++ {
				if len(counterAEAD.Seal(buf[:0], counterNonce(next.Add(1)-1), []byte("counter"), nil)) == 0 {
					t.Error("a counter value was refused")
					return
				}
				n := make([]byte, 12)
				binary.LittleEndian.PutUint64(n, rng.Uint64())
				// Seals so far, counted before this one: the distance to the
				// repeat below is measured from here.
				before := sealed.Load()
				randomAEAD.Seal(buf[:0], n, []byte("r"), nil)
				sealed.Add(1)
				if i%500 == 499 {
					// Caught whenever fewer than a window's seals (1024) came
					// between, which is always unless this goroutine was
					// descheduled (7 others may be sealed but not yet counted).
					ok := len(randomAEAD.Seal(buf[:0], n, []byte("again"), nil)) > 0
					if between := sealed.Load() - before; between+7 < 1024 {
						mustCatch.Add(1)
						if ok {
							t.Errorf("a repeat inside the window passed (%d seals between)", between)
						}
					}
					if !ok {
						didCatch.Add(1)
					}
				}
			}
		}(g)
	}
	wg.Wait()
	mu.Lock()
	reported := append([]*Violation(nil), got...)
	mu.Unlock()
	for _, v := range reported {
		if v.Algorithm == "AES-256-GCM" {
			t.Fatalf("counter path violation: %v", v)
		}
	}
	if uint64(len(reported)) != didCatch.Load() || mustCatch.Load() == 0 {
		t.Fatalf("%d violations reported, %d caught, %d had to be", len(reported), didCatch.Load(), mustCatch.Load())
	}
	for seq := uint64(0); seq < 8*perG; seq += 997 {
		if len(counterAEAD.Seal(nil, counterNonce(seq), []byte("again"), nil)) != 0 {
			t.Fatalf("counter value %d sealed twice", seq)
		}
	}
}

func TestLimits(t *testing.T) {
	key := freshKey(t)
	a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: Random, MaxSeals: 1000, OnViolation: func(error) {}})
	for i := uint64(0); i < 1000; i++ {
		n := make([]byte, 12)
		binary.LittleEndian.PutUint64(n, i*0x9e3779b97f4a7c15)
		if len(a.Seal(nil, n, nil, nil)) == 0 {
			t.Fatalf("seal %d refused", i)
		}
	}
	if v := refused(t, a, bytes.Repeat([]byte{0xee}, 12), nil); v == nil || v.Kind != SealLimit || !strings.HasPrefix(v.Error(), "nonceforge: nonce reuse risk") {
		t.Fatalf("limit: %v", v)
	}
	key = freshKey(t)
	b, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{MaxBytes: 10000, OnViolation: func(error) {}})
	for i := uint64(0); i < 10; i++ {
		b.Seal(nil, counterNonce(i), make([]byte, 1000), nil)
	}
	if v := refused(t, b, counterNonce(99), []byte("x")); v == nil || v.Kind != ByteLimit {
		t.Fatalf("byte limit: %v", v)
	}
}

func TestReplaysAreRefusedOnOpenWhenAsked(t *testing.T) {
	key := freshKey(t)
	sender := New(gcm(t, key), "AES-256-GCM", key)
	nonce := counterNonce(1)
	ct := sender.Seal(nil, nonce, []byte("pay 100"), nil)
	var reported error
	receiver, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", freshKey(t), Config{CheckOpen: true, OnViolation: func(e error) { reported = e }})
	if pt, err := receiver.Open(nil, nonce, ct, nil); err != nil || string(pt) != "pay 100" {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	pt, err := receiver.Open(buf, nonce, ct, nil)
	if !errors.Is(err, ErrNonceReuse) || pt != nil || reported == nil {
		t.Fatalf("replay: %v %q", err, pt)
	}
	if !bytes.Equal(buf[:7], make([]byte, 7)) {
		t.Fatal("the replayed plaintext is not wiped")
	}
	ct[0] ^= 1
	if _, err := receiver.Open(nil, counterNonce(2), ct, nil); err == nil || errors.Is(err, ErrNonceReuse) {
		t.Fatal("a forged message must fail as the AEAD fails")
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	key := freshKey(t)
	for _, c := range []Config{{Window: -1}, {Shards: -2}, {Mode: 7}} {
		if _, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, c); err == nil {
			t.Fatalf("%+v accepted", c)
		}
	}
	if _, err := NewWithConfig(nil, "x", key, Config{}); err == nil {
		t.Fatal("nil AEAD accepted")
	}
}

func TestZeroAllocationsPerSeal(t *testing.T) {
	key := freshKey(t)
	for _, mode := range []Mode{Random, Counter} {
		a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", append(key, byte(mode)), Config{Mode: mode})
		buf := make([]byte, 0, 64+16)
		msg := make([]byte, 64)
		n := make([]byte, 12)
		i := uint64(0)
		seal := func() {
			v := i
			if mode == Random {
				v *= 0x9e3779b97f4a7c15
			}
			binary.BigEndian.PutUint64(n[4:], v)
			i++
			a.Seal(buf[:0], n, msg, nil)
		}
		for range 5000 {
			seal()
		}
		mem := a.MemoryBytes()
		if allocs := testing.AllocsPerRun(100000, seal); allocs != 0 {
			t.Fatalf("%v: %v allocations per Seal", mode, allocs)
		}
		if a.MemoryBytes() != mem {
			t.Fatal("memory grew")
		}
	}
}

// Memory stays flat over ten million seals: the heap after equals the heap
// before (within 1 MiB), and the number of allocations does not grow with
// the number of seals.
func TestMemoryFlatOverTenMillionSeals(t *testing.T) {
	if testing.Short() {
		t.Skip("10M seals")
	}
	for _, mode := range []Mode{Random, Counter} {
		key := freshKey(t)
		a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: mode})
		buf := make([]byte, 0, 64+16)
		msg := make([]byte, 64)
		n := make([]byte, 12)
		seal := func(i uint64) {
			v := i
			if mode == Random {
				v *= 0x9e3779b97f4a7c15
			}
			binary.BigEndian.PutUint64(n[4:], v)
			a.Seal(buf[:0], n, msg, nil)
		}
		for i := range uint64(10_000) {
			seal(i)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := uint64(10_000); i < 10_000_000; i++ {
			seal(i)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
			t.Fatalf("%v: the heap grew by %d bytes over 10M seals", mode, grew)
		}
		if mallocs := after.Mallocs - before.Mallocs; mallocs > 1000 {
			t.Fatalf("%v: %d allocations over 10M seals", mode, mallocs)
		}
	}
}

// A nonce of the wrong length is refused exactly as by the wrapped AEAD: the
// same panic, and nothing recorded.
func TestWrongNonceLengthPanicsAsTheOriginal(t *testing.T) {
	key := freshKey(t)
	plain, sanitized := gcm(t, key), New(gcm(t, key), "AES-256-GCM", key)
	panicOf := func(f func()) (msg any) {
		defer func() { msg = recover() }()
		f()
		return nil
	}
	for _, n := range [][]byte{nil, make([]byte, 11), make([]byte, 13)} {
		want := panicOf(func() { plain.Seal(nil, n, []byte("m"), nil) })
		got := panicOf(func() { sanitized.Seal(nil, n, []byte("m"), nil) })
		if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("nonce of %d bytes: panic %v, want %v", len(n), got, want)
		}
	}
	if got := sanitized.Seal(nil, make([]byte, 12), []byte("m"), nil); len(got) == 0 {
		t.Fatal("a valid nonce after the refused ones was not sealed")
	}
}

// The bugs the nonce-sanitizer post is for, made as a user makes them, in the
// default configuration (Auto mode): a counter that restarts after 10^5 and
// 10^6 seals, a nonce variable reused after a refactor, two goroutines that
// share one IV variable.
func TestTheClassicBugsAreCaughtInTheDefaultMode(t *testing.T) {
	for _, seals := range []uint64{100_000, 1_000_000} {
		key := freshKey(t)
		var got []*Violation
		var mu sync.Mutex
		a, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, collect(&got, &mu))
		if err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < seals; i++ {
			a.Seal(nil, counterNonce(i), []byte("m"), nil)
		}
		if len(got) != 0 {
			t.Fatalf("%d false positives", len(got))
		}
		for i := uint64(0); i < 2000; i++ {
			if v := refused(t, a, counterNonce(i), []byte("m")); v == nil || v.Kind != Reuse {
				t.Fatalf("counter restarted after %d seals: %d not refused as reuse: %v", seals, i, v)
			}
		}
		if v := refused(t, a, counterNonce(seals/2), []byte("m")); v == nil {
			t.Fatalf("a nonce from the middle of %d seals sealed again", seals)
		}
	}
	// A nonce variable reused after a refactor, long after the first seals.
	key := freshKey(t)
	var got []*Violation
	var mu sync.Mutex
	a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, collect(&got, &mu))
	iv := make([]byte, 12)
	for i := range iv[:8] {
		iv[i] = 7
	}
	for i := uint32(0); i < 70_000; i++ {
		binary.BigEndian.PutUint32(iv[8:], i)
		a.Seal(nil, iv, []byte("m"), nil)
	}
	if v := refused(t, a, iv, []byte("m")); v == nil {
		t.Fatal("the same nonce twice in a row was sealed")
	}
	// Two goroutines sharing one IV variable: read, seal, bump (not atomic).
	key = freshKey(t)
	var n atomic.Int64
	a, _ = NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{OnViolation: func(error) { n.Add(1) }})
	var shared atomic.Uint64
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Go(func() {
			for j := 0; j < 50_000; j++ {
				a.Seal(nil, counterNonce(shared.Load()/2), []byte("m"), nil)
				shared.Add(1)
			}
		})
	}
	wg.Wait()
	if n.Load() != 50_000 {
		t.Fatalf("%d of 50,000 repeats refused", n.Load())
	}
}

// A repeat across two AEADs of one key is caught whatever the garbage
// collector did between them: the registry keeps a key's state for RetainFor
// after an AEAD of it was made (for the last RetainKeys keys), and past that
// bound the key starts afresh.
func TestCrossInstanceDetectionDoesNotDependOnTheCollector(t *testing.T) {
	key := freshKey(t)
	nonce := counterNonce(7)
	func() {
		a, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{OnViolation: func(error) {}})
		a.Seal(nil, nonce, []byte("first"), nil)
	}()
	for range 5 {
		runtime.GC()
	}
	var got []*Violation
	var mu sync.Mutex
	b, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, collect(&got, &mu))
	b.Seal(nil, nonce, []byte("second"), nil)
	if len(got) != 1 || got[0].Kind != Reuse {
		t.Fatalf("a repeat after the first AEAD was collected: %v", got)
	}
	// Past the bound: RetainKeys other keys made since, this one's AEADs gone
	// and collected — the key starts afresh.
	b = nil
	for range RetainKeys + 1 {
		k := freshKey(t)
		_ = New(gcm(t, k), "AES-256-GCM", k)
	}
	for range 5 {
		runtime.GC()
	}
	c, _ := NewWithConfig(gcm(t, key), "AES-256-GCM", key, collect(&got, &mu))
	c.Seal(nil, nonce, []byte("third"), nil)
	if len(got) != 1 {
		t.Fatalf("the state outlived its bound: %v", got)
	}
}

// State grows with use: a new key holds a few hundred bytes, a key that sealed
// a few messages not much more, and a grown window catches a repeat of any of
// the last Window nonces exactly as a full-size one (every nonce sealed while
// the windows grew is refused again afterwards).
func TestStateGrowsWithUseAndKeepsEveryNonce(t *testing.T) {
	key := freshKey(t)
	a, err := NewWithConfig(gcm(t, key), "AES-256-GCM", key, Config{Mode: Random, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m := a.MemoryBytes(); m != 0 {
		t.Fatalf("%d bytes before any seal", m)
	}
	random := func(i uint64) []byte {
		n := make([]byte, 12)
		binary.BigEndian.PutUint64(n[4:], i*0x9e3779b97f4a7c15)
		binary.BigEndian.PutUint32(n, uint32(i*0x2545f491))
		return n
	}
	msg := []byte("m")
	for i := range uint64(4) {
		a.Seal(nil, random(i), msg, nil)
	}
	if m := a.MemoryBytes(); m == 0 || m > 4096 {
		t.Fatalf("%d bytes after 4 seals", m)
	}
	// 1,000 nonces: each shard's window (1024) grew through several sizes.
	for i := uint64(4); i < 1000; i++ {
		a.Seal(nil, random(i), msg, nil)
	}
	for i := range uint64(1000) {
		if v := refused(t, a, random(i), msg); v == nil || v.Kind != Reuse {
			t.Fatalf("nonce %d sealed again: %v", i, v)
		}
	}
}
