package extid

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/nonceforge/nonceforge/go/uuid"
)

const (
	b32     = "0123456789abcdefghjkmnpqrstvwxyz" // TypeID's alphabet (Crockford, lower case)
	check37 = "0123456789abcdefghjkmnpqrstvwxyz*~$=u"
)

func parseErr(form string, pos int, rule string) error {
	return &Error{Op: "Parse", Arg: form, Position: pos, Rule: rule}
}

// String is the UUID form, lower case.
func (id ID) String() string { return uuid.UUID(id).String() }

// fromUUIDText gives go/uuid's parse error the form, position and rule of
// this package's errors.
func fromUUIDText(form string, id uuid.UUID, err error) (ID, error) {
	var te *uuid.TextError
	switch {
	case err == nil:
		return ID(id), nil
	case errors.As(err, &te):
		return ID{}, parseErr(form, te.Position, te.Rule)
	}
	return ID{}, err
}

// ParseUUID reads the UUID form (36 characters, either case of hex digit).
func ParseUUID(s string) (ID, error) {
	u, err := uuid.Parse(s)
	return fromUUIDText("uuid", u, err)
}

// Base64URL is the 22-character base64url form (no padding).
func (id ID) Base64URL() string { return uuid.ToCompact(id[:]) }

// ParseBase64URL reads the base64url form strictly: 22 characters, the last
// leaving its low 4 bits zero.
func ParseBase64URL(s string) (ID, error) {
	u, err := uuid.FromCompact(s)
	return fromUUIDText("base64url", u, err)
}

// mod37 is the 128-bit value of id modulo 37.
func mod37(hi, lo uint64) uint64 {
	_, r := bits.Div64(hi%37, lo, 37)
	return r
}

// Base32 is TypeID's base32 form: 26 characters; with prefix (a type name),
// "prefix_" before it; with check, a check character after it (the value
// mod 37), which catches any one mistyped character.
func (id ID) Base32(prefix string, check bool) string {
	var sb strings.Builder
	if prefix != "" {
		sb.WriteString(prefix)
		sb.WriteByte('_')
	}
	hi, lo := beU64(id[:8]), beU64(id[8:])
	// 128 bits as 26 digits of 5 bits: the first holds the top 3 bits.
	sb.WriteByte(b32[hi>>61])
	for i := 24; i >= 0; i-- {
		sh := uint(5 * i)
		var d uint64
		switch {
		case sh >= 64:
			d = hi >> (sh - 64)
		case sh > 59:
			d = lo>>sh | hi<<(64-sh)
		default:
			d = lo >> sh
		}
		sb.WriteByte(b32[d&31])
	}
	if check {
		sb.WriteByte(check37[mod37(hi, lo)])
	}
	return sb.String()
}

func beU64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

func b32Value(c byte) int {
	if i := strings.IndexByte(b32, c); i >= 0 {
		return i
	}
	return -1
}

// ParseBase32 reads TypeID's base32 form strictly: "prefix_" first when
// prefix is not empty (another type's prefix is ErrWrongType), 26 characters
// of lower-case TypeID base32 whose first is 0-7, and the check character
// when check is set.
func ParseBase32(s, prefix string, check bool) (ID, error) {
	var id ID
	body, offset := s, 0
	if prefix != "" {
		at := strings.LastIndexByte(s, '_')
		switch {
		case at < 0:
			return id, parseErr("base32", 0, "the id must start with its type and _ (like user_…)")
		case s[:at] != prefix:
			return id, &wrongType{expected: prefix, found: s[:at]}
		}
		body, offset = s[at+1:], at+1
	} else if at := strings.IndexByte(s, '_'); at >= 0 {
		return id, parseErr("base32", at, "no type prefix is expected here")
	}
	want := 26
	rule := "the id is 26 base32 characters"
	if check {
		want, rule = 27, "the id is 26 base32 characters and a check character"
	}
	if len(body) != want {
		return id, parseErr("base32", offset+min(len(body), want), rule)
	}
	var hi, lo uint64
	for i := 0; i < 26; i++ {
		d := b32Value(body[i])
		if d < 0 {
			return id, parseErr("base32", offset+i, "only 0-9 and lower-case a-z without i, l, o, u (TypeID's alphabet)")
		}
		if i == 0 && d > 7 {
			return id, parseErr("base32", offset, "the first character holds 3 bits: 0-7")
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	if check {
		c := body[26]
		if check37[mod37(hi, lo)] != c {
			if strings.IndexByte(check37, c) >= 0 {
				return id, parseErr("base32", offset+26, "the check character does not match: a character is mistyped")
			}
			return id, parseErr("base32", offset+26, "a check character is 0-9, a-z without i l o, or * ~ $ = u")
		}
	}
	for i := range 8 {
		id[i] = byte(hi >> (56 - 8*i))
		id[8+i] = byte(lo >> (56 - 8*i))
	}
	return id, nil
}

type wrongType struct{ expected, found string }

func (e *wrongType) Error() string {
	return "extid: Parse: base32: the id is of type " + quote(e.found) + ", expected " + quote(e.expected)
}
func (e *wrongType) Is(target error) bool { return target == ErrWrongType }

func quote(s string) string { return "\"" + s + "\"" }

// Parse reads an id of this codec's type in any text form: the canonical UUID
// (36 characters), base64url (22), or base32 (26, or 27 with the check
// character) with or without this type's prefix — as the Rust codec's parse.
func (c *Codec) Parse(text string) (ID, error) {
	prefix, body := "", text
	if i := strings.LastIndexByte(text, '_'); i >= 0 {
		prefix, body = c.typeName, text[i+1:]
	}
	switch {
	case len(text) == 22:
		return ParseBase64URL(text)
	case prefix != "":
		// Before the length: a prefixed base32 id is 36 characters for a
		// 9-letter type, or an 8-letter one with a check character.
		return ParseBase32(text, prefix, len(body) == 27)
	case len(text) == 36 || strings.Contains(text, "-"):
		return ParseUUID(text)
	}
	return ParseBase32(text, "", len(body) == 27)
}

// MarshalText gives the canonical UUID form, for encoding/json and friends.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads the canonical UUID form.
func (id *ID) UnmarshalText(text []byte) error {
	v, err := ParseUUID(string(text))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalBinary gives the id's 16 bytes.
func (id ID) MarshalBinary() ([]byte, error) { return append([]byte(nil), id[:]...), nil }

// UnmarshalBinary reads 16 bytes.
func (id *ID) UnmarshalBinary(b []byte) error {
	if len(b) != 16 {
		return bad("UnmarshalBinary", "b", fmt.Sprintf("an id is 16 bytes, got %d", len(b)))
	}
	copy(id[:], b)
	return nil
}

// Value stores the id as UUID text (a PostgreSQL uuid column takes it).
func (id ID) Value() (driver.Value, error) { return id.String(), nil }

// Scan reads an id stored as a uuid (text) or as 16 bytes.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case string:
		return id.UnmarshalText([]byte(v))
	case []byte:
		if len(v) == 16 {
			return id.UnmarshalBinary(v)
		}
		return id.UnmarshalText(v)
	}
	return bad("Scan", "src", fmt.Sprintf("an id is scanned from a uuid (text) or 16 bytes, got %T", src))
}
