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
