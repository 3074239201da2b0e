package sanitizer_test

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"

	"github.com/nonceforge/nonceforge/go/sanitizer"
	"github.com/nonceforge/nonceforge/go/sanitizer/chacha20poly1305"
)

// A sanitized AEAD is the AEAD it wraps: same bytes out. A second message
// under a nonce already used with its key panics (the default policy).
func ExampleNew() {
	key := make([]byte, 32)
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	aead := sanitizer.New(gcm, "AES-256-GCM", key)

	nonce := make([]byte, aead.NonceSize())
	sealed := aead.Seal(nil, nonce, []byte("first"), nil)
	plain, _ := aead.Open(nil, nonce, sealed, nil)
	fmt.Printf("%s, %d bytes sealed\n", plain, len(sealed))

	defer func() { fmt.Println("refused:", recover() != nil) }()
	aead.Seal(nil, nonce, []byte("second"), nil)
	// Output:
	// first, 21 bytes sealed
	// refused: true
}

// With OnViolation set, a refused Seal appends nothing to dst and the violation goes to
// the callback instead of a panic; errors.Is matches ErrNonceReuse.
func ExampleNewWithConfig() {
	key := make([]byte, 32)
	key[0] = 1
	block, _ := aes.NewCipher(key)
	gcm, _ := cipher.NewGCM(block)
	var refused error
	aead, err := sanitizer.NewWithConfig(gcm, "AES-256-GCM", key, sanitizer.Config{
		Mode:        sanitizer.Counter,
		OnViolation: func(v error) { refused = v },
	})
	if err != nil {
		panic(err)
	}
	nonce := make([]byte, 12)
	for i := 0; i < 3; i++ {
		nonce[11] = byte(i)
		aead.Seal(nil, nonce, []byte("message"), nil)
	}
	out := aead.Seal(nil, nonce, []byte("again"), nil)
	fmt.Println(out == nil, errors.Is(refused, sanitizer.ErrNonceReuse))
	// Output: true true
}

// The drop-in for golang.org/x/crypto/chacha20poly1305: change the import.
func Example_chacha20poly1305() {
	key := make([]byte, chacha20poly1305.KeySize)
	key[0] = 2
	aead, _ := chacha20poly1305.New(key)
	nonce := make([]byte, chacha20poly1305.NonceSize)
	sealed := aead.Seal(nil, nonce, []byte("hello"), nil)
	fmt.Println(len(sealed) - aead.Overhead())
	// Output: 5
}
