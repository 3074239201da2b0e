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
	d, _ := users.Decode(back)
	fmt.Println(len(id.String()), len(text), seq, err, d.KeyVersion)
	// Output: 36 32 42 <nil> 1
}

func ExampleCodec_EncodeBatch() {
	ring, _ := extid.NewKeyring(1, bytes.Repeat([]byte{0x5a}, 32))
	orders, _ := extid.New(ring, "order", extid.Options{})
	in := make([]extid.Pair, 100)
	for i := range in {
		seq := uint64(1000 + i) // rows 1000..1099, random halves derived as EncodeSeq's
		in[i] = extid.Pair{Seq: seq, Rand: orders.DerivedRand(seq)}
	}
	ids := make([]extid.ID, len(in))
	if err := orders.EncodeBatch(in, ids); err != nil { // 8 ids side by side
		panic(err)
	}
	back := make([]extid.Decoded, len(ids))
	if err := orders.DecodeBatch(ids, back); err != nil {
		panic(err)
	}
	fmt.Println(back[0].Seq, back[99].Seq, orders.IsDerived(back[99]))
	// Output: 1000 1099 true
}
