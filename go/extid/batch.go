package extid

import (
	"encoding/binary"
	"fmt"
)

// Pair is one input of EncodeBatch: a sequence number and the random half
// stored beside its row. Rand must be given: EncodeBatch refuses the zero
// Rand that Pair{Seq: s} leaves (EncodeSeqBatch is the batch without a
// stored half).
type Pair struct{ Seq, Rand uint64 }

// EncodeBatch encodes in[i] into out[i] under the current key (out as long as
// in), each with the random half stored beside its row. Every input is
// checked first: on error nothing is written. A Rand of 0 is refused — it is
// what Pair{Seq: s} leaves, and a constant random half makes 2-round ids show
// the XOR of their sequence numbers (a fresh 62-bit draw is 0 with
// probability 2^-62); for ids without a stored half use EncodeSeqBatch.
// feistel-uuid runs its round functions eight ids side by side.
func (c *Codec) EncodeBatch(in []Pair, out []ID) error {
	if len(out) != len(in) {
		return bad("EncodeBatch", "out", fmt.Sprintf("it must be as long as in (%d), got %d", len(in), len(out)))
	}
	maxSeq, maxRand := c.MaxSeq(), c.MaxRand()
	for i, p := range in {
		if p.Seq > maxSeq {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Seq", i), fmt.Sprintf("%d is above %d", p.Seq, maxSeq))
		}
		if p.Rand > maxRand {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Rand", i), fmt.Sprintf("%d is above %d", p.Rand, maxRand))
		}
		if p.Rand == 0 {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Rand", i), "it is 0 (Pair{Seq: s} leaves it so): give the random half stored beside the row, or use EncodeSeqBatch for ids without one")
		}
	}
	c.encodeBatch(in, out)
	return nil
}

// EncodeSeqBatch is EncodeSeq of seqs[i] into out[i] (out as long as seqs):
// the same ids as one call at a time, the derived halves computed eight side
// by side. Every input is checked first: on error nothing is written.
func (c *Codec) EncodeSeqBatch(seqs []uint64, out []ID) error {
	if len(out) != len(seqs) {
		return bad("EncodeSeqBatch", "out", fmt.Sprintf("it must be as long as seqs (%d), got %d", len(seqs), len(out)))
	}
	maxSeq := c.MaxSeq()
	for i, s := range seqs {
		if s > maxSeq {
			return bad("EncodeSeqBatch", fmt.Sprintf("seqs[%d]", i), fmt.Sprintf("%d is above %d", s, maxSeq))
		}
	}
	rk := c.keys[c.current].rand
	var in [256]Pair
	var f [8]uint64
	for base := 0; base < len(seqs); base += len(in) {
		n := min(len(in), len(seqs)-base)
		for j := 0; j < n; j += 8 {
			m := min(8, n-j)
			copy(f[:], seqs[base+j:base+j+m])
			rk.PRF64x8(&f)
			for k := range m {
				in[j+k] = Pair{Seq: seqs[base+j+k], Rand: f[k] & c.MaxRand()}
			}
		}
		c.encodeBatch(in[:n], out[base:base+n])
	}
	return nil
}

