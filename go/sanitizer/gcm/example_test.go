package gcm_test

import (
	"crypto/aes"
	"fmt"

	"github.com/nonceforge/nonceforge/go/sanitizer/gcm"
)

// The one-line swap: gcm.NewGCM where the program called cipher.NewGCM. Same
// bytes; a second message under a used nonce panics.
func ExampleNewGCM() {
	key := make([]byte, 32)
	block, _ := aes.NewCipher(key)
	aead, _ := gcm.NewGCM(block) // was: cipher.NewGCM(block)

	nonce := make([]byte, aead.NonceSize())
	sealed := aead.Seal(nil, nonce, []byte("first"), nil)
	fmt.Printf("%x\n", sealed[:5])

	defer func() { fmt.Println("refused:", recover() != nil) }()
	aead.Seal(nil, nonce, []byte("second"), nil)
	// Output:
	// a8ce324e39
	// refused: true
}
