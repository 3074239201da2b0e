// Key rotation: old ids resolve while their key is held, the checked lookup
// tries the held versions, an explicit version must match.

package extid

import (
	"errors"
	"strings"
	"testing"
)

func TestRoundTripsAndRotation(t *testing.T) {
	ring, _ := NewKeyring(1, []byte(strings.Repeat("k", 32)))
	for _, o := range []Options{{}, {Rounds: 4}, {UUIDVersion: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		c, err := New(ring, "order_item", o)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[ID]bool{}
		for i := uint64(0); i < 3000; i++ {
			seq, rand := i*0x9e3779b97f4a7c15&c.MaxSeq(), (i*31)&c.MaxRand()
			id, err := c.Encode(seq, rand)
			if err != nil {
				t.Fatal(err)
			}
			if seen[id] {
				t.Fatalf("%+v: %x twice", o, id)
			}
			seen[id] = true
			d, err := c.DecodeUnverified(id)
			if err != nil || d.Seq != seq || d.Rand != rand || !d.RandMatches(rand) {
				t.Fatalf("%+v: %d/%d → %x → %+v, %v", o, seq, rand, id, d, err)
			}
		}
	}
	// Rotation: ids of the old key still decode, in band.
	c1, _ := New(ring, "user", Options{})
	old, _ := c1.Encode(7, 9)
	_ = ring.Add(2, []byte(strings.Repeat("n", 32)))
	_ = ring.SetCurrent(2)
	c2, _ := New(ring, "user", Options{})
	if d, err := c2.DecodeUnverified(old); err != nil || d.Seq != 7 || d.KeyVersion != 1 {
		t.Fatalf("old id under the rotated codec: %+v, %v", d, err)
	}
	if now, _ := c2.Encode(7, 9); now == old {
		t.Fatal("the new key encodes the same id")
	}
}

// After a rotation DecodeSeq resolves ids made under every held version, in
// every layout; the row's id changes with the key; a dropped version stops
// resolving; stored-half and other-type ids stay refused.
func TestDecodeSeqResolvesEveryHeldVersionAfterRotation(t *testing.T) {
	k0, k1 := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
	oldRing, _ := NewKeyring(0, k0)
	ring, _ := NewKeyring(0, k0)
	if ring.Add(1, k1) != nil || ring.SetCurrent(1) != nil {
		t.Fatal("rotation")
	}
	onlyNew, _ := NewKeyring(1, k1)
	for _, o := range []Options{{}, {Rounds: 4}, {KeyVersionOutBand: true}, {Mode: "aes128"}, {Mode: "cycle-walk"}} {
		before, _ := New(oldRing, "user", o)
		after, _ := New(ring, "user", o)
		newest, _ := New(onlyNew, "user", o)
		order, _ := New(oldRing, "order", o)
		for _, seq := range []uint64{0, 42, 1 << 40} {
			oldID, newID := must(before.EncodeSeq(seq)), must(after.EncodeSeq(seq))
			if oldID == newID {
				t.Errorf("%+v: the row's id did not change with the key", o)
			}
			for _, id := range []ID{oldID, newID} {
				if got, err := after.DecodeSeq(id); got != seq || err != nil {
					t.Errorf("%+v: DecodeSeq(%v) = %d, %v", o, id, got, err)
				}
			}
			if _, err := newest.DecodeSeq(oldID); err == nil {
				t.Errorf("%+v: key 0 dropped, yet: %v", o, err)
			}
			if _, err := after.DecodeSeq(must(after.Encode(seq, 7))); !errors.Is(err, ErrNotDerived) {
				t.Errorf("%+v: a stored half: %v", o, err)
			}
		}
		if _, err := after.DecodeSeq(must(order.EncodeSeq(42))); err == nil {
			t.Errorf("%+v: another type's id resolved", o)
		}
	}
}

// The Rust core's rule for an explicit key version: an id that carries its
// own refuses a different one (without saying which it carries); ids that
// carry none are read under the one given.
func TestExplicitKeyVersionMustMatchTheCarriedOne(t *testing.T) {
	ring, _ := NewKeyring(0, []byte(strings.Repeat("a", 32)))
	_ = ring.Add(5, []byte(strings.Repeat("b", 32)))
	c, _ := New(ring, "user", Options{})
	id := must(c.EncodeSeq(42))
	if d, err := c.DecodeWithKeyVersion(id, 0); err != nil || d.Seq != 42 {
		t.Errorf("the carried version: %+v, %v", d, err)
	}
	if _, err := c.DecodeWithKeyVersion(id, 5); err == nil || !strings.Contains(err.Error(), "carries its key version, and not the 5 given") || strings.Contains(err.Error(), " 0") {
		t.Errorf("another version given: %v", err)
	}
	oob, _ := New(ring, "user", Options{KeyVersionOutBand: true})
	id = must(oob.EncodeSeq(42))
	if d, err := oob.DecodeWithKeyVersion(id, 0); err != nil || d.Seq != 42 || !oob.IsDerived(d) {
		t.Errorf("out of band, version 0: %+v, %v", d, err)
	}
	if d, err := oob.DecodeUnverifiedWithKeyVersion(id, 5); err != nil || oob.IsDerived(d) {
		t.Errorf("out of band, version 5: %+v, %v", d, err)
	}
	if _, err := oob.DecodeWithKeyVersion(id, 5); !errors.Is(err, ErrNotDerived) {
		t.Errorf("out of band, version 5, checked: %v", err)
	}
}
