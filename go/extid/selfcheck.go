package extid

import (
	"fmt"
)

// SelfChecked is a codec that decodes every id it makes before returning it
// and refuses one that does not give back its (seq, rand) (ErrSelfCheck; a
// failed batch leaves nothing in out): the Plan B post's graceful failure on
// faulty hardware — a miscomputed id is never handed out. The check runs on a
// second copy of the keys, derived and expanded on its own and run by other
// AES code (crypto/aes, not the AES-NI assembly), so a fault in either copy's
// keys or cipher path shows; for the calls without a random half it also
// recomputes the derived half. About one decode an encode; a Codec without it
// pays nothing (a type of its own, not a flag on every call, which Encode
// paid for: bench/RESULTS.md, issue 35's table). Everything else is the Codec's.
type SelfChecked struct {
	*Codec
	check *Codec
}

// NewSelfChecked builds a codec as New does, with the self-check.
func NewSelfChecked(r *Keyring, typeName string, o Options) (SelfChecked, error) {
	c, err := New(r, typeName, o)
	if err != nil {
		return SelfChecked{}, err
	}
	check, err := build(r, typeName, o, true)
	if err != nil {
		return SelfChecked{}, err
	}
	return SelfChecked{Codec: c, check: check}, nil
}

// Encode is Codec.Encode, checked.
func (s SelfChecked) Encode(seq, rand uint64) (ID, error) { return s.encode(seq, rand, false) }

// encode makes the id and verifies it on the second copy (derived: rand is
// the derived half, recomputed there too).
func (s SelfChecked) encode(seq, rand uint64, derived bool) (ID, error) {
	id, err := s.Codec.Encode(seq, rand)
	if err != nil {
		return ID{}, err
	}
	if err := s.check.verify(id, seq, rand, derived); err != nil {
		return ID{}, err
	}
	return id, nil
}

// EncodeSeq is Codec.EncodeSeq, checked: the derived half is recomputed too.
func (s SelfChecked) EncodeSeq(seq uint64) (ID, error) {
	if seq > s.MaxSeq() {
		return s.Codec.EncodeSeq(seq) // its error, named for EncodeSeq
	}
	return s.encode(seq, s.DerivedRand(seq), true)
}

// EncodeBatch is Codec.EncodeBatch, checked; on a failure out is cleared.
func (s SelfChecked) EncodeBatch(in []Pair, out []ID) error {
	if err := s.Codec.EncodeBatch(in, out); err != nil {
		return err
	}
	for i, p := range in {
		if err := s.check.verify(out[i], p.Seq, p.Rand, false); err != nil {
			clear(out)
			return err
		}
	}
	return nil
}

// EncodeSeqBatch is Codec.EncodeSeqBatch, checked (the derived halves
// recomputed too); on a failure out is cleared.
func (s SelfChecked) EncodeSeqBatch(seqs []uint64, out []ID) error {
	if err := s.Codec.EncodeSeqBatch(seqs, out); err != nil {
		return err
	}
	for i, seq := range seqs {
		if err := s.check.verify(out[i], seq, s.check.DerivedRand(seq), true); err != nil {
			clear(out)
			return err
		}
	}
	return nil
}

// verify decodes id, just made for (seq, rand), and refuses a mismatch; with
// derived, also a rand that is not the half this codec derives for seq.
func (c *Codec) verify(id ID, seq, rand uint64, derived bool) error {
	if c.fault {
		id[15] ^= 1
	}
	d, err := c.decode(id, int(c.current))
	if err != nil || d.Seq != seq || d.Rand != rand || d.KeyVersion != c.current || derived && c.DerivedRand(seq) != rand {
		return fmt.Errorf("extid: the id made for sequence number %d did not decode back to it: the machine miscomputed (faulty hardware?); no id was returned: %w", seq, ErrSelfCheck)
	}
	return nil
}
