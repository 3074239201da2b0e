// Package gcm is crypto/cipher's GCM constructors with the nonce sanitizer
// built in: the same names and signatures (NewGCM, NewGCMWithNonceSize,
// NewGCMWithTagSize), so adopting it is a one-line change —
//
//	aead, err := cipher.NewGCM(block) // before
//	aead, err := gcm.NewGCM(block)    // after: import "github.com/nonceforge/nonceforge/go/sanitizer/gcm"
//
// The AEAD returned is crypto/cipher's GCM over the same block: the same bytes
// out. Sealing two different messages under one (key, nonce) panics with
// "nonceforge: nonce reuse ..."; sealing the same message again is allowed (it
// gives the same bytes and leaks nothing), as the chacha20poly1305 drop-in
// does.
//
// A cipher.Block does not give its key away, so the state is kept per key
// through the block itself: its encryptions of two fixed blocks, a value only
// that key gives (the sanitizer then takes a salted HMAC of it, as of any
// key). Every GCM made here over blocks of one key shares one state; a
// sanitizer.New over the same key given as bytes keeps a state of its own.
//
// The guarantees are the sanitizer's default ones (docs/contracts.md §8). Tags
// other than 16 bytes, nonces outside 8 to 24 bytes and crypto/cipher's
// NewGCMWithRandomNonce (whose nonce the caller never sees) are not offered:
// the constructors refuse them with an error.
package gcm

import (
	"crypto/cipher"
	"errors"
	"fmt"

	"github.com/nonceforge/nonceforge/go/sanitizer"
)

const (
	standardNonceSize = 12
	standardTagSize   = 16
)

// config: identical messages allowed (as the chacha20poly1305 drop-in).
var config = sanitizer.Config{AllowIdentical: true}

// NewGCM returns the sanitized 128-bit block cipher in Galois Counter Mode
// with the standard nonce length (12 bytes), as cipher.NewGCM.
func NewGCM(block cipher.Block) (cipher.AEAD, error) {
	return wrap(block, standardNonceSize, standardTagSize)
}

// NewGCMWithNonceSize is cipher.NewGCMWithNonceSize, sanitized; size must be
// 8 to 24 bytes (the sanitizer's range; 12 is the standard and the safest).
func NewGCMWithNonceSize(block cipher.Block, size int) (cipher.AEAD, error) {
	return wrap(block, size, standardTagSize)
}

// NewGCMWithTagSize is cipher.NewGCMWithTagSize, sanitized: only 16-byte tags
// (the sanitizer keeps and compares whole tags; shorter ones weaken GCM too).
func NewGCMWithTagSize(block cipher.Block, tagSize int) (cipher.AEAD, error) {
	return wrap(block, standardNonceSize, tagSize)
}

func wrap(block cipher.Block, nonceSize, tagSize int) (cipher.AEAD, error) {
	if block == nil {
		return nil, errors.New("gcm: block is nil")
	}
	if block.BlockSize() != 16 {
		return nil, errors.New("cipher: NewGCM requires 128-bit block cipher")
	}
	if nonceSize < 8 || nonceSize > 24 {
		return nil, fmt.Errorf("gcm: nonce size %d: the sanitized GCM takes nonces of 8 to 24 bytes (12 is the standard)", nonceSize)
	}
	if tagSize != standardTagSize {
		return nil, fmt.Errorf("gcm: tag size %d: the sanitized GCM takes 16-byte tags only", tagSize)
	}
	var aead cipher.AEAD
	var err error
	if nonceSize == standardNonceSize {
		aead, err = cipher.NewGCM(block)
	} else {
		aead, err = cipher.NewGCMWithNonceSize(block, nonceSize)
	}
	if err != nil {
		return nil, err
	}
	return sanitizer.NewWithConfig(aead, "AES-GCM", fingerprint(block), config)
}

// fingerprint is a value only the block's key gives: its encryptions of the
// all-zero and the all-one block (never the key; the sanitizer keeps only a
// salted HMAC of it).
func fingerprint(block cipher.Block) []byte {
	var in [16]byte
	out := make([]byte, 32)
	block.Encrypt(out[:16], in[:])
	for i := range in {
		in[i] = 0xff
	}
	block.Encrypt(out[16:], in[:])
	return out
}
