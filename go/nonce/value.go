package nonce

import (
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Nonce is one nonce of 64, 96 or 128 bits, held by value (no allocation).
// Its bytes are held as two words (hi: bytes 0-7, lo: 8-15, big-endian; the
// bytes past its size are zero), so that a Nonce is returned in registers: as
// a byte array it went through memory, most of a counter nonce's cost
// (bench/RESULTS.md, "The measurements behind the code").
type Nonce struct {
	hi, lo uint64
	bits   uint8
}

// array is the nonce's bytes, left-aligned in 16.
func (n Nonce) array() [16]byte {
	var a [16]byte
	binary.BigEndian.PutUint64(a[:8], n.hi)
	binary.BigEndian.PutUint64(a[8:], n.lo)
	return a
}

// nonceOf reads a nonce of bits from the first bits/8 bytes of a.
func nonceOf(a *[16]byte, bits int) Nonce {
	var z [16]byte
	copy(z[:bits/8], a[:bits/8])
	return Nonce{hi: binary.BigEndian.Uint64(z[:8]), lo: binary.BigEndian.Uint64(z[8:]), bits: uint8(bits)}
}

// Bits is the nonce's size: 64, 96 or 128.
func (n Nonce) Bits() int { return int(n.bits) }

// Len is the nonce's size in bytes.
func (n Nonce) Len() int { return int(n.bits) / 8 }

// AppendTo appends the nonce's bytes to dst.
func (n Nonce) AppendTo(dst []byte) []byte {
	a := n.array()
	return append(dst, a[:n.bits/8]...)
}

// Bytes returns the nonce's bytes in a new slice.
func (n Nonce) Bytes() []byte { return n.AppendTo(make([]byte, 0, n.bits/8)) }

// Array returns the nonce's bytes, left-aligned in 16 bytes.
func (n Nonce) Array() [16]byte { return n.array() }

// Uint64 is a 64-bit nonce as a number.
func (n Nonce) Uint64() uint64 { return n.hi }

func (n Nonce) String() string {
	a := n.array()
	return hex.EncodeToString(a[:n.bits/8])
}

// FromBytes reads a nonce of 8, 12 or 16 bytes.
func FromBytes(b []byte) (Nonce, error) {
	var n Nonce
	switch len(b) {
	case 8, 12, 16:
		var a [16]byte
		copy(a[:], b)
		return nonceOf(&a, len(b)*8), nil
	}
	return n, &Error{Op: "FromBytes", Arg: "b", Rule: fmt.Sprintf("a nonce is 8, 12 or 16 bytes (64, 96 or 128 bits), got %d bytes", len(b))}
}

// MarshalText gives the nonce as lower-case hex (16, 24 or 32 digits): the
// form encoding/json and friends write.
func (n Nonce) MarshalText() ([]byte, error) {
	if n.bits == 0 {
		return nil, &Error{Op: "MarshalText", Rule: "the zero Nonce has no size (64, 96 or 128 bits)"}
	}
	a := n.array()
	return hex.AppendEncode(nil, a[:n.bits/8]), nil
}

// UnmarshalText reads 16, 24 or 32 hex digits (either case).
func (n *Nonce) UnmarshalText(text []byte) error {
	switch len(text) {
	case 16, 24, 32:
	default:
		return &Error{Op: "UnmarshalText", Arg: "text", Rule: fmt.Sprintf("a nonce is 16, 24 or 32 hex digits, got %d characters", len(text))}
	}
	var a [16]byte
	if _, err := hex.Decode(a[:len(text)/2], text); err != nil {
		return &Error{Op: "UnmarshalText", Arg: "text", Rule: "not hex: " + err.Error()}
	}
	*n = nonceOf(&a, len(text)*4)
	return nil
}

// MarshalBinary gives the nonce's 8, 12 or 16 bytes.
func (n Nonce) MarshalBinary() ([]byte, error) {
	if n.bits == 0 {
		return nil, &Error{Op: "MarshalBinary", Rule: "the zero Nonce has no size (64, 96 or 128 bits)"}
	}
	return n.Bytes(), nil
}

// UnmarshalBinary reads 8, 12 or 16 bytes.
func (n *Nonce) UnmarshalBinary(b []byte) error {
	v, err := FromBytes(b)
	if err != nil {
		err.(*Error).Op = "UnmarshalBinary"
		return err
	}
	*n = v
	return nil
}

// Value stores the nonce as its bytes (bytea, BLOB, BINARY(16)).
func (n Nonce) Value() (driver.Value, error) { return n.MarshalBinary() }

// Scan reads a nonce stored as bytes ([]byte: 8, 12 or 16 of them), or as hex
// text (a string).
func (n *Nonce) Scan(src any) error {
	switch v := src.(type) {
	case []byte:
		return n.UnmarshalBinary(v)
	case string:
		return n.UnmarshalText([]byte(v))
	}
	return &Error{Op: "Scan", Arg: "src", Rule: fmt.Sprintf("a nonce is scanned from bytes or hex text, got %T", src)}
}
