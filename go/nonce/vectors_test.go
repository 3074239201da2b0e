// The shared vectors (testdata/vectors): layouts, generators on a manual
// clock, the ciphers' known answers.

package nonce

import (
	"bytes"
	"crypto/aes"
	"crypto/des"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nonceforge/nonceforge/go/internal/testvectors"
	"golang.org/x/crypto/blowfish"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type layoutRow struct {
	Bits      int    `json:"bits"`
	Timestamp uint64 `json:"timestamp_ms"`
	Machine   uint64 `json:"machine_id"`
	Counter   uint64 `json:"counter"`
	Hex       string `json:"hex"`
}

type generatorVectors struct {
	Clock   int64  `json:"clock_unix_ms"`
	Machine int    `json:"machine_id"`
	BaseKey string `json:"base_key_hex"`
	Counter []struct {
		Bits  int    `json:"bits"`
		Index uint64 `json:"index"`
		Hex   string `json:"hex"`
	} `json:"counter"`
	Encrypted []struct {
		Bits   int    `json:"bits"`
		Cipher string `json:"cipher"`
		Index  uint64 `json:"index"`
		Plain  string `json:"plain_hex"`
		Hex    string `json:"hex"`
	} `json:"encrypted"`
}

// nonces.json: the standard layout's rows and generator, and the wide
// layout's (layout_test.go).
type nonceVectors struct {
	Epoch     int64            `json:"epoch_unix_ms"`
	Layout    []layoutRow      `json:"layout"`
	Generator generatorVectors `json:"generator"`
	Wide      struct {
		Layout    []layoutRow      `json:"layout"`
		Generator generatorVectors `json:"generator"`
	} `json:"wide"`
}

func TestLayoutVectors(t *testing.T) {
	var v nonceVectors
	testvectors.Read(t, "nonces.json", &v)
	if v.Epoch != DefaultEpochUnixMilli {
		t.Fatalf("epoch %d", v.Epoch)
	}
	for _, c := range v.Layout {
		g := &Generator{machine: c.Machine}
		g.setLayout(Standard)
		var n Nonce
		g.compose(&n, c.Bits, c.Timestamp, c.Counter)
		if n.String() != c.Hex {
			t.Errorf("%d bits %d/%d/%d: got %s, want %s", c.Bits, c.Timestamp, c.Machine, c.Counter, n, c.Hex)
		}
		p, err := Decompose(unhex(t, c.Hex), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if p.UnixMilli != int64(c.Timestamp)+DefaultEpochUnixMilli || p.MachineID != int(c.Machine) || p.Counter != c.Counter {
			t.Errorf("Decompose(%s) = %+v", c.Hex, p)
		}
	}
	if len(v.Layout) < 15 {
		t.Fatalf("%d layout vectors", len(v.Layout))
	}
}

// A generator built when the manual clock reads the vectors' clock: counter
// nonce i of each size, and encrypted nonce i under each cipher.
func TestGeneratorVectors(t *testing.T) {
	var v nonceVectors
	testvectors.Read(t, "nonces.json", &v)
	gv := v.Generator
	key := unhex(t, gv.BaseKey)
	build := func(c64 Cipher64, c128 Cipher128) *Generator {
		g, err := New(Options{MachineID: Machine(gv.Machine), Key: key, Cipher64: c64, Cipher128: c128, Clock: newManual(gv.Clock)})
		if err != nil {
			t.Fatal(err)
		}
		if g.StartedUnixMilli() != gv.Clock+1 {
			t.Fatalf("started at %d, want the next millisecond %d", g.StartedUnixMilli(), gv.Clock+1)
		}
		return g
	}
	nth := func(g *Generator, kind Kind, bits int, i uint64) string {
		size := bits / 8
		buf := make([]byte, (i+1)*uint64(size))
		if err := g.Fill(kind, bits, buf); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(buf[i*uint64(size):])
	}
	for _, c := range gv.Counter {
		if got := nth(build("", ""), Counter, c.Bits, c.Index); got != c.Hex {
			t.Errorf("counter %d #%d: got %s, want %s", c.Bits, c.Index, got, c.Hex)
		}
	}
	// One by one agrees with a batch.
	g := build("", "")
	for i := range 3 {
		n, err := g.Counter(96)
		if err != nil {
			t.Fatal(err)
		}
		if want := nth(build("", ""), Counter, 96, uint64(i)); n.String() != want {
			t.Errorf("Counter(96) #%d = %s, want %s", i, n, want)
		}
	}
	ciphers := map[string][2]string{
		"speck64-128": {"speck64-128", ""}, "blowfish": {"blowfish", ""}, "3des": {"3des", ""},
		"speck96-144": {"", ""}, "aes256": {"", "aes256"}, "speck128-256": {"", "speck128-256"},
	}
	seen := map[string]bool{}
	for _, c := range gv.Encrypted {
		pick := ciphers[c.Cipher]
		g := build(Cipher64(pick[0]), Cipher128(pick[1]))
		if got := nth(g, Encrypted, c.Bits, c.Index); got != c.Hex {
			t.Errorf("%s #%d: got %s, want %s", c.Cipher, c.Index, got, c.Hex)
		}
		back, err := g.Decrypt(unhex(t, c.Hex))
		if err != nil || back.String() != c.Plain {
			t.Errorf("%s: Decrypt(%s) = %s, %v; want %s", c.Cipher, c.Hex, back, err, c.Plain)
		}
		seen[c.Cipher] = true
	}
	if len(seen) != 6 {
		t.Fatalf("ciphers covered: %v", seen)
	}
}

// The block ciphers against their published known answers.
func TestCipherKnownAnswers(t *testing.T) {
	var doc struct {
		Vectors []struct {
			Cipher, Source, Key, Plaintext, Ciphertext string
		} `json:"vectors"`
	}
	testvectors.Read(t, "ciphers.json", &doc)
	for _, v := range doc.Vectors {
		key, pt, want := unhex(t, v.Key), unhex(t, v.Plaintext), unhex(t, v.Ciphertext)
		got := make([]byte, len(pt))
		switch v.Cipher {
		case "speck64-128":
			b := newSpeck64(key).encrypt(beUint64(pt))
			got = be64(b)
		case "speck96-144":
			var b [12]byte
			copy(b[:], pt)
			newSpeck96(key).encrypt(&b)
			got = b[:]
		case "speck128-256":
			var b [16]byte
			copy(b[:], pt)
			newSpeck128(key).encrypt(&b)
			got = b[:]
		case "aes256":
			c, _ := aes.NewCipher(key)
			c.Encrypt(got, pt)
		case "blowfish":
			c, _ := blowfish.NewCipher(key)
			c.Encrypt(got, pt)
		case "3des":
			c, _ := des.NewTripleDESCipher(key)
			c.Encrypt(got, pt)
		default:
			t.Fatalf("unknown cipher %s", v.Cipher)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s (%s): got %x, want %x", v.Cipher, v.Source, got, want)
		}
	}
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, x := range b[:8] {
		v = v<<8 | uint64(x)
	}
	return v
}

func be64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[7-i] = byte(v >> (8 * i))
	}
	return b
}