// DecodeBatch is Decode of ids[i] into out[i] (out as long as ids), the
// derived halves checked eight side by side. The first id refused refuses the
// batch with Decode's error, naming ids[i], and out is left all zero (no
// decoded value in it).
func (c *Codec) DecodeBatch(ids []ID, out []Decoded) error {
	if len(out) != len(ids) {
		return bad("DecodeBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	if err := c.DecodeUnverifiedBatch(ids, out); err != nil {
		if e, ok := err.(*Error); ok {
			e.Op = "DecodeBatch"
		}
		return err
	}
	rk := c.keys[c.current].rand
	var f [8]uint64
	for base := 0; base < len(ids); base += 8 {
		n := min(8, len(ids)-base)
		for j := range n {
			f[j] = out[base+j].Seq
		}
		rk.PRF64x8(&f)
		for j := range n {
			d := out[base+j]
			want := f[j] & c.MaxRand()
			if d.KeyVersion == c.current && sameHalf(d.Rand, want) {
				continue
			}
			d, err := c.Decode(ids[base+j]) // other versions, or the refusal
			if err != nil {
				clear(out)
				return fmt.Errorf("extid: DecodeBatch: ids[%d]: %w", base+j, err)
			}
			out[base+j] = d
		}
	}
	return nil
}

// DecodeSeqBatch is DecodeBatch's sequence numbers (out as long as ids),
// with its refusals; on one, out is left all zero.
func (c *Codec) DecodeSeqBatch(ids []ID, out []uint64) error {
	if len(out) != len(ids) {
		return bad("DecodeSeqBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	ds := make([]Decoded, len(ids))
	if err := c.DecodeBatch(ids, ds); err != nil {
		clear(out)
		return err
	}
	for i, d := range ds {
		out[i] = d.Seq
	}
	return nil
}

// encodeBatch encodes checked input.
func (c *Codec) encodeBatch(in []Pair, out []ID) {
	k := c.keys[c.current]
	if k.one != nil {
		for i, p := range in {
			out[i], _ = c.Encode(p.Seq, p.Rand)
		}
		return
	}
	lMask := uint64(1)<<c.lBits() - 1
	var ls, rs, f [8]uint64
	for base := 0; base < len(in); base += 8 {
		n := min(8, len(in)-base)
		for j := range n {
			ls[j], rs[j] = in[base+j].Seq, in[base+j].Rand
		}
		for i := 0; i < len(k.rounds); i += 2 {
			f = rs
			k.rounds[i].PRF64x8(&f)
			for j := range ls {
				ls[j] ^= f[j] & lMask
			}
			f = ls
			k.rounds[i+1].PRF64x8(&f)
			for j := range rs {
				rs[j] ^= f[j] & rMask
			}
		}
		for j := range n {
			out[base+j] = c.place(ls[j], rs[j], c.current)
		}
	}
}

// DecodeUnverifiedBatch is DecodeUnverified of ids[i] into out[i] (out as
// long as ids), each under the key version it carries (or the current one).
// Every id's form is checked first: on error nothing is written.
func (c *Codec) DecodeUnverifiedBatch(ids []ID, out []Decoded) error {
	if len(out) != len(ids) {
		return bad("DecodeUnverifiedBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	if c.mode != "feistel-uuid" {
		for i, id := range ids {
			if _, err := c.decode(id, -1); err != nil {
				return batchErr(err, i)
			}
		}
		for i, id := range ids {
			out[i], _ = c.decode(id, -1)
		}
		return nil
	}
	for i, id := range ids {
		if _, _, v := c.halves(id); !c.wellFormed(id, v) {
			_, _, _, err := c.unplace(id, -1) // words the error
			if err == nil {
				err = bad("DecodeUnverifiedBatch", "id", "not a well-formed id")
			}
			return batchErr(err, i)
		}
	}
	lMask := uint64(1)<<c.lBits() - 1
	var ls, rs, f [8]uint64
	var vs [8]uint8
	for base := 0; base < len(ids); base += 8 {
		n := min(8, len(ids)-base)
		for j := range n {
			ls[j], rs[j], vs[j] = c.halves(ids[base+j])
		}
		k := c.keys[vs[0]]
		same := true
		for j := 1; j < n; j++ {
			same = same && vs[j] == vs[0]
		}
		if !same {
			for j := range n {
				out[base+j], _ = c.decode(ids[base+j], -1)
			}
			continue
		}
		for i := len(k.rounds) - 2; i >= 0; i -= 2 {
			f = ls
			k.rounds[i+1].PRF64x8(&f)
			for j := range rs {
				rs[j] ^= f[j] & rMask
			}
			f = rs
			k.rounds[i].PRF64x8(&f)
			for j := range ls {
				ls[j] ^= f[j] & lMask
			}
		}
		for j := range n {
			out[base+j] = Decoded{Seq: ls[j], Rand: rs[j], KeyVersion: vs[0]}
		}
	}
	return nil
}

// batchErr names the id of a batch that failed.
func batchErr(err error, i int) error {
	if e, ok := err.(*Error); ok {
		e.Op, e.Arg = "DecodeUnverifiedBatch", fmt.Sprintf("ids[%d]", i)
	}
	return err
}

// halves are a feistel-uuid id's halves and key version (not checked).
func (c *Codec) halves(id ID) (l, r uint64, version uint8) {
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	l, r = (hi>>16)<<12|hi&0xfff, lo&rMask
	if !c.inBand {
		return l, r, c.current
	}
	return l & (1<<56 - 1), r, uint8(l>>56) ^ uint8(r&0xf)
}

// wellFormed: unplace would accept the id (with its key version v).
func (c *Codec) wellFormed(id ID, v uint8) bool {
	return id[6]>>4 == c.uuidVersion && id[8]>>6 == 0b10 && v <= MaxKeyVersion && c.keys[v] != nil
}
