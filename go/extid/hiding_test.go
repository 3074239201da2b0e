// What the ids and the errors hide: the default call's statistics, refusal
// texts, printed keys, long type names.

package extid

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The call without a random half: ids of small sequence numbers share no
// 4-byte prefix and no two show the XOR of their sequence numbers in the
// visible half — unlike a constant random half, where both show (checked
// too, so the test can tell).
func TestTheDefaultCallLeaksNothing(t *testing.T) {
	ring, _ := NewKeyring(0, bytes.Repeat([]byte{0x42}, 32))
	lHalf := func(id ID) uint64 {
		hi := binary.BigEndian.Uint64(id[:8])
		return (hi>>16)<<12 | hi&0xfff
	}
	leaks := func(c *Codec, encode func(uint64) (ID, error)) (prefixes int, xors int) {
		seen := map[[4]byte]bool{}
		var ids []ID
		for s := uint64(1); s <= 1000; s++ {
			id, err := encode(s)
			if err != nil {
				t.Fatal(err)
			}
			seen[[4]byte(id[:4])] = true
			ids = append(ids, id)
		}
		for i := range 200 {
			for j := i + 1; j < 200; j++ {
				if (lHalf(ids[i])^lHalf(ids[j]))&0xfffffff == uint64((i+1)^(j+1)) {
					xors++
				}
			}
		}
		return len(seen), xors
	}
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		c, err := New(ring, "user", o)
		if err != nil {
			t.Fatal(err)
		}
		if p, x := leaks(c, c.EncodeSeq); p != 1000 || x != 0 {
			t.Errorf("%+v: %d distinct prefixes of 1000, %d pairs show their XOR", o, p, x)
		}
		if seq, err := c.DecodeSeq(must(c.EncodeSeq(77))); seq != 77 || err != nil {
			t.Errorf("%+v: DecodeSeq: %d, %v", o, seq, err)
		}
		d, _ := c.DecodeUnverified(must(c.Encode(77, 5)))
		if _, err := c.DecodeSeq(must(c.Encode(77, 5))); c.IsDerived(d) || !errors.Is(err, ErrNotDerived) {
			t.Errorf("%+v: a given random half passes as derived: %+v, %v", o, d, err)
		}
	}
	c, _ := New(ring, "user", Options{})
	p, x := leaks(c, func(s uint64) (ID, error) { return c.Encode(s, 0) })
	if p > 16 || x != 200*199/2 {
		t.Fatalf("a constant random half: %d distinct prefixes, %d pairs show their XOR", p, x)
	}
}

// No refusal's text names what the id hides: the decoded sequence number (the
// true one, for an id made with a stored random half), the highest issued (a
// row count) or the random half. Services return err.Error() to clients.
func TestRefusalsNameNoHiddenNumber(t *testing.T) {
	ring, _ := NewKeyring(0, []byte(strings.Repeat("k", 32)))
	const seq, rand, maxIssued = 271828182, 314159265358, 161803398
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		c, err := New(ring, "user", o)
		if err != nil {
			t.Fatal(err)
		}
		id := must(c.Encode(seq, rand))
		d, _ := c.DecodeUnverified(id)
		notIssued := d.CheckIssued(maxIssued)
		_, notDerived := c.DecodeSeq(id)
		if !errors.Is(notIssued, ErrNotIssued) || !errors.Is(notDerived, ErrNotDerived) || d.Seq != seq {
			t.Fatalf("%+v: %v, %v, %+v", o, notIssued, notDerived, d)
		}
		for _, err := range []error{notIssued, notDerived} {
			for _, n := range []uint64{seq, rand, maxIssued} {
				for _, shown := range []string{fmt.Sprint(n), fmt.Sprintf("%x", n), fmt.Sprintf("%X", n)} {
					if strings.Contains(err.Error(), shown) {
						t.Errorf("%+v: %q shows %d", o, err, n)
					}
				}
			}
		}
	}
}

// No fmt verb prints a master key or a derived key: the Keyring and the Codec
// redact themselves, by pointer, by value and inside a struct; Clear drops
// the master keys (nothing encodes after it).
func TestKeysNeverPrinted(t *testing.T) {
	master := []byte("0123456789abcdefghijklmnopqrstuv")
	ring, _ := NewKeyring(3, master)
	c, _ := New(ring, "user", Options{})
	holder := struct {
		R Keyring
		C *Codec
	}{*ring, c}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		for _, v := range []any{ring, *ring, c, holder} {
			text := fmt.Sprintf(verb, v)
			if !strings.Contains(text, "redacted") || strings.Contains(text, string(master)) ||
				strings.Contains(text, fmt.Sprintf("%x", master)) || strings.Contains(text, fmt.Sprint(master)) {
				t.Errorf("%s of %T: %s", verb, v, text)
			}
		}
	}
	if got := fmt.Sprint(ring); got != "extid.Keyring{current: 3, versions: [3], keys: redacted}" {
		t.Errorf("String: %s", got)
	}
	ring.Clear()
	if len(ring.Versions()) != 0 {
		t.Errorf("versions after Clear: %v", ring.Versions())
	}
	if _, err := New(ring, "user", Options{}); err == nil {
		t.Error("a codec built from a cleared keyring")
	}
}

// A type name of any size makes an error of bounded size that quotes its
// first 64 characters and its length.
func TestLongTypeNameErrorIsBounded(t *testing.T) {
	name := strings.Repeat("é", 1<<22)
	err := CheckTypeName(name)
	if err == nil {
		t.Fatal("a 8 MB type name was accepted")
	}
	msg := err.Error()
	if len(msg) > 400 || !strings.Contains(msg, strings.Repeat("é", 64)+"… (8388608 bytes)") {
		t.Fatalf("error of %d bytes: %.300s", len(msg), msg)
	}
	if got := CheckTypeName("User").Error(); !strings.Contains(got, `type "User"`) {
		t.Fatalf("a short name is quoted whole: %s", got)
	}
}