func TestSpeckDecryptInvertsEncrypt(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	s64, s96, s128 := newSpeck64(key), newSpeck96(key), newSpeck128(key)
	for i := uint64(0); i < 2000; i++ {
		v := i * 0x9e3779b97f4a7c15
		if s64.decrypt(s64.encrypt(v)) != v {
			t.Fatalf("speck64 %x", v)
		}
		var b12 [12]byte
		var b16 [16]byte
		copy(b12[:], be64(v))
		copy(b16[4:], be64(v^i))
		w12, w16 := b12, b16
		s96.encrypt(&b12)
		s96.decrypt(&b12)
		s128.encrypt(&b16)
		s128.decrypt(&b16)
		if b12 != w12 || b16 != w16 {
			t.Fatalf("speck96/128 %x", v)
		}
	}
}

func TestEncryptIsDecryptsInverse(t *testing.T) {
	g, _ := New(Options{MachineID: Machine(4), Key: bytes.Repeat([]byte{7}, 32)})
	for _, bits := range []int{64, 96, 128} {
		e, _ := g.Encrypted(bits)
		p, err := g.Decrypt(e.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		again, err := g.Encrypt(p.Bytes())
		if err != nil || again != e {
			t.Fatalf("%d bits: Encrypt(Decrypt(e)) = %v, want %v (%v)", bits, again, e, err)
		}
	}
	if _, err := g.Encrypt(make([]byte, 5)); err == nil || !strings.Contains(err.Error(), "Encrypt") {
		t.Errorf("5 bytes: %v", err)
	}
	plain, _ := New(Options{MachineID: Machine(4)})
	if _, err := plain.Encrypt(make([]byte, 8)); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
}
