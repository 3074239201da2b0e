package nonce

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/nonceforge/nonceforge/go/internal/aesni"
	"github.com/nonceforge/nonceforge/go/internal/scratch"
	"golang.org/x/crypto/blowfish"
)

// Cipher64 names the cipher of 64-bit encrypted nonces.
type Cipher64 string

// Cipher128 names the cipher of 128-bit encrypted nonces.
type Cipher128 string

const (
	Speck64_128 Cipher64  = "speck64-128" // the default
	Blowfish    Cipher64  = "blowfish"    // with a 128-bit key, for compatibility
	TripleDES   Cipher64  = "3des"        // EDE, three keys, for compatibility
	AES256      Cipher128 = "aes256"      // the default
	Speck128    Cipher128 = "speck128-256"
)

// label is the HKDF-SHA256 info of a per-size key.
func label(cipher string, bits int) string {
	return fmt.Sprintf("nonceforge/encrypted-nonce/v1/%s/%d", cipher, bits)
}

func derive(base []byte, cipher string, bits, n int) []byte {
	k, err := hkdf.Key(sha256.New, base, nil, label(cipher, bits), n)
	if err != nil {
		panic("nonce: HKDF-SHA256 of at most 32 bytes cannot fail: " + err.Error())
	}
	return k
}

func zero(b []byte) {
	clear(b)
}

// ciphers holds the three per-size permutations of a generator's base key.
type ciphers struct {
	s64    *speck64
	b64    cipher.Block // Blowfish or 3DES, when chosen
	s96    *speck96
	aes    cipher.Block  // AES-256: decrypting
	aesEnc *aesni.Key256 // AES-256: encrypting, in registers (AES-NI where there is)
	s128   *speck128
	name64 Cipher64
	blocks scratch.Blocks // for the cipher.Block ciphers (AES, Blowfish, 3DES)
}

func newCiphers(base []byte, c64 Cipher64, c128 Cipher128) (*ciphers, error) {
	if len(base) < 32 {
		return nil, &Error{Op: "New", Arg: "Key", Rule: fmt.Sprintf("a base key is at least 32 bytes, got %d", len(base))}
	}
	c := &ciphers{}
	switch c64 {
	case Speck64_128, "":
		k := derive(base, string(Speck64_128), 64, 16)
		c.s64 = newSpeck64(k)
		zero(k)
	case Blowfish:
		k := derive(base, string(Blowfish), 64, 16)
		b, err := blowfish.NewCipher(k)
		zero(k)
		if err != nil {
			return nil, err
		}
		c.b64 = b
	case TripleDES:
		k := derive(base, string(TripleDES), 64, 24)
		b, err := des.NewTripleDESCipher(k)
		zero(k)
		if err != nil {
			return nil, err
		}
		c.b64 = b
	default:
		return nil, &Error{Op: "New", Arg: "Cipher64", Rule: fmt.Sprintf("%q is not a 64-bit nonce cipher: use speck64-128, blowfish or 3des", string(c64))}
	}
	k := derive(base, "speck96-144", 96, 18)
	c.s96 = newSpeck96(k)
	zero(k)
	switch c128 {
	case AES256, "":
		k := derive(base, string(AES256), 128, 32)
		b, err := aes.NewCipher(k)
		c.aesEnc = aesni.New256((*[32]byte)(k))
		zero(k)
		if err != nil {
			return nil, err
		}
		c.aes = b
	case Speck128:
		k := derive(base, string(Speck128), 128, 32)
		c.s128 = newSpeck128(k)
		zero(k)
	default:
		return nil, &Error{Op: "New", Arg: "Cipher128", Rule: fmt.Sprintf("%q is not a 128-bit nonce cipher: use aes256 or speck128-256", string(c128))}
	}
	return c, nil
}

// blockApply runs a cipher.Block over the nonce's bytes in a lent block: a
// slice handed to an interface method escapes, so bytes on the stack would be
// a heap allocation per nonce (see go/internal/scratch).
func (c *ciphers) blockApply(b cipher.Block, n *Nonce, decrypt bool) {
	size := int(n.bits) / 8
	l := c.blocks.Get(n.lo ^ n.hi)
	s := l.B
	*s = n.array()
	if decrypt {
		b.Decrypt(s[:size], s[:size])
	} else {
		b.Encrypt(s[:size], s[:size])
	}
	*n = nonceOf(s, int(n.bits))
	l.Return()
}

// encrypt turns the plain nonce in n (of its size) into its encrypted form, in place.
func (c *ciphers) encrypt(n *Nonce) { c.apply(n, false) }

func (c *ciphers) decrypt(n *Nonce) { c.apply(n, true) }

func (c *ciphers) apply(n *Nonce, decrypt bool) {
	switch n.bits {
	case 64:
		if c.s64 == nil {
			c.blockApply(c.b64, n, decrypt)
		} else if decrypt {
			n.hi = c.s64.decrypt(n.hi)
		} else {
			n.hi = c.s64.encrypt(n.hi)
		}
	case 96:
		// Bytes 12-15 of the array are zero, and Speck96 leaves them so.
		a := n.array()
		if decrypt {
			c.s96.decrypt((*[12]byte)(a[:12]))
		} else {
			c.s96.encrypt((*[12]byte)(a[:12]))
		}
		n.hi, n.lo = binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(a[8:])
	default:
		if c.s128 == nil && decrypt {
			c.blockApply(c.aes, n, true)
			return
		}
		if c.s128 == nil {
			n.hi, n.lo = c.aesEnc.Encrypt(n.hi, n.lo)
			return
		}
		a := n.array()
		if decrypt {
			c.s128.decrypt(&a)
		} else {
			c.s128.encrypt(&a)
		}
		n.hi, n.lo = binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(a[8:])
	}
}
