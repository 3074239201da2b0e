package extid

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/nonceforge/nonceforge/go/internal/testvectors"
)

type vector struct {
	Type          string `json:"type"`
	Mode          string `json:"mode"`
	Rounds        int    `json:"rounds"`
	UUIDVersion   int    `json:"uuid_version"`
	InBand        bool   `json:"key_version_in_band"`
	KeyVersion    uint8  `json:"key_version"`
	Seq           uint64 `json:"seq"`
	Rand          uint64 `json:"rand"`
	DefaultCall   bool   `json:"default_call"`
	DerivedRand   uint64 `json:"derived_rand"`
	Derived       bool   `json:"derived"`
	Hex           string `json:"hex"`
	UUID          string `json:"uuid"`
	Base64URL     string `json:"base64url"`
	Base32        string `json:"base32"`
	Base32Checked string `json:"base32_prefixed_checked"`
}

// The shared vectors (written by testdata/vectors/make_extid.py, an
// independent implementation): every mode, every text form, both directions.
func TestVectors(t *testing.T) {
	var doc struct {
		Master  string   `json:"master_hex"`
		Rotated string   `json:"rotated_master_hex"`
		Vectors []vector `json:"vectors"`
	}
	testvectors.Read(t, "extid.json", &doc)
	master, _ := hex.DecodeString(doc.Master)
	rotated, _ := hex.DecodeString(doc.Rotated)
	modes := map[string]bool{}
	for _, v := range doc.Vectors {
		ring, err := NewKeyring(0, master)
		if err != nil {
			t.Fatal(err)
		}
		if err := ring.Add(3, rotated); err != nil {
			t.Fatal(err)
		}
		if err := ring.SetCurrent(v.KeyVersion); err != nil {
			t.Fatal(err)
		}
		c, err := New(ring, v.Type, Options{Mode: v.Mode, Rounds: v.Rounds, UUIDVersion: v.UUIDVersion, KeyVersionOutBand: !v.InBand})
		if err != nil {
			t.Fatal(err)
		}
		id, err := c.Encode(v.Seq, v.Rand)
		if err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if hex.EncodeToString(id[:]) != v.Hex {
			t.Errorf("%s %s r%d v%d: got %x, want %s", v.Type, v.Mode, v.Rounds, v.UUIDVersion, id, v.Hex)
			continue
		}
		if id.String() != v.UUID || id.Base64URL() != v.Base64URL || id.Base32("", false) != v.Base32 || id.Base32(v.Type, true) != v.Base32Checked {
			t.Errorf("%s: text forms %s %s %s %s", v.Hex, id, id.Base64URL(), id.Base32("", false), id.Base32(v.Type, true))
		}
		for form, parse := range map[string]func() (ID, error){
			"uuid":      func() (ID, error) { return ParseUUID(v.UUID) },
			"UUID":      func() (ID, error) { return ParseUUID(strings.ToUpper(v.UUID)) },
			"base64url": func() (ID, error) { return ParseBase64URL(v.Base64URL) },
			"base32":    func() (ID, error) { return ParseBase32(v.Base32, "", false) },
			"checked":   func() (ID, error) { return ParseBase32(v.Base32Checked, v.Type, true) },
		} {
			got, err := parse()
			if err != nil || got != id {
				t.Errorf("%s: parse %s: %x, %v", v.Hex, form, got, err)
			}
		}
		d, err := c.DecodeUnverified(id)
		if err != nil {
			t.Fatal(err)
		}
		if !v.InBand || v.Mode != "feistel-uuid" {
			d, err = c.DecodeUnverifiedWithKeyVersion(id, v.KeyVersion)
			if err != nil {
				t.Fatal(err)
			}
		}
		if d.Seq != v.Seq || d.Rand != v.Rand || d.KeyVersion != v.KeyVersion || c.IsDerived(d) != v.Derived {
			t.Errorf("%s: decoded %+v", v.Hex, d)
		}
		if got := c.DerivedRand(v.Seq); got != v.DerivedRand {
			t.Errorf("%s: DerivedRand(%d) = %d, want %d", v.Hex, v.Seq, got, v.DerivedRand)
		}
		if v.DefaultCall {
			if got, err := c.EncodeSeq(v.Seq); err != nil || got != id {
				t.Errorf("%s: EncodeSeq(%d) = %x, %v", v.Hex, v.Seq, got, err)
			}
		}
		modes[v.Mode] = true
	}
	if len(modes) != 3 || len(doc.Vectors) < 60 {
		t.Fatalf("%d vectors over %v", len(doc.Vectors), modes)
	}
}

