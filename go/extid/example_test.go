package extid_test

import (
	"bytes"
	"fmt"

	"github.com/nonceforge/nonceforge/go/extid"
)

func Example() {
	ring, err := extid.NewKeyring(1, bytes.Repeat([]byte{0x5a}, 32))
	if err != nil {
		panic(err)
	}
	users, err := extid.New(ring, "user", extid.Options{})
	if err != nil {
		panic(err)
	}
	id, _ := users.EncodeSeq(42) // internal id 42 → an opaque UUID (version 8)
	text := id.Base32("user", true)
	back, _ := extid.ParseBase32(text, "user", true)
	seq, err := users.DecodeSeq(back) // refuses ids this codec did not make
	d, _ := users.Decode(back)        // the same check, the whole record
	fmt.Println(len(id.String()), len(text), seq, err, d.KeyVersion)
	// Output: 36 32 42 <nil> 1
}

func ExampleCodec_EncodeSeqBatch() {
	ring, _ := extid.NewKeyring(1, bytes.Repeat([]byte{0x5a}, 32))
	orders, _ := extid.New(ring, "order", extid.Options{})
	seqs := make([]uint64, 100)
	for i := range seqs {
		seqs[i] = uint64(1000 + i) // rows 1000..1099
	}
	ids := make([]extid.ID, len(seqs))
	if err := orders.EncodeSeqBatch(seqs, ids); err != nil { // 8 ids side by side
		panic(err)
	}
	back := make([]uint64, len(ids))
	err := orders.DecodeSeqBatch(ids, back) // refuses a batch with an id this codec did not make
	fmt.Println(back[0], back[99], err)
	// Output: 1000 1099 <nil>
}

func ExampleCodec_EncodeBatch() {
	ring, _ := extid.NewKeyring(1, bytes.Repeat([]byte{0x5a}, 32))
	orders, _ := extid.New(ring, "order", extid.Options{})
	// The Plan B post's design: a fresh random half per row, stored beside it.
	rows := []extid.Pair{{Seq: 1000, Rand: 0x1f2e3d4c5b6a798}, {Seq: 1001, Rand: 0x2a3b4c5d6e7f809}}
	ids := make([]extid.ID, len(rows))
	if err := orders.EncodeBatch(rows, ids); err != nil {
		panic(err)
	}
	back := make([]extid.Decoded, len(ids))
	if err := orders.DecodeUnverifiedBatch(ids, back); err != nil { // any well-formed id decodes…
		panic(err)
	}
	fmt.Println(back[1].Seq, back[1].RandMatches(rows[1].Rand)) // …so compare with the row's half
	// Output: 1001 true
}
