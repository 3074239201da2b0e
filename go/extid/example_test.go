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
	id, _ := users.Encode(42, 0) // internal id 42 → an opaque UUID (version 8)
	text := id.Base32("user", true)
	back, _ := extid.ParseBase32(text, "user", true)
	d, _ := users.Decode(back)
	fmt.Println(len(id.String()), len(text), d.Seq, d.KeyVersion)
	// Output: 36 32 42 1
}

func ExampleCodec_EncodeBatch() {
	ring, _ := extid.NewKeyring(1, bytes.Repeat([]byte{0x5a}, 32))
	orders, _ := extid.New(ring, "order", extid.Options{})
	in := make([]extid.Pair, 100)
	for i := range in {
		in[i].Seq = uint64(1000 + i) // rows 1000..1099
	}
	ids := make([]extid.ID, len(in))
	if err := orders.EncodeBatch(in, ids); err != nil { // 8 ids side by side
		panic(err)
	}
	back := make([]extid.Decoded, len(ids))
	if err := orders.DecodeBatch(ids, back); err != nil {
		panic(err)
	}
	fmt.Println(back[0].Seq, back[99].Seq)
	// Output: 1000 1099
}
