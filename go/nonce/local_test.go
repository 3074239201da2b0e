package nonce

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Locals in 8 goroutines, each also calling the shared generator, with a
// Local dropped mid-block now and then: every nonce of every kind and size is
// distinct, and encrypted ones decrypt to this generator's counter nonces.
func TestLocalsAreDistinct(t *testing.T) {
	g, err := New(Options{MachineID: Machine(5), Key: bytes.Repeat([]byte{2}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 12_000
	for _, kind := range []Kind{Counter, Encrypted} {
		for _, bits := range []int{64, 96, 128} {
			out := make([][]string, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					l := g.Local()
					for i := range each {
						var n Nonce
						var err error
						switch {
						case i%7 == 3:
							n, err = g.Next(kind, bits)
						case kind == Counter:
							n, err = l.Counter(bits)
						default:
							n, err = l.Encrypted(bits)
						}
						if err != nil {
							t.Error(err)
							return
						}
						if i%5000 == 4999 {
							l = g.Local() // the rest of the block is never issued
						}
						out[w] = append(out[w], n.String())
					}
				})
			}
			wg.Wait()
			requireDistinct(t, fmt.Sprintf("%v %d", kind, bits), out, workers*each)
		}
	}
	for _, bits := range []int{64, 96, 128} {
		n, _ := g.Local().Encrypted(bits)
		plain, err := g.Decrypt(n.AppendTo(nil))
		if err != nil {
			t.Fatal(err)
		}
		if p, err := g.Decompose(plain.AppendTo(nil)); err != nil || p.MachineID != 5 || p.UnixMilli < g.StartedUnixMilli() {
			t.Fatalf("decrypted local nonce of %d bits: %+v %v", bits, p, err)
		}
	}
}

// A Local keeps the 64-bit rate (8192 a millisecond, sleeping) and the
// deadline rule: checked at each block, and through the stop flag between.
func TestLocalRateAndDeadline(t *testing.T) {
	c := newManual(1_767_225_600_000)
	g, err := New(Options{MachineID: Machine(1), Clock: c, Key: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	l := g.Local()
	checkRate64(t, c, l.Counter)

	g.SetValidUntil(g.ClockUnixMilli() + 5)
	if _, err := l.Encrypted(128); err != nil {
		t.Fatal(err)
	}
	g.Disable()
	for _, f := range []func(int) (Nonce, error){l.Counter, l.Encrypted} {
		if _, err := f(128); !errors.Is(err, ErrDisabled) {
			t.Fatalf("disabled: %v", err)
		}
	}
	g.Enable()
	c.advance(6 * time.Millisecond)
	fresh := g.Local() // a new block reads the clock: past the deadline
	if _, err := fresh.Counter(96); !errors.Is(err, ErrDisabled) {
		t.Fatalf("a block past the deadline: %v", err)
	}
	if _, err := l.Counter(128); !errors.Is(err, ErrDisabled) {
		t.Fatalf("the stop flag after a clock read past the deadline: %v", err)
	}
}

func TestLocalBadInput(t *testing.T) {
	g, _ := New(Options{MachineID: Machine(1)})
	l := g.Local()
	var e *Error
	if _, err := l.Counter(100); !errors.As(err, &e) || e.Arg != "bits" {
		t.Fatalf("bits 100: %v", err)
	}
	if _, err := l.Encrypted(128); !errors.As(err, &e) || e.Arg != "Key" {
		t.Fatalf("no key: %v", err)
	}
}

// Speck64's four-lane path gives what the one-block path gives.
func TestSpeck64FourLanes(t *testing.T) {
	s := newSpeck64([]byte("0123456789abcdef"))
	for i := range uint64(1000) {
		v := [4]uint64{i, ^i, i * 0x9e3779b97f4a7c15, i << 40}
		want := [4]uint64{s.encrypt(v[0]), s.encrypt(v[1]), s.encrypt(v[2]), s.encrypt(v[3])}
		s.encrypt4(&v)
		if v != want {
			t.Fatalf("%d: %x, want %x", i, v, want)
		}
	}
}