// TypeID spec v0.3.0's published cases (testdata/vectors/typeid.json).
func TestTypeID(t *testing.T) {
	var doc struct {
		Valid []struct {
			Name, TypeID, Prefix, UUID string
		} `json:"valid"`
		Invalid []struct {
			Name, TypeID string
		} `json:"invalid"`
	}
	testvectors.Read(t, "typeid.json", &doc)
	if len(doc.Valid) != 9 || len(doc.Invalid) != 19 {
		t.Fatalf("%d valid, %d invalid", len(doc.Valid), len(doc.Invalid))
	}
	for _, c := range doc.Valid {
		want, err := ParseUUID(c.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Prefix != "" {
			if err := CheckTypeName(c.Prefix); err != nil {
				t.Errorf("%s: %v", c.Name, err)
			}
		}
		got, err := ParseBase32(c.TypeID, c.Prefix, false)
		if err != nil || got != want {
			t.Errorf("%s: %x, %v", c.Name, got, err)
		}
		if s := want.Base32(c.Prefix, false); s != c.TypeID {
			t.Errorf("%s: encoded %s", c.Name, s)
		}
	}
	for _, c := range doc.Invalid {
		if _, err := ParseBase32(c.TypeID, "", false); err == nil {
			t.Errorf("%s: %q parsed without a prefix", c.Name, c.TypeID)
		}
		if at := strings.LastIndexByte(c.TypeID, '_'); at >= 0 && CheckTypeName(c.TypeID[:at]) == nil {
			if _, err := ParseBase32(c.TypeID, c.TypeID[:at], false); err == nil {
				t.Errorf("%s: %q parsed with its prefix", c.Name, c.TypeID)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	if _, err := NewKeyring(0, key[:31]); err == nil {
		t.Error("a 31-byte master key")
	}
	if _, err := NewKeyring(16, key); err == nil {
		t.Error("key version 16")
	}
	ring, _ := NewKeyring(0, key)
	if err := ring.Add(0, key); err == nil {
		t.Error("key version taken twice")
	}
	if err := ring.SetCurrent(5); err == nil {
		t.Error("current set to a missing version")
	}
	for _, name := range []string{"", "User", "_user", "user_", "us3r", strings.Repeat("a", 64)} {
		if _, err := New(ring, name, Options{}); err == nil {
			t.Errorf("type name %q", name)
		}
	}
	for _, o := range []Options{{Mode: "des"}, {Rounds: 3}, {UUIDVersion: 7}} {
		if _, err := New(ring, "user", o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	c, _ := New(ring, "user", Options{})
	if _, err := c.Encode(1<<56, 0); err == nil || !strings.Contains(err.Error(), "seq") {
		t.Errorf("seq 2^56: %v", err)
	}
	if _, err := c.Encode(0, 1<<62); err == nil || !strings.Contains(err.Error(), "rand") {
		t.Errorf("rand 2^62: %v", err)
	}
	id, _ := c.Encode(1, 1)
	v7 := id
	v7[6] = v7[6]&0x0f | 0x70
	if _, err := c.Decode(v7); err == nil || !strings.Contains(err.Error(), "version 8") {
		t.Errorf("a version-7 UUID: %v", err)
	}
	for _, tc := range []struct {
		parse func() error
		pos   int
	}{
		{func() error { _, e := ParseUUID("0123"); return e }, 4},
		{func() error { _, e := ParseUUID(strings.Replace(id.String(), "-", "x", 1)); return e }, 8},
		{func() error { _, e := ParseUUID(id.String()[:35] + "g"); return e }, 35},
		{func() error { _, e := ParseBase64URL("jFuExNK2jxyFoWwwgCWR-B"); return e }, 21},
		{func() error { _, e := ParseBase64URL("jFuExNK2jxyFoWwwgCWR+A"); return e }, 20},
		{func() error { _, e := ParseBase32("8cbe2c9mnphwe8b8bc6202b4fr", "", false); return e }, 0},
		{func() error { _, e := ParseBase32("4cbe2c9mnphwe8b8bc6202b4fR", "", false); return e }, 25},
		{func() error { _, e := ParseBase32("user_4cbe2c9mnphwe8b8bc6202b4fr2", "user", true); return e }, 31},
		{func() error { _, e := ParseBase32("4cbe2c9mnphwe8b8bc6202b4fr", "user", false); return e }, 0},
	} {
		err := tc.parse()
		var e *Error
		if !errors.As(err, &e) || e.Position != tc.pos || e.Rule == "" {
			t.Errorf("want a parse error at %d, got %v", tc.pos, err)
		}
	}
	if _, err := ParseBase32("order_4cbe2c9mnphwe8b8bc6202b4fr", "user", false); !errors.Is(err, ErrWrongType) {
		t.Errorf("another type's id: %v", err)
	}
}

// Batches give what one call at a time gives, for every mode, every length
// up to 20 (whole and partial groups of 8) and ids of two key versions.
func TestBatchesMatchSingleCalls(t *testing.T) {
	ring, _ := NewKeyring(3, bytes.Repeat([]byte{7}, 32))
	if err := ring.Add(9, bytes.Repeat([]byte{8}, 32)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4, KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		old, err := New(ring, "order", o)
		if err != nil {
			t.Fatal(err)
		}
		if err := ring.SetCurrent(9); err != nil {
			t.Fatal(err)
		}
		c, err := New(ring, "order", o)
		ring.SetCurrent(3)
		if err != nil {
			t.Fatal(err)
		}
		for n := range 21 {
			in := make([]Pair, n)
			for i := range in {
				in[i] = Pair{Seq: uint64(i*i*977 + 1), Rand: uint64(i+1) * 0x9e3779b97f4a7c15 & (c.MaxRand())}
			}
			out := make([]ID, n)
			if err := c.EncodeBatch(in, out); err != nil {
				t.Fatal(err)
			}
			for i, p := range in {
				want, _ := c.Encode(p.Seq, p.Rand)
				if out[i] != want {
					t.Fatalf("%+v n=%d: id %d: batch %x, single %x", o, n, i, out[i], want)
				}
			}
			// Every other id made under the older key: still decoded (in band).
			if c.inBand {
				for i := 0; i < n; i += 2 {
					out[i], _ = old.Encode(in[i].Seq, in[i].Rand)
				}
			}
			dec := make([]Decoded, n)
			if err := c.DecodeUnverifiedBatch(out, dec); err != nil {
				t.Fatal(err)
			}
			for i, id := range out {
				want, err := c.DecodeUnverified(id)
				if err != nil || dec[i] != want || dec[i].Seq != in[i].Seq || dec[i].Rand != in[i].Rand {
					t.Fatalf("%+v n=%d: id %d: batch %+v, single %+v (%v), input %+v", o, n, i, dec[i], want, err, in[i])
				}
			}
		}
	}
}

// A bad input anywhere: a typed error naming it, and nothing written.
func TestBatchBadInput(t *testing.T) {
	ring, _ := NewKeyring(1, bytes.Repeat([]byte{7}, 32))
	c, _ := New(ring, "order", Options{})
	in := []Pair{{1, 5}, {2, 6}, {1 << 60, 7}, {4, 8}}
	out := make([]ID, 4)
	var e *Error
	if err := c.EncodeBatch(in, out); !errors.As(err, &e) || e.Arg != "in[2].Seq" {
		t.Fatalf("seq above the range: %v", err)
	}
	// Pair{Seq: s} leaves a zero random half: refused, not a constant half.
	if err := c.EncodeBatch([]Pair{{Seq: 1, Rand: 5}, {Seq: 2}}, out[:2]); !errors.As(err, &e) || e.Arg != "in[1].Rand" || !strings.Contains(err.Error(), "EncodeSeqBatch") {
		t.Fatalf("a zero random half: %v", err)
	}
	if out[0] != (ID{}) {
		t.Fatal("half-written output")
	}
	in[2].Seq = 3
	if err := c.EncodeBatch(in, out[:3]); !errors.As(err, &e) || e.Arg != "out" {
		t.Fatalf("short output: %v", err)
	}
	if err := c.EncodeBatch(in, out); err != nil {
		t.Fatal(err)
	}
	out[1][6] ^= 0x10 // UUID version 9
	dec := make([]Decoded, 4)
	if err := c.DecodeBatch(out, dec); !errors.As(err, &e) || e.Arg != "ids[1]" || e.Op != "DecodeBatch" {
		t.Fatalf("a bad id: %v", err)
	}
	if dec[0] != (Decoded{}) {
		t.Fatal("half-written output")
	}
	if err := c.DecodeBatch(out, dec[:1]); !errors.As(err, &e) || e.Arg != "out" {
		t.Fatalf("short output: %v", err)
	}
}

func TestUUIDVersionCheckedBeforeNarrowing(t *testing.T) {
	ring, _ := NewKeyring(0, []byte(strings.Repeat("k", 32)))
	for _, v := range []int{264, 260, -4, 7, 256} {
		if _, err := New(ring, "user", Options{UUIDVersion: v}); err == nil || !strings.Contains(err.Error(), "UUIDVersion") {
			t.Errorf("UUIDVersion %d: %v", v, err)
		}
	}
}

func TestParseAnyFormCheckIssuedAndEncodings(t *testing.T) {
	ring, _ := NewKeyring(0, []byte(strings.Repeat("k", 32)))
	c, _ := New(ring, "user", Options{})
	id, _ := c.Encode(42, 7)
	for _, text := range []string{id.String(), strings.ToUpper(id.String()), id.Base64URL(), id.Base32("", false), id.Base32("user", false), id.Base32("", true), id.Base32("user", true)} {
		got, err := c.Parse(text)
		if err != nil || got != id {
			t.Errorf("Parse(%q) = %v, %v", text, got, err)
		}
	}
	other, _ := New(ring, "order", Options{})
	if _, err := other.Parse(id.Base32("user", false)); !errors.Is(err, ErrWrongType) {
		t.Errorf("another type's prefix: %v", err)
	}
	for _, bad := range []string{"", "x", strings.Repeat("z", 22), id.String()[:35] + "g"} {
		if _, err := c.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	d, _ := c.DecodeUnverified(id)
	if err := d.CheckIssued(42); err != nil {
		t.Error(err)
	}
	if err := d.CheckIssued(41); !errors.Is(err, ErrNotIssued) || !strings.HasPrefix(err.Error(), "extid: ") {
		t.Errorf("CheckIssued(41): %v", err)
	}
	j, err := json.Marshal(map[string]ID{"id": id})
	if err != nil || string(j) != `{"id":"`+id.String()+`"}` {
		t.Fatalf("json: %s %v", j, err)
	}
	var back map[string]ID
	if err := json.Unmarshal(j, &back); err != nil || back["id"] != id {
		t.Fatalf("json back: %v", err)
	}
	var s1, s2 ID
	v, _ := id.Value()
	if err := s1.Scan(v); err != nil || s1 != id {
		t.Fatalf("Scan(text): %v", err)
	}
	if err := s2.Scan(id[:]); err != nil || s2 != id {
		t.Fatalf("Scan(bytes): %v", err)
	}
	if err := s2.Scan(3.5); err == nil {
		t.Error("Scan(3.5) accepted")
	}
	if err := s2.UnmarshalBinary(id[:15]); err == nil {
		t.Error("15 bytes accepted")
	}
}

func must(id ID, err error) ID {
	if err != nil {
		panic(err)
	}
	return id
}

// The self-check refuses an id miscomputed as faulty hardware would, in every
// mode, one id or a batch, and returns nothing: a bit flipped on the way out;
// faulty expanded keys (encoding and decoding with them agree, so a check on
// the same copy is blind: the check runs on a second copy); a faulty derived
// half (the id decodes to it, so only recomputing it shows).
func TestSelfCheckRefusesAMiscomputedId(t *testing.T) {
	ring, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	other, _ := NewKeyring(0, bytes.Repeat([]byte{0x24}, 32))
	for _, mode := range []string{"feistel-uuid", "aes128", "cycle-walk"} {
		checked := func() SelfChecked {
			c, err := NewSelfChecked(ring, "user", Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := checked()
		plain, _ := New(ring, "user", Options{Mode: mode})
		if a, b := must(c.Encode(5, 9)), must(plain.Encode(5, 9)); a != b {
			t.Fatalf("%s: the check changed the id", mode)
		}
		if a, b := must(c.EncodeSeq(5)), must(plain.EncodeSeq(5)); a != b {
			t.Fatalf("%s: the check changed the derived id", mode)
		}
		in := []Pair{{1, 2}, {3, 4}}
		out := make([]ID, 2)
		if err := c.EncodeBatch(in, out); err != nil {
			t.Fatal(err)
		}
		if err := c.EncodeSeqBatch([]uint64{1, 3}, out); err != nil || out[1] != must(plain.EncodeSeq(3)) {
			t.Fatal(err)
		}
		refused := func(c SelfChecked, what string) {
			t.Helper()
			if id, err := c.EncodeSeq(7); !errors.Is(err, ErrSelfCheck) || id != (ID{}) {
				t.Fatalf("%s, %s: EncodeSeq: %x, %v", mode, what, id, err)
			}
			out := make([]ID, 2)
			if err := c.EncodeSeqBatch([]uint64{1, 3}, out); !errors.Is(err, ErrSelfCheck) || out[0] != (ID{}) || out[1] != (ID{}) {
				t.Fatalf("%s, %s: EncodeSeqBatch: %v %x", mode, what, err, out)
			}
		}
		c = checked()
		c.check.fault = true
		if id, err := c.Encode(5, 9); !errors.Is(err, ErrSelfCheck) || id != (ID{}) {
			t.Fatalf("%s: %x, %v", mode, id, err)
		}
		if err := c.EncodeBatch(in, out); !errors.Is(err, ErrSelfCheck) || out[0] != (ID{}) || out[1] != (ID{}) {
			t.Fatalf("%s: batch: %v %x", mode, err, out)
		}
		refused(c, "a flipped bit")
		faulty, _ := New(other, "user", Options{Mode: mode})
		c = checked()
		c.Codec.keys[0] = faulty.keys[0]
		if d, err := c.Codec.DecodeUnverified(must(c.Codec.EncodeSeq(7))); err != nil || d.Seq != 7 {
			t.Fatalf("%s: the same copy should be blind: %+v %v", mode, d, err)
		}
		if _, err := c.Encode(5, 9); !errors.Is(err, ErrSelfCheck) {
			t.Fatalf("%s: faulty keys: %v", mode, err)
		}
		refused(c, "faulty keys")
		c = checked()
		k := *c.Codec.keys[0]
		k.rand = faulty.keys[0].rand
		c.Codec.keys[0] = &k
		refused(c, "a faulty derived half")
	}
}

// The derived batch calls equal the calls one at a time, in every layout,
// across a rotation (older ids resolve as DecodeSeq resolves them), and refuse
// as they refuse, naming the id and writing nothing.
func TestDerivedBatches(t *testing.T) {
	ring, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	rotated, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	rotated.Add(1, bytes.Repeat([]byte{0x43}, 32))
	rotated.SetCurrent(1)
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		old, _ := New(ring, "user", o)
		c, _ := New(rotated, "user", o)
		for _, n := range []int{0, 1, 7, 8, 9, 300} {
			seqs := make([]uint64, n)
			for i := range seqs {
				seqs[i] = uint64(i*i*977+i) & c.MaxSeq()
			}
			ids := make([]ID, n)
			if err := c.EncodeSeqBatch(seqs, ids); err != nil {
				t.Fatal(err)
			}
			for i, s := range seqs {
				if ids[i] != must(c.EncodeSeq(s)) {
					t.Fatalf("%+v n=%d: id %d differs from EncodeSeq", o, n, i)
				}
				if i%3 == 0 {
					ids[i] = must(old.EncodeSeq(s))
				}
			}
			got := make([]uint64, n)
			if err := c.DecodeSeqBatch(ids, got); err != nil {
				t.Fatalf("%+v n=%d: %v", o, n, err)
			}
			for i := range seqs {
				if got[i] != seqs[i] {
					t.Fatalf("%+v n=%d: seq %d: %d", o, n, i, got[i])
				}
			}
			if n > 4 {
				ids[4] = must(c.Encode(seqs[4], c.DerivedRand(seqs[4])^1))
				got := make([]uint64, n)
				err := c.DecodeSeqBatch(ids, got)
				if !errors.Is(err, ErrNotDerived) || !strings.Contains(err.Error(), "ids[4]") || got[0] != 0 {
					t.Fatalf("%+v: a stored-half id in the batch: %v", o, err)
				}
			}
		}
		var e *Error
		if err := c.EncodeSeqBatch([]uint64{1, c.MaxSeq() + 1}, make([]ID, 2)); c.MaxSeq() < math.MaxUint64 && (!errors.As(err, &e) || e.Arg != "seqs[1]") {
			t.Fatalf("%+v: seq above the range: %v", o, err)
		}
		if err := c.DecodeSeqBatch(make([]ID, 2), make([]uint64, 1)); !errors.As(err, &e) || e.Arg != "out" {
			t.Fatalf("%+v: short output: %v", o, err)
		}
	}
}

// Parse reads back every text form of every type name length 1..63 (some with
// underscores), with and without prefix and check character: the 36-character
// base32 forms (a 9-letter type with its prefix) included.
func TestParseReadsEveryFormBack(t *testing.T) {
	ring, _ := NewKeyring(0, []byte(strings.Repeat("k", 32)))
	for n := 1; n <= 63; n++ {
		letters := make([]byte, n)
		for i := range letters {
			letters[i] = 'a' + byte(i%26)
		}
		names := []string{string(letters)}
		if n >= 3 {
			names = append(names, string(letters[:1])+"_"+string(letters[2:]))
		}
		for _, name := range names {
			c, err := New(ring, name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			id := must(c.EncodeSeq(uint64(n)))
			for _, text := range []string{id.String(), id.Base64URL(), id.Base32("", false), id.Base32("", true), id.Base32(name, false), id.Base32(name, true)} {
				if got, err := c.Parse(text); err != nil || got != id {
					t.Errorf("%s: Parse(%q) = %v, %v", name, text, got, err)
				}
			}
		}
	}
}

// The obvious decode is the checked one, in every layout: Decode,
// DecodeWithKeyVersion and DecodeBatch refuse an id made with a stored random
// half, DecodeUnverified reads it.
func TestTheObviousDecodeIsTheCheckedOne(t *testing.T) {
	ring, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		c, _ := New(ring, "user", o)
		derived, stored := must(c.EncodeSeq(42)), must(c.Encode(42, 7))
		d, err := c.Decode(derived)
		if err != nil || d.Seq != 42 || d.Rand != c.DerivedRand(42) {
			t.Fatalf("%+v: %+v %v", o, d, err)
		}
		if d, err := c.Decode(stored); !errors.Is(err, ErrNotDerived) || d != (Decoded{}) || strings.Contains(err.Error(), "42") {
			t.Fatalf("%+v: a stored half: %+v %v", o, d, err)
		}
		if d, err := c.DecodeUnverified(stored); err != nil || d.Rand != 7 {
			t.Fatalf("%+v: unverified: %+v %v", o, d, err)
		}
		if _, err := c.DecodeWithKeyVersion(stored, 0); !errors.Is(err, ErrNotDerived) {
			t.Fatalf("%+v: with a version: %v", o, err)
		}
		out := make([]Decoded, 2)
		if err := c.DecodeBatch([]ID{derived, stored}, out); !errors.Is(err, ErrNotDerived) || !strings.Contains(err.Error(), "ids[1]") || out[0] != (Decoded{}) {
			t.Fatalf("%+v: batch: %v", o, err)
		}
		if err := c.DecodeBatch([]ID{derived, derived}, out); err != nil || out[1] != d {
			t.Fatalf("%+v: batch: %v", o, err)
		}
	}
}

// The package documentation's parsing claims: the UUID form reads upper case
// (RFC 9562), base32 does not (TypeID: one spelling per value).
func TestUpperCase(t *testing.T) {
	ring, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	c, _ := New(ring, "user", Options{})
	id := must(c.EncodeSeq(42))
	if got, err := ParseUUID(strings.ToUpper(id.String())); err != nil || got != id {
		t.Fatalf("upper-case UUID: %x %v", got, err)
	}
	if _, err := ParseBase32(strings.ToUpper(id.Base32("", false)), "", false); err == nil {
		t.Fatal("upper-case base32 accepted")
	}
}
