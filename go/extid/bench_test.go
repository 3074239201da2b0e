package extid

// go test -run '^$' -bench . -benchmem -count 5 ./extid/

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func benchCodec(b *testing.B, o Options) *Codec {
	ring, _ := NewKeyring(1, bytes.Repeat([]byte{1}, 32))
	c, err := New(ring, "user", o)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		o    Options
	}{{"feistel-uuid", Options{}}, {"feistel-uuid-4", Options{Rounds: 4}}, {"aes128", Options{Mode: "aes128"}}} {
		b.Run(tc.name, func(b *testing.B) {
			c := benchCodec(b, tc.o)
			var seq uint64
			for b.Loop() {
				seq++
				if _, err := c.Encode(seq, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	c := benchCodec(b, Options{})
	id, _ := c.Encode(12345, 0)
	for b.Loop() {
		if _, err := c.DecodeUnverified(id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSelfCheck(b *testing.B) {
	ring, _ := NewKeyring(1, bytes.Repeat([]byte{1}, 32))
	c, err := NewSelfChecked(ring, "user", Options{})
	if err != nil {
		b.Fatal(err)
	}
	var seq uint64
	for b.Loop() {
		seq++
		if _, err := c.Encode(seq, 0x5a5a); err != nil {
			b.Fatal(err)
		}
	}
}

// The call without a random half (one AES call more) and its checked lookup.
func BenchmarkEncodeSeq(b *testing.B) {
	c := benchCodec(b, Options{})
	var seq uint64
	for b.Loop() {
		seq++
		if _, err := c.EncodeSeq(seq); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSeq(b *testing.B) {
	c := benchCodec(b, Options{})
	id, _ := c.EncodeSeq(12345)
	for b.Loop() {
		if _, err := c.DecodeSeq(id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBase32(b *testing.B) {
	c := benchCodec(b, Options{})
	id, _ := c.Encode(12345, 0)
	s := id.Base32("user", true)
	for b.Loop() {
		if _, err := ParseBase32(s, "user", true); err != nil {
			b.Fatal(err)
		}
	}
}

// Ids a second (ns/op is per batch of 1024; see ns/id).
func BenchmarkEncodeBatch1024(b *testing.B) {
	c := benchCodec(b, Options{})
	in := make([]Pair, 1024)
	for i := range in {
		in[i] = Pair{Seq: uint64(i), Rand: c.DerivedRand(uint64(i))}
	}
	out := make([]ID, len(in))
	for b.Loop() {
		if err := c.EncodeBatch(in, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/id")
}

func BenchmarkDecodeBatch1024(b *testing.B) {
	c := benchCodec(b, Options{})
	ids := seqBatch(b, c)
	out := make([]Decoded, len(ids))
	for b.Loop() {
		if err := c.DecodeBatch(ids, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/id")
}

// seqBatch is EncodeSeq of 0..1023.
func seqBatch(b *testing.B, c *Codec) []ID {
	seqs := make([]uint64, 1024)
	for i := range seqs {
		seqs[i] = uint64(i)
	}
	ids := make([]ID, len(seqs))
	if err := c.EncodeSeqBatch(seqs, ids); err != nil {
		b.Fatal(err)
	}
	return ids
}

// The derived batches: EncodeSeq and DecodeSeq of 1024 ids.
func BenchmarkEncodeSeqBatch1024(b *testing.B) {
	c := benchCodec(b, Options{})
	seqs := make([]uint64, 1024)
	for i := range seqs {
		seqs[i] = uint64(i)
	}
	out := make([]ID, len(seqs))
	for b.Loop() {
		if err := c.EncodeSeqBatch(seqs, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/id")
}

func BenchmarkDecodeSeqBatch1024(b *testing.B) {
	c := benchCodec(b, Options{})
	ids := seqBatch(b, c)
	out := make([]uint64, len(ids))
	for b.Loop() {
		if err := c.DecodeSeqBatch(ids, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/id")
}

// Latency as the Rust core's `extid_feistel_latency` measures it: each
// input comes from the previous output (both halves), so the calls cannot
// overlap. BenchmarkEncode's inputs are independent: the CPU overlaps them.
func BenchmarkEncodeChained(b *testing.B) {
	c := benchCodec(b, Options{})
	maxS, maxR := c.MaxSeq(), c.MaxRand()
	s, r := uint64(1), uint64(12345)
	for i := 0; i < b.N; i++ {
		id, err := c.Encode(s, r)
		if err != nil {
			b.Fatal(err)
		}
		s, r = binary.BigEndian.Uint64(id[:8])&maxS, binary.BigEndian.Uint64(id[8:])&maxR
	}
}
