package nonce_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/nonceforge/nonceforge/go/nonce"
)

func Example() {
	g, err := nonce.New(nonce.Options{MachineID: nonce.Machine(7), Key: bytes.Repeat([]byte{0x42}, 32)})
	if err != nil {
		panic(err)
	}
	gcmNonce, _ := g.Counter(96)  // 12 bytes for AES-GCM
	ordered, _ := g.Sortable(128) // increasing, carries its millisecond
	secret, _ := g.Encrypted(128) // unpredictable
	back, _ := g.Decrypt(secret.AppendTo(nil))
	parts, _ := g.Decompose(gcmNonce.AppendTo(nil))
	fmt.Println(gcmNonce.Len(), ordered.Len(), secret.Len(), back.Len(), parts.MachineID)
	// Output: 12 16 16 16 7
}

func ExampleGenerator_Fill() {
	g, _ := nonce.New(nonce.Options{MachineID: nonce.Machine(1)})
	batch := make([]byte, 12*1000) // a thousand 96-bit nonces, one reservation
	if err := g.Fill(nonce.Counter, 96, batch); err != nil {
		panic(err)
	}
	first, _ := g.Decompose(batch[:12])
	last, _ := g.Decompose(batch[len(batch)-12:])
	fmt.Println(last.Counter - first.Counter)
	// Output: 999
}

func ExampleMachineIDFromHostList() {
	// The list's order, never sorted: appending a host keeps everyone's id.
	id, err := nonce.MachineIDFromHostList([]string{"db-b", "db-a", "db-c"}, "db-a")
	fmt.Println(id, err)
	// Output: 1 <nil>
}

func ExampleDecompose() {
	p, _ := nonce.Decompose([]byte{0x01, 0xd5, 0xec, 0x4b, 0x00, 0x44, 0xa0, 0x01}, nonce.DefaultEpoch)
	fmt.Println(p.UnixMilli, p.MachineID, p.Counter)
	// Output: 1767225600001 37 1
}

func ExampleGenerator_Local() {
	g, _ := nonce.New(nonce.Options{MachineID: nonce.Machine(3), Key: bytes.Repeat([]byte{0x42}, 32)})
	done := make(chan int)
	for range 4 {
		go func() {
			l := g.Local() // one per goroutine: no shared write a nonce
			n := 0
			for range 1000 {
				if _, err := l.Encrypted(128); err == nil {
					n++
				}
			}
			done <- n
		}()
	}
	total := 0
	for range 4 {
		total += <-done
	}
	fmt.Println(total)
	// Output: 4000
}

func ExampleNonce_MarshalText() {
	n, _ := nonce.FromBytes([]byte{0x01, 0xd5, 0xec, 0x4b, 0x00, 0x44, 0xa0, 0x01})
	j, _ := json.Marshal(struct{ Nonce nonce.Nonce }{n})
	fmt.Println(string(j))
	// Output: {"Nonce":"01d5ec4b0044a001"}
}
