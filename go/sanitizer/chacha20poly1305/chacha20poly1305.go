// Package chacha20poly1305 is golang.org/x/crypto/chacha20poly1305 with the
// nonce sanitizer built in: the same names (New, NewX, KeySize, NonceSize,
// NonceSizeX, Overhead), so adopting it is a one-line import change. Sealing
// two different messages under one (key, nonce) panics with "nonceforge:
// nonce reuse ..."; sealing the same message again is allowed (it gives the
// same bytes and leaks nothing), as programs that re-encrypt a stream do.
package chacha20poly1305

import (
	"crypto/cipher"

	"github.com/nonceforge/nonceforge/go/sanitizer"
	upstream "golang.org/x/crypto/chacha20poly1305"
)

const (
	// KeySize is the size of the key used by this AEAD, in bytes.
	KeySize = upstream.KeySize
	// NonceSize is the size of the nonce used with the standard variant.
	NonceSize = upstream.NonceSize
	// NonceSizeX is the size of the nonce used with the XChaCha20-Poly1305 variant.
	NonceSizeX = upstream.NonceSizeX
	// Overhead is the size of the Poly1305 authentication tag.
	Overhead = upstream.Overhead
)

// config: identical messages allowed; a counter window of 16384 values (a
// stream of 64 KiB chunks with age's nonce layout keeps 64 chunks' tags).
var config = sanitizer.Config{AllowIdentical: true, CounterWindow: 1 << 14}

// New returns a sanitized ChaCha20-Poly1305 AEAD that uses the given 256-bit key.
func New(key []byte) (cipher.AEAD, error) {
	a, err := upstream.New(key)
	if err != nil {
		return nil, err
	}
	return sanitizer.NewWithConfig(a, "ChaCha20-Poly1305", key, config)
}

// NewX returns a sanitized XChaCha20-Poly1305 AEAD that uses the given 256-bit key.
func NewX(key []byte) (cipher.AEAD, error) {
	a, err := upstream.NewX(key)
	if err != nil {
		return nil, err
	}
	return sanitizer.NewWithConfig(a, "XChaCha20-Poly1305", key, config)
}
