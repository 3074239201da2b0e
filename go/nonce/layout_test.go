// The wide layout (16-bit machine ids) against the shared vectors' "wide"
// section, and what it refuses.

package nonce

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/internal/testvectors"
)

func TestWideLayoutVectors(t *testing.T) {
	var v nonceVectors
	testvectors.Read(t, "nonces.json", &v)
	if len(v.Wide.Layout) < 12 {
		t.Fatalf("%d wide layout vectors", len(v.Wide.Layout))
	}
	for _, c := range v.Wide.Layout {
		g := &Generator{machine: c.Machine}
		g.setLayout(Wide)
		var n Nonce
		g.compose(&n, c.Bits, c.Timestamp, c.Counter)
		if n.String() != c.Hex {
			t.Errorf("%d bits %d/%d/%d: got %s, want %s", c.Bits, c.Timestamp, c.Machine, c.Counter, n, c.Hex)
		}
		p, err := Wide.Decompose(unhex(t, c.Hex), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if p.UnixMilli != int64(c.Timestamp)+DefaultEpochUnixMilli || p.MachineID != int(c.Machine) || p.Counter != c.Counter {
			t.Errorf("Wide.Decompose(%s) = %+v", c.Hex, p)
		}
	}
}

func TestWideGeneratorVectors(t *testing.T) {
	var v nonceVectors
	testvectors.Read(t, "nonces.json", &v)
	gv := v.Wide.Generator
	build := func(c128 Cipher128) *Generator {
		g, err := New(Options{MachineID: Machine(gv.Machine), Layout: Wide, Key: unhex(t, gv.BaseKey), Cipher128: c128, Clock: newManual(gv.Clock)})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, c := range gv.Counter {
		size := uint64(c.Bits / 8)
		buf := make([]byte, (c.Index+1)*size)
		if err := build("").Fill(Counter, c.Bits, buf); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(buf[c.Index*size:]); got != c.Hex {
			t.Errorf("Fill counter %d #%d: got %s, want %s", c.Bits, c.Index, got, c.Hex)
		}
		// One call at a time, and a Local, agree.
		g, l := build(""), build("").Local()
		var one, local Nonce
		for range c.Index + 1 {
			one, _ = g.Counter(c.Bits)
			local, _ = l.Counter(c.Bits)
		}
		if one.String() != c.Hex || local.String() != c.Hex {
			t.Errorf("counter %d #%d: one by one %s, Local %s, want %s", c.Bits, c.Index, one, local, c.Hex)
		}
		p, err := g.Decompose(one.Bytes())
		if err != nil || p.MachineID != gv.Machine {
			t.Errorf("Decompose(%s) = %+v, %v", one, p, err)
		}
	}
	for _, c := range gv.Encrypted {
		c128 := Cipher128("")
		if c.Bits == 128 {
			c128 = Cipher128(c.Cipher)
		}
		g := build(c128)
		size := uint64(c.Bits / 8)
		buf := make([]byte, (c.Index+1)*size)
		if err := g.Fill(Encrypted, c.Bits, buf); err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(buf[c.Index*size:]); got != c.Hex {
			t.Errorf("%s #%d: got %s, want %s", c.Cipher, c.Index, got, c.Hex)
		}
		back, err := g.Decrypt(unhex(t, c.Hex))
		if err != nil || back.String() != c.Plain {
			t.Errorf("%s: Decrypt = %s, %v; want %s", c.Cipher, back, err, c.Plain)
		}
	}
}

func TestWideLayoutRefuses64BitsOnEveryPath(t *testing.T) {
	g, err := New(Options{MachineID: Machine(40_000), Layout: Wide, Key: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	l := g.Local()
	calls := map[string]func() error{
		"Counter":         func() error { _, err := g.Counter(64); return err },
		"Sortable":        func() error { _, err := g.Sortable(64); return err },
		"Encrypted":       func() error { _, err := g.Encrypted(64); return err },
		"Fill":            func() error { return g.Fill(Counter, 64, make([]byte, 16)) },
		"Fill empty":      func() error { return g.Fill(Encrypted, 64, nil) },
		"Local.Counter":   func() error { _, err := l.Counter(64); return err },
		"Local.Encrypted": func() error { _, err := l.Encrypted(64); return err },
		"Local.Sortable":  func() error { _, err := l.Sortable(64); return err },
		"Encrypt":         func() error { _, err := g.Encrypt(make([]byte, 8)); return err },
		"Decrypt":         func() error { _, err := g.Decrypt(make([]byte, 8)); return err },
		"Decompose":       func() error { _, err := g.Decompose(make([]byte, 8)); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrWideLayoutNo64) || !strings.Contains(err.Error(), "96 or 128") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !g.Enabled() || g.Stats().Refused != [5]uint64{} {
		t.Errorf("a working generator, nothing refused: enabled %v, %+v", g.Enabled(), g.Stats().Refused)
	}
	for _, bits := range []int{96, 128} {
		if _, err := g.Counter(bits); err != nil {
			t.Errorf("Counter(%d): %v", bits, err)
		}
	}
}

func TestMachineIDsFitTheirLayout(t *testing.T) {
	if _, err := New(Options{MachineID: Machine(512)}); err == nil || !strings.Contains(err.Error(), "needs the wide layout") {
		t.Errorf("512, standard: %v", err)
	}
	if _, err := New(Options{MachineID: Machine(65_536), Layout: Wide}); err == nil || !strings.Contains(err.Error(), "0..65535") {
		t.Errorf("65536, wide: %v", err)
	}
	if _, err := New(Options{MachineID: Machine(1), Layout: Layout(7)}); err == nil || !strings.Contains(err.Error(), "Layout") {
		t.Errorf("Layout(7): %v", err)
	}
	for _, name := range []string{"standard", "wide"} {
		l, err := ParseLayout(name)
		if err != nil || l.String() != name {
			t.Errorf("ParseLayout(%q) = %v, %v", name, l, err)
		}
	}
	if _, err := ParseLayout("Wide16"); err == nil || !strings.Contains(err.Error(), `"standard"`) {
		t.Errorf("ParseLayout(Wide16): %v", err)
	}
}

// Two goroutines on one wide generator (one a Local, one batches), a manual
// clock moving: every value distinct, each decoding to the machine id.
func TestWideUniqueUnderConcurrency(t *testing.T) {
	for _, kind := range []Kind{Counter, Sortable, Encrypted} {
		for _, bits := range []int{96, 128} {
			clock := newManual(1_767_225_600_000)
			g, err := New(Options{MachineID: Machine(65_535), Layout: Wide, Key: make([]byte, 32), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			const per = 200_000
			out := [2][]string{}
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				l := g.Local()
				for range per {
					var n Nonce
					var err error
					switch kind {
					case Counter:
						n, err = l.Counter(bits)
					case Sortable:
						n, err = l.Sortable(bits)
					default:
						n, err = l.Encrypted(bits)
					}
					if err != nil {
						t.Error(err)
						return
					}
					out[0] = append(out[0], string(n.Bytes()))
				}
			}()
			go func() {
				defer wg.Done()
				buf := make([]byte, 1000*bits/8)
				for len(out[1]) < per {
					if err := g.Fill(kind, bits, buf); err != nil {
						t.Error(err)
						return
					}
					for j := 0; j < len(buf); j += bits / 8 {
						out[1] = append(out[1], string(buf[j:j+bits/8]))
					}
					clock.advance(time.Millisecond)
				}
			}()
			wg.Wait()
			requireDistinct(t, fmt.Sprintf("%v %d", kind, bits), out[:], 2*per)
			if kind != Encrypted {
				p, err := g.Decompose([]byte(out[0][per-1]))
				if err != nil || p.MachineID != 65_535 {
					t.Errorf("%v %d: %+v, %v", kind, bits, p, err)
				}
			}
		}
	}
}
