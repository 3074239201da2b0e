package nonce

// Side by side with the ids Go users pick (one goroutine unless -cpu says):
//   go test -run '^$' -bench . -benchmem -count 5 ./nonce/
// Classic b.N loops, ours and the peers' alike: b.Loop keeps every call out of
// line and its result alive, which here added ~17 ns to a 11 ns call.
// google/uuid NewV7, sony/sonyflake v2 NextID (its 39-bit 10 ms clock allows
// 256 ids per 10 ms per machine: it sleeps past that), crypto/rand 16 bytes.

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"

	guuid "github.com/google/uuid"
	"github.com/sony/sonyflake/v2"
)

func benchGen(b *testing.B) *Generator {
	g, err := New(Options{MachineID: Machine(1), Key: bytes.Repeat([]byte{3}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func BenchmarkCounter(b *testing.B) {
	for _, bits := range []int{64, 96, 128} {
		b.Run(itoa(bits), func(b *testing.B) {
			g := benchGen(b)
			var sink Nonce
			for i := 0; i < b.N; i++ {
				n, err := g.Counter(bits)
				if err != nil {
					b.Fatal(err)
				}
				sink = n
			}
			_ = sink
		})
	}
}

func BenchmarkSortable(b *testing.B) {
	for _, bits := range []int{64, 96, 128} {
		b.Run(itoa(bits), func(b *testing.B) {
			g := benchGen(b)
			for i := 0; i < b.N; i++ {
				if _, err := g.Sortable(bits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncrypted(b *testing.B) {
	for _, bits := range []int{64, 96, 128} {
		b.Run(itoa(bits), func(b *testing.B) {
			g := benchGen(b)
			for i := 0; i < b.N; i++ {
				if _, err := g.Encrypted(bits); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFillCounter96x4096(b *testing.B) {
	g := benchGen(b)
	buf := make([]byte, 12*4096)
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		if err := g.Fill(Counter, 96, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPeerGoogleUUIDNewV7(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := guuid.NewV7(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPeerSonyflakeNextID(b *testing.B) {
	sf, err := sonyflake.New(sonyflake.Settings{
		StartTime: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		MachineID: func() (int, error) { return 1, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if _, err := sf.NextID(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPeerCryptoRand16(b *testing.B) {
	var buf [16]byte
	for i := 0; i < b.N; i++ {
		if _, err := rand.Read(buf[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func itoa(n int) string {
	switch n {
	case 64:
		return "64"
	case 96:
		return "96"
	}
	return "128"
}

// One goroutine's handle (Local): blocks of ticks, encrypted nonces 8 at a time.
func BenchmarkLocalCounter(b *testing.B) {
	for _, bits := range []int{64, 96, 128} {
		b.Run(itoa(bits), func(b *testing.B) {
			l := benchGen(b).Local()
			var sink Nonce
			for i := 0; i < b.N; i++ {
				n, err := l.Counter(bits)
				if err != nil {
					b.Fatal(err)
				}
				sink = n
			}
			_ = sink
		})
	}
}

func BenchmarkLocalEncrypted(b *testing.B) {
	for _, bits := range []int{64, 96, 128} {
		b.Run(itoa(bits), func(b *testing.B) {
			l := benchGen(b).Local()
			var sink Nonce
			for i := 0; i < b.N; i++ {
				n, err := l.Encrypted(bits)
				if err != nil {
					b.Fatal(err)
				}
				sink = n
			}
			_ = sink
		})
	}
}

// With a deadline set, as a held lease sets one (Lease.Attach calls
// SetValidUntil at each renewal; nothing else of the lease touches the
// generator): the rates should not change.
func BenchmarkWithDeadline(b *testing.B) {
	gen := func(b *testing.B) *Generator {
		g := benchGen(b)
		g.SetValidUntil(g.ClockUnixMilli() + int64(time.Hour/time.Millisecond))
		return g
	}
	b.Run("counter/128", func(b *testing.B) {
		g := gen(b)
		for i := 0; i < b.N; i++ {
			if _, err := g.Counter(128); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sortable/128", func(b *testing.B) {
		g := gen(b)
		for i := 0; i < b.N; i++ {
			if _, err := g.Sortable(128); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encrypted/128", func(b *testing.B) {
		g := gen(b)
		for i := 0; i < b.N; i++ {
			if _, err := g.Encrypted(128); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local-encrypted/128", func(b *testing.B) {
		l := gen(b).Local()
		for i := 0; i < b.N; i++ {
			if _, err := l.Encrypted(128); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// All goroutines at once (-cpu sets how many): the shared counter's cache
// line against one Local per goroutine.
func BenchmarkParallelCounter128(b *testing.B) {
	b.Run("shared", func(b *testing.B) {
		g := benchGen(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := g.Counter(128); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("local", func(b *testing.B) {
		g := benchGen(b)
		b.RunParallel(func(pb *testing.PB) {
			l := g.Local()
			for pb.Next() {
				if _, err := l.Counter(128); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// 64-bit nonces in a burst: a generator that was idle for an hour has banked
// 3.6 s × 8192 a millisecond of counter values, and spends them at the speed
// of the code (as the Rust core's "burst" rows measure); sustained, 64-bit
// nonces are held to 8192 a millisecond (BenchmarkCounter/64).
func BenchmarkBurst64(b *testing.B) {
	for _, name := range []string{"counter", "encrypted", "local-counter", "local-encrypted"} {
		b.Run(name, func(b *testing.B) {
			c := newManual(1_767_225_600_000)
			g, err := New(Options{MachineID: Machine(1), Key: bytes.Repeat([]byte{3}, 32), Clock: c})
			if err != nil {
				b.Fatal(err)
			}
			c.advance(time.Hour)
			slept := c.sleptFor() // New waits for its first millisecond
			if uint64(b.N) > 3600*1000*8192 {
				b.Skip("more nonces than an hour banks")
			}
			l := g.Local()
			next := map[string]func(int) (Nonce, error){
				"counter": g.Counter, "encrypted": g.Encrypted, "local-counter": l.Counter, "local-encrypted": l.Encrypted,
			}[name]
			var sink Nonce
			for i := 0; i < b.N; i++ {
				n, err := next(64)
				if err != nil {
					b.Fatal(err)
				}
				sink = n
			}
			_ = sink
			if c.sleptFor() != slept {
				b.Fatalf("slept %v within the bank", c.sleptFor()-slept)
			}
		})
	}
}

// speckSink keeps the Speck benchmarks' results: the cipher is pure Go with no
// side effect, and with `_ = acc` the compiler dropped every round (the "one"
// row timed an empty loop of 27 steps, and moved 2x with the loop's alignment).
var speckSink uint64

func BenchmarkSpeck64(b *testing.B) {
	s := newSpeck64(make([]byte, 16))
	b.Run("one", func(b *testing.B) {
		var acc uint64
		for i := 0; i < b.N; i++ {
			acc += s.encrypt(uint64(i)) // independent inputs: calls overlap
		}
		speckSink = acc
	})
	b.Run("four-lanes", func(b *testing.B) {
		var acc uint64
		for i := 0; i < b.N; i++ {
			v := [4]uint64{uint64(i), uint64(i) + 1, uint64(i) + 2, uint64(i) + 3}
			s.encrypt4(&v)
			acc += v[0] ^ v[3]
		}
		speckSink = acc
	})
}
