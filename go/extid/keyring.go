package extid

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"io"
	"sort"
)

// Keyring holds versioned master keys; one is current (used to encode).
type Keyring struct {
	keys    map[uint8][]byte
	current uint8
}

// NewKeyring returns a keyring with one master key (at least 32 bytes) as version.
func NewKeyring(version uint8, master []byte) (*Keyring, error) {
	r := &Keyring{keys: map[uint8][]byte{}, current: version}
	if err := r.Add(version, master); err != nil {
		return nil, err
	}
	return r, nil
}

// Add adds a master key as version (0..15).
func (r *Keyring) Add(version uint8, master []byte) error {
	if version > MaxKeyVersion {
		return bad("Keyring.Add", "version", fmt.Sprintf("key versions are 0..%d, got %d", MaxKeyVersion, version))
	}
	if len(master) < 32 {
		return bad("Keyring.Add", "master", fmt.Sprintf("a master key is at least 32 bytes, got %d", len(master)))
	}
	if _, ok := r.keys[version]; ok {
		return bad("Keyring.Add", "version", fmt.Sprintf("key version %d is taken", version))
	}
	r.keys[version] = append([]byte(nil), master...)
	return nil
}

// SetCurrent makes version the one new ids are encoded with.
func (r *Keyring) SetCurrent(version uint8) error {
	if _, ok := r.keys[version]; !ok {
		return bad("Keyring.SetCurrent", "version", fmt.Sprintf("no key of version %d", version))
	}
	r.current = version
	return nil
}

// Current is the version new ids are encoded with.
func (r *Keyring) Current() uint8 { return r.current }

// Clear overwrites every master key with zeros and drops it: the keyring
// encodes and decodes nothing after (codecs built from it keep their own
// derived keys until they are collected: drop them too).
func (r *Keyring) Clear() {
	for v, k := range r.keys {
		clear(k)
		delete(r.keys, v)
	}
}

// String shows the versions held and the current one, never a key. (Value
// receivers: a Keyring printed by value, or inside a struct, is redacted too.)
func (r Keyring) String() string {
	return fmt.Sprintf("extid.Keyring{current: %d, versions: %v, keys: redacted}", r.current, r.Versions())
}

// GoString is String, for %#v.
func (r Keyring) GoString() string { return r.String() }

// Format prints String for every verb (%v, %+v, %#v, %s, %x, …): no verb
// reaches the master keys.
func (r Keyring) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, r.String()) }

// Versions are the key versions held, in order.
func (r *Keyring) Versions() []uint8 {
	out := make([]uint8, 0, len(r.keys))
	for v := range r.keys {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (r *Keyring) derive(label, typeName string, version uint8, n int) ([]byte, error) {
	master, ok := r.keys[version]
	if !ok {
		return nil, bad("Decode", "key version", fmt.Sprintf("no key of version %d", version))
	}
	return hkdf.Key(sha256.New, master, nil, fmt.Sprintf("nonceforge/extid/v1/%s/%s/%d", label, typeName, version), n)
}
