package lease_test

import (
	"context"
	"log"
	"time"

	"github.com/nonceforge/nonceforge/go/lease"
	"github.com/nonceforge/nonceforge/go/nonce"
)

// A machine id from PostgreSQL (or redis://…, etcd://…), shared with the
// Rust, Node and Elixir holders of the same namespace.
func Example() {
	l, err := lease.Acquire(context.Background(), "postgres://app@db.internal/app", lease.Options{TTL: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(context.Background())
	g, err := l.Generator(context.Background(), nonce.Options{}) // the leased id, above the floor, held to the deadline
	if err != nil {
		log.Fatal(err)
	}
	n, err := g.Counter(96)
	if err != nil {
		log.Fatal(err) // nonce.ErrDisabled once the lease may have lapsed
	}
	_ = n
}
