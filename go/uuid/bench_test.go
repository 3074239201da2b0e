package uuid_test

import (
	crand "crypto/rand"
	"testing"

	guuid "github.com/google/uuid"
	"github.com/nonceforge/nonceforge/go/uuid"
)

// Side by side, one goroutine: go test -run '^$' -bench . -benchmem ./uuid/

func BenchmarkNewV7(b *testing.B) {
	for b.Loop() {
		_ = uuid.NewV7()
	}
}

func BenchmarkGoogleUUIDNewV7(b *testing.B) {
	for b.Loop() {
		_, _ = guuid.NewV7()
	}
}

func BenchmarkTuid6(b *testing.B) {
	for b.Loop() {
		_ = uuid.Tuid6()
	}
}

func BenchmarkCryptoRand16(b *testing.B) {
	var buf [16]byte
	for b.Loop() {
		_, _ = crand.Read(buf[:])
	}
}
