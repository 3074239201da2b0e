// Package extid turns internal sequential ids into opaque external ids and
// back, byte for byte as the Rust core, the CLI, PostgreSQL, Node and Elixir
// do: one id space across a polyglot fleet.
//
// Modes (ids of one type and key version are a permutation of the inputs):
//   - "feistel-uuid" (default): a 2- or 4-round Feistel network over
//     (seq, rand) with AES-128 round functions, placed in a UUID of version 8
//     (or 4) with the RFC 9562 variant; the key version travels in band
//     (4 bits, seq up to 2^56-1) unless turned off (seq up to 2^60-1); rand is
//     up to 62 bits;
//   - "aes128": AES-128 of the block seq ‖ rand (any 64-bit values);
//   - "cycle-walk": AES-128 walked until the first bit is clear (seq < 2^63).
//
// Keys come from a Keyring of versioned master keys (0..15, each at least
// 32 bytes) through HKDF-SHA256 with the info
// "nonceforge/extid/v1/<layout>/<type>/<version>" (the layout: the mode, with
// "-4", "-v4", "-oob" for 4 rounds, UUID version 4, the key version out of
// band; the derived half's key under "rand-<layout>", or "rand" for the
// default layout). Text forms: the UUID form,
// base64url (22 characters) and TypeID's base32 (26 characters; optionally
// "type_" before it and a check character after it). The base64url and
// base32 parsers are strict — one spelling per value —; the UUID form also
// reads upper-case hex digits, as RFC 9562 asks of parsers (every face writes
// lower case). Every parse error gives the position and the rule.
package extid

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/nonceforge/nonceforge/go/internal/aesni"
	"github.com/nonceforge/nonceforge/go/internal/scratch"
)

// MaxKeyVersion is the highest key version.
const MaxKeyVersion = 15

// Error is every error of this package.
type Error struct {
	Op       string
	Arg      string
	Position int // for parse errors: the byte position; -1 otherwise
	Rule     string
}

func (e *Error) Error() string {
	if e.Position >= 0 {
		return fmt.Sprintf("extid: %s: %s: character %d: %s", e.Op, e.Arg, e.Position, e.Rule)
	}
	return fmt.Sprintf("extid: %s: %s: %s", e.Op, e.Arg, e.Rule)
}

func bad(op, arg, rule string) error { return &Error{Op: op, Arg: arg, Position: -1, Rule: rule} }

var (
	// ErrWrongType: a prefixed id names another type (compare with errors.Is).
	ErrWrongType = errors.New("extid: the id is of another type")
	// ErrNotIssued: a decoded sequence number above the highest handed out
	// (Decoded.CheckIssued): a made-up id.
	ErrNotIssued = errors.New("extid: the id was never issued")
	// ErrNotDerived: a decoded random half that is not the one the codec
	// derives from the sequence number (DecodeSeq): not made by EncodeSeq.
	ErrNotDerived = errors.New("extid: the id was not made by this codec")
	// ErrSelfCheck: an id did not decode back to what it was made from
	// (SelfChecked); it was not returned.
	ErrSelfCheck = errors.New("extid: self-check failed")
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

// excerptRunes is how many characters of a caller's text an error keeps.
const excerptRunes = 64

// excerpt is the text a caller passed as an error keeps it: whole up to 64
// characters, else those then "…" and the full length in bytes, so that an
// error's size never grows with its input (the Rust core's rule).
func excerpt(s string) string {
	n := 0
	for i := range s {
		if n == excerptRunes {
			return fmt.Sprintf("%s… (%d bytes)", s[:i], len(s))
		}
		n++
	}
	return s
}

// CheckTypeName checks an id type name: 1 to 63 characters, a-z and _,
// starting and ending with a letter (TypeID's prefix rule).
func CheckTypeName(name string) error {
	e := func(pos int, rule string) error {
		return &Error{Op: "CheckTypeName", Arg: fmt.Sprintf("type %q", excerpt(name)), Position: pos, Rule: rule}
	}
	if len(name) == 0 || len(name) > 63 {
		return e(0, "it must be 1 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c == '_') {
			return e(i, "only a-z and _ are allowed")
		}
	}
	if name[0] == '_' {
		return e(0, "it must start with a letter")
	}
	if name[len(name)-1] == '_' {
		return e(len(name)-1, "it must end with a letter")
	}
	return nil
}

// Options of a Codec; the zero value is the default (feistel-uuid, 2 rounds,
// UUID version 8, key version in band).
type Options struct {
	Mode              string // "feistel-uuid" (default), "aes128", "cycle-walk"
	Rounds            int    // 2 (default) or 4
	UUIDVersion       int    // 8 (default) or 4
	KeyVersionOutBand bool   // feistel-uuid: leave the key version out (seq up to 2^60-1)
}

// ID is an external id: 16 bytes.
type ID [16]byte

// Decoded is what an id decodes to.
type Decoded struct {
	Seq, Rand  uint64
	KeyVersion uint8
}

// CheckIssued refuses an id whose sequence number is above maxIssued, the
// highest one handed out: a made-up id passes with probability
// (maxIssued+1)/2^56. The error is ErrNotIssued under errors.Is.
func (d Decoded) CheckIssued(maxIssued uint64) error {
	if d.Seq > maxIssued {
		// Neither number in the text: services hand errors to clients, and
		// the highest issued is a row count (d.Seq is the caller's to read).
		return fmt.Errorf("extid: CheckIssued: the id decodes above the highest sequence number issued: %w", ErrNotIssued)
	}
	return nil
}

// RandMatches compares rand with a stored value in constant time.
func (d Decoded) RandMatches(stored uint64) bool {
	var a, b [8]byte
	binary.LittleEndian.PutUint64(a[:], d.Rand)
	binary.LittleEndian.PutUint64(b[:], stored)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// keys of one version: one AES-128 key (aes128, cycle-walk) or round keys.
type keys struct {
	one    cipher.Block
	rounds []*aesni.Key
	rand   *aesni.Key // derives the random half from the sequence number
}

// Codec encodes and decodes the ids of one type; safe for concurrent use.
type Codec struct {
	typeName    string
	mode        string
	rounds      int
	uuidVersion uint8
	inBand      bool
	fault       bool // tests: flip a bit before the self-check
	portable    bool // the self-check's copy: crypto/aes only
	current     uint8
	keys        [MaxKeyVersion + 1]*keys
	blocks      scratch.Blocks
}

// String shows the codec's type and layout, never its derived keys.
func (c *Codec) String() string {
	return fmt.Sprintf("extid.Codec{type: %q, mode: %s, current key version: %d, keys: redacted}", c.typeName, c.mode, c.current)
}

// GoString is String, for %#v.
func (c *Codec) GoString() string { return c.String() }

// Format prints String for every verb: no verb reaches the derived keys.
func (c *Codec) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// New builds a codec for type typeName under the keyring's keys.
func New(r *Keyring, typeName string, o Options) (*Codec, error) {
	return build(r, typeName, o, false)
}

func build(r *Keyring, typeName string, o Options, portable bool) (*Codec, error) {
	if err := CheckTypeName(typeName); err != nil {
		return nil, err
	}
	// Checked before it is narrowed to the byte it is stored in (264 is not 8).
	if o.UUIDVersion != 0 && o.UUIDVersion != 4 && o.UUIDVersion != 8 {
		return nil, bad("New", "UUIDVersion", fmt.Sprintf("feistel-uuid ids are UUID version 8 or 4, got %d", o.UUIDVersion))
	}
	c := &Codec{typeName: typeName, mode: o.Mode, rounds: o.Rounds, uuidVersion: uint8(o.UUIDVersion), portable: portable}
	if c.mode == "" {
		c.mode = "feistel-uuid"
	}
	if c.rounds == 0 {
		c.rounds = 2
	}
	if c.uuidVersion == 0 {
		c.uuidVersion = 8
	}
	switch {
	case c.mode != "feistel-uuid" && c.mode != "aes128" && c.mode != "cycle-walk":
		return nil, bad("New", "Mode", fmt.Sprintf("%q is not known: use feistel-uuid, aes128 or cycle-walk", c.mode))
	case c.rounds != 2 && c.rounds != 4:
		return nil, bad("New", "Rounds", fmt.Sprintf("a Feistel network here has 2 or 4 rounds, got %d", c.rounds))
	case c.uuidVersion != 4 && c.uuidVersion != 8:
		return nil, bad("New", "UUIDVersion", fmt.Sprintf("feistel-uuid ids are UUID version 8 or 4, got %d", c.uuidVersion))
	}
	if _, ok := r.keys[r.current]; !ok {
		return nil, bad("New", "keyring", fmt.Sprintf("holds no key of its current version %d (cleared?)", r.current))
	}
	c.inBand = !o.KeyVersionOutBand && c.mode == "feistel-uuid"
	c.current = r.current
	for _, v := range r.Versions() {
		k, err := c.derive(r, v)
		if err != nil {
			return nil, err
		}
		c.keys[v] = k
	}
	return c, nil
}

// layoutLabel names the layout the keys are derived under, as the Rust core's
// layout_label (testdata/vectors/extid.json ties the two): the mode, and for
// feistel-uuid "-4" for 4 rounds, "-v4" for UUID version 4, "-oob" for the key
// version out of band. No two layouts share a key.
func (c *Codec) layoutLabel() string {
	label := c.mode
	if c.mode == "feistel-uuid" {
		if c.rounds == 4 {
			label += "-4"
		}
		if c.uuidVersion == 4 {
			label += "-v4"
		}
		if !c.inBand {
			label += "-oob"
		}
	}
	return label
}

func (c *Codec) derive(r *Keyring, v uint8) (*keys, error) {
	label := c.layoutLabel()
	randLabel := "rand-" + label
	if label == "feistel-uuid" {
		randLabel = "rand" // the default layout's, as in 0.1.0
	}
	rk, err := r.derive(randLabel, c.typeName, v, 16)
	if err != nil {
		return nil, err
	}
	defer clear(rk)
	newKey := aesni.New
	if c.portable {
		newKey = aesni.NewPortable
	}
	randKey := newKey((*[16]byte)(rk))
	if c.mode != "feistel-uuid" {
		k, err := r.derive(label, c.typeName, v, 16)
		if err != nil {
			return nil, err
		}
		b, err := aes.NewCipher(k)
		clear(k)
		return &keys{one: b, rand: randKey}, err
	}
	k, err := r.derive(label, c.typeName, v, 64)
	if err != nil {
		return nil, err
	}
	defer clear(k)
	out := &keys{rand: randKey}
	for i := range c.rounds {
		out.rounds = append(out.rounds, newKey((*[16]byte)(k[16*i:16*i+16])))
	}
	return out, nil
}

// TypeName is the codec's type.
func (c *Codec) TypeName() string { return c.typeName }

// MaxSeq is the largest seq this codec encodes.
func (c *Codec) MaxSeq() uint64 {
	switch {
	case c.mode == "feistel-uuid" && c.inBand:
		return 1<<56 - 1
	case c.mode == "feistel-uuid":
		return 1<<60 - 1
	case c.mode == "cycle-walk":
		return 1<<63 - 1
	}
	return ^uint64(0)
}

// MaxRand is the largest rand this codec encodes.
func (c *Codec) MaxRand() uint64 {
	if c.mode == "feistel-uuid" {
		return 1<<62 - 1
	}
	return ^uint64(0)
}

const rMask = 1<<62 - 1

func (c *Codec) lBits() uint {
	if c.inBand {
		return 56
	}
	return 60
}

// DerivedRand is the random half the codec derives for seq under the current
// key: F(seq) truncated to MaxRand's bits, F being AES-128 under a key of its
// own (HKDF info .../rand-<layout>/<type>/<version>), as the Rust core.
func (c *Codec) DerivedRand(seq uint64) uint64 {
	return c.keys[c.current].rand.PRF64(seq) & c.MaxRand()
}

// IsDerived reports whether a decoded id's random half is the one the codec
// derives from its sequence number under its key version — an id made by
// EncodeSeq. Constant time in Rand; one AES call, kept out of Decode (which
// ids with a stored random half use).
func (c *Codec) IsDerived(d Decoded) bool {
	if d.KeyVersion > MaxKeyVersion || c.keys[d.KeyVersion] == nil {
		return false
	}
	want := c.keys[d.KeyVersion].rand.PRF64(d.Seq) & c.MaxRand()
	return subtle.ConstantTimeEq(int32(d.Rand>>32), int32(want>>32))&subtle.ConstantTimeEq(int32(d.Rand), int32(want)) == 1
}

// Decode returns what an id made by EncodeSeq (the call without a random
// half) encodes, and refuses any other id (errors.Is ErrNotDerived): a
// made-up id, one of another type, key or layout, or one made with a stored
// random half passes with probability 2^-62 (2^-64 in aes128 and cycle-walk)
// per key version tried, nothing stored. The obvious decode is the checked
// one; ids made with a stored random half are read with DecodeUnverified and
// checked against the row.
//
// Across a key rotation, as the Rust codec's decode: an id that carries its
// key version is read under it; one that does not (aes128, cycle-walk,
// KeyVersionOutBand) under the current version, then under each other
// version the keyring held when the codec was built, keeping the one whose
// derived half checks.
func (c *Codec) Decode(id ID) (Decoded, error) {
	d, err := c.decode(id, -1)
	if err != nil {
		return Decoded{}, err
	}
	if c.IsDerived(d) {
		return d, nil
	}
	if !c.inBand {
		for v := range c.keys {
			if uint8(v) == d.KeyVersion || c.keys[v] == nil {
				continue
			}
			if other, err := c.decode(id, v); err == nil && c.IsDerived(other) {
				return other, nil
			}
		}
	}
	return Decoded{}, errNotDerived("Decode")
}

// errNotDerived is the checked decodes' refusal. Not the decoded sequence
// number: for an id made with a stored random half it is the true one.
func errNotDerived(op string) error {
	return fmt.Errorf("extid: %s: its random half is not the one this codec derives for its sequence number: %w", op, ErrNotDerived)
}

// DecodeSeq is Decode's sequence number, with its refusals.
func (c *Codec) DecodeSeq(id ID) (uint64, error) {
	d, err := c.Decode(id)
	if err != nil {
		if errors.Is(err, ErrNotDerived) {
			return 0, errNotDerived("DecodeSeq")
		}
		return 0, err
	}
	return d.Seq, nil
}

// EncodeSeq returns the external id of seq, its random half derived from it
// under the key (DerivedRand): the call to make when nothing but the sequence
// number is stored. The id is stable, looks uniformly random, and DecodeSeq
// refuses ids the codec did not make. One AES call more than Encode.
func (c *Codec) EncodeSeq(seq uint64) (ID, error) {
	if seq > c.MaxSeq() {
		return ID{}, bad("EncodeSeq", "seq", fmt.Sprintf("%d is above %d", seq, c.MaxSeq()))
	}
	return c.Encode(seq, c.DerivedRand(seq))
}

// SelfChecked is a codec that decodes every id it makes before returning it
// and refuses one that does not give back its (seq, rand) (ErrSelfCheck; a
// failed batch leaves nothing in out): the Plan B post's graceful failure on
// faulty hardware — a miscomputed id is never handed out. The check runs on a
// second copy of the keys, derived and expanded on its own and run by other
// AES code (crypto/aes, not the AES-NI assembly), so a fault in either copy's
// keys or cipher path shows; for the calls without a random half it also
// recomputes the derived half. About one decode an encode; a Codec without it
// pays nothing (a type of its own, not a flag on every call: a flag cost
// Encode 0.5 ns here). Everything else is the Codec's.
type SelfChecked struct {
	*Codec
	check *Codec
}

// NewSelfChecked builds a codec as New does, with the self-check.
func NewSelfChecked(r *Keyring, typeName string, o Options) (SelfChecked, error) {
	c, err := New(r, typeName, o)
	if err != nil {
		return SelfChecked{}, err
	}
	check, err := build(r, typeName, o, true)
	if err != nil {
		return SelfChecked{}, err
	}
	return SelfChecked{Codec: c, check: check}, nil
}

// Encode is Codec.Encode, checked.
func (s SelfChecked) Encode(seq, rand uint64) (ID, error) {
	id, err := s.Codec.Encode(seq, rand)
	if err != nil {
		return ID{}, err
	}
	if err := s.check.verify(id, seq, rand, false); err != nil {
		return ID{}, err
	}
	return id, nil
}

// EncodeSeq is Codec.EncodeSeq, checked: the derived half is recomputed too.
func (s SelfChecked) EncodeSeq(seq uint64) (ID, error) {
	if seq > s.MaxSeq() {
		return s.Codec.EncodeSeq(seq) // its error, named for EncodeSeq
	}
	rand := s.DerivedRand(seq)
	id, err := s.Codec.Encode(seq, rand)
	if err != nil {
		return ID{}, err
	}
	if err := s.check.verify(id, seq, rand, true); err != nil {
		return ID{}, err
	}
	return id, nil
}

// EncodeBatch is Codec.EncodeBatch, checked; on a failure out is cleared.
func (s SelfChecked) EncodeBatch(in []Pair, out []ID) error {
	if err := s.Codec.EncodeBatch(in, out); err != nil {
		return err
	}
	for i, p := range in {
		if err := s.check.verify(out[i], p.Seq, p.Rand, false); err != nil {
			clear(out)
			return err
		}
	}
	return nil
}

// EncodeSeqBatch is Codec.EncodeSeqBatch, checked (the derived halves
// recomputed too); on a failure out is cleared.
func (s SelfChecked) EncodeSeqBatch(seqs []uint64, out []ID) error {
	if err := s.Codec.EncodeSeqBatch(seqs, out); err != nil {
		return err
	}
	for i, seq := range seqs {
		if err := s.check.verify(out[i], seq, s.check.DerivedRand(seq), true); err != nil {
			clear(out)
			return err
		}
	}
	return nil
}

// verify decodes id, just made for (seq, rand), and refuses a mismatch; with
// derived, also a rand that is not the half this codec derives for seq.
func (c *Codec) verify(id ID, seq, rand uint64, derived bool) error {
	if c.fault {
		id[15] ^= 1
	}
	d, err := c.decode(id, int(c.current))
	if err != nil || d.Seq != seq || d.Rand != rand || d.KeyVersion != c.current || derived && c.DerivedRand(seq) != rand {
		return fmt.Errorf("extid: the id made for sequence number %d did not decode back to it: the machine miscomputed (faulty hardware?); no id was returned: %w", seq, ErrSelfCheck)
	}
	return nil
}

// Encode returns the external id of (seq, rand) under the current key. rand
// must be fresh and uniformly random for each id (and stored beside the row):
// a constant or guessable one makes the 2-round feistel-uuid leak (ids of one
// rand show the XOR of their sequence numbers). Without a stored random half,
// use EncodeSeq.

func (c *Codec) Encode(seq, rand uint64) (ID, error) {
	var id ID
	if seq > c.MaxSeq() {
		return id, bad("Encode", "seq", fmt.Sprintf("%d is above %d", seq, c.MaxSeq()))
	}
	if rand > c.MaxRand() {
		return id, bad("Encode", "rand", fmt.Sprintf("%d is above %d", rand, c.MaxRand()))
	}
	k := c.keys[c.current]
	if k.one != nil {
		binary.BigEndian.PutUint64(id[:8], seq)
		binary.BigEndian.PutUint64(id[8:], rand)
		l := c.blocks.Get(seq)
		b := l.B
		*b = id
		k.one.Encrypt(b[:], b[:])
		for c.mode == "cycle-walk" && b[0]&0x80 != 0 {
			k.one.Encrypt(b[:], b[:])
		}
		id = *b
		l.Return()
		return id, nil
	}
	lMask := uint64(1)<<c.lBits() - 1
	l, r := seq, rand
	// Round functions: AES-128 of the other half (8 bytes little-endian, then
	// 8 zero bytes), the first 8 bytes of the result read little-endian.
	for i := 0; i < len(k.rounds); i += 2 {
		l ^= k.rounds[i].PRF64(r) & lMask
		r ^= k.rounds[i+1].PRF64(l) & rMask
	}
	return c.place(l, r, c.current), nil
}

// place puts the halves (and the whitened key version, in band) in a UUID.
func (c *Codec) place(l, r uint64, version uint8) ID {
	var id ID
	if c.inBand {
		l |= uint64(version^uint8(r&0xf)) << 56
	}
	hi := (l>>12)<<16 | uint64(c.uuidVersion)<<12 | l&0xfff
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], 0b10<<62|r&rMask)
	return id
}

// DecodeUnverified returns what id encodes, unverified: any well-formed id
// decodes (one of another type or key, or a made-up one, to an unrelated
// value). For ids made with a stored random half: look the row up by Seq,
// then check RandMatches (and CheckIssued) before trusting it. For ids made
// without one, Decode checks.
func (c *Codec) DecodeUnverified(id ID) (Decoded, error) { return c.decode(id, -1) }

// DecodeUnverifiedWithKeyVersion is DecodeUnverified of an id made under key
// version v, for ids that do not carry their key version (aes128,
// cycle-walk, KeyVersionOutBand).
func (c *Codec) DecodeUnverifiedWithKeyVersion(id ID, v uint8) (Decoded, error) {
	if v > MaxKeyVersion || c.keys[v] == nil {
		return Decoded{}, bad("DecodeUnverifiedWithKeyVersion", "v", fmt.Sprintf("no key of version %d", v))
	}
	return c.decode(id, int(v))
}

// DecodeWithKeyVersion is Decode of an id made under key version v (for ids
// that do not carry theirs): only that version is tried.
func (c *Codec) DecodeWithKeyVersion(id ID, v uint8) (Decoded, error) {
	if v > MaxKeyVersion || c.keys[v] == nil {
		return Decoded{}, bad("DecodeWithKeyVersion", "v", fmt.Sprintf("no key of version %d", v))
	}
	d, err := c.decode(id, int(v))
	if err != nil {
		return Decoded{}, err
	}
	if !c.IsDerived(d) {
		return Decoded{}, errNotDerived("DecodeWithKeyVersion")
	}
	return d, nil
}

func (c *Codec) decode(id ID, given int) (Decoded, error) {
	if c.mode != "feistel-uuid" {
		version := c.current
		if given >= 0 {
			version = uint8(given)
		}
		k := c.keys[version]
		if c.mode == "cycle-walk" && id[0]&0x80 != 0 {
			return Decoded{}, bad("Decode", "id", "a cycle-walk id has its first bit clear")
		}
		loan := c.blocks.Get(uint64(id[15]))
		b := loan.B
		*b = id
		k.one.Decrypt(b[:], b[:])
		for c.mode == "cycle-walk" && b[0]&0x80 != 0 {
			k.one.Decrypt(b[:], b[:])
		}
		d := Decoded{Seq: binary.BigEndian.Uint64(b[:8]), Rand: binary.BigEndian.Uint64(b[8:]), KeyVersion: version}
		loan.Return()
		return d, nil
	}
	l, r, version, err := c.unplace(id, given)
	if err != nil {
		return Decoded{}, err
	}
	k := c.keys[version]
	lMask := uint64(1)<<c.lBits() - 1
	for i := len(k.rounds) - 2; i >= 0; i -= 2 {
		r ^= k.rounds[i+1].PRF64(l) & rMask
		l ^= k.rounds[i].PRF64(r) & lMask
	}
	return Decoded{Seq: l, Rand: r, KeyVersion: version}, nil
}

// unplace checks a feistel-uuid id and takes out its halves and key version
// (given, when >= 0 and the version is not in band; else the current one).
func (c *Codec) unplace(id ID, given int) (l, r uint64, version uint8, err error) {
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	if uint8(hi>>12&0xf) != c.uuidVersion {
		return 0, 0, 0, bad("Decode", "id", fmt.Sprintf("a feistel-uuid id is a version %d UUID (its 13th hex digit is %d)", c.uuidVersion, c.uuidVersion))
	}
	if lo>>62 != 0b10 {
		return 0, 0, 0, bad("Decode", "id", "a feistel-uuid id has the RFC 9562 variant (its 17th hex digit is 8, 9, a or b)")
	}
	l, r = (hi>>16)<<12|hi&0xfff, lo&rMask
	version = c.current
	if given >= 0 {
		version = uint8(given)
	}
	if c.inBand {
		version = uint8(l>>56) ^ uint8(r&0xf)
		l &= 1<<56 - 1
		// The Rust core's rule: a version given for an id that carries
		// another is refused, not ignored (the text does not say which).
		if given >= 0 && uint8(given) != version {
			return 0, 0, 0, bad("DecodeWithKeyVersion", "v", fmt.Sprintf("the id carries its key version, and not the %d given: decode it without a key version", given))
		}
	}
	if version > MaxKeyVersion || c.keys[version] == nil {
		return 0, 0, 0, bad("Decode", "id", fmt.Sprintf("no key of version %d", version))
	}
	return l, r, version, nil
}

// Pair is one input of EncodeBatch: a sequence number and the random half
// stored beside its row. Rand must be given: EncodeBatch refuses the zero
// Rand that Pair{Seq: s} leaves (EncodeSeqBatch is the batch without a
// stored half).
type Pair struct{ Seq, Rand uint64 }

// EncodeBatch encodes in[i] into out[i] under the current key (out as long as
// in), each with the random half stored beside its row. Every input is
// checked first: on error nothing is written. A Rand of 0 is refused — it is
// what Pair{Seq: s} leaves, and a constant random half makes 2-round ids show
// the XOR of their sequence numbers (a fresh 62-bit draw is 0 with
// probability 2^-62); for ids without a stored half use EncodeSeqBatch.
// feistel-uuid runs its round functions eight ids side by side.
func (c *Codec) EncodeBatch(in []Pair, out []ID) error {
	if len(out) != len(in) {
		return bad("EncodeBatch", "out", fmt.Sprintf("it must be as long as in (%d), got %d", len(in), len(out)))
	}
	maxSeq, maxRand := c.MaxSeq(), c.MaxRand()
	for i, p := range in {
		if p.Seq > maxSeq {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Seq", i), fmt.Sprintf("%d is above %d", p.Seq, maxSeq))
		}
		if p.Rand > maxRand {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Rand", i), fmt.Sprintf("%d is above %d", p.Rand, maxRand))
		}
		if p.Rand == 0 {
			return bad("EncodeBatch", fmt.Sprintf("in[%d].Rand", i), "it is 0 (Pair{Seq: s} leaves it so): give the random half stored beside the row, or use EncodeSeqBatch for ids without one")
		}
	}
	c.encodeBatch(in, out)
	return nil
}

// EncodeSeqBatch is EncodeSeq of seqs[i] into out[i] (out as long as seqs):
// the same ids as one call at a time, the derived halves computed eight side
// by side. Every input is checked first: on error nothing is written.
func (c *Codec) EncodeSeqBatch(seqs []uint64, out []ID) error {
	if len(out) != len(seqs) {
		return bad("EncodeSeqBatch", "out", fmt.Sprintf("it must be as long as seqs (%d), got %d", len(seqs), len(out)))
	}
	maxSeq := c.MaxSeq()
	for i, s := range seqs {
		if s > maxSeq {
			return bad("EncodeSeqBatch", fmt.Sprintf("seqs[%d]", i), fmt.Sprintf("%d is above %d", s, maxSeq))
		}
	}
	rk := c.keys[c.current].rand
	var in [256]Pair
	var f [8]uint64
	for base := 0; base < len(seqs); base += len(in) {
		n := min(len(in), len(seqs)-base)
		for j := 0; j < n; j += 8 {
			m := min(8, n-j)
			copy(f[:], seqs[base+j:base+j+m])
			rk.PRF64x8(&f)
			for k := range m {
				in[j+k] = Pair{Seq: seqs[base+j+k], Rand: f[k] & c.MaxRand()}
			}
		}
		c.encodeBatch(in[:n], out[base:base+n])
	}
	return nil
}

// DecodeBatch is Decode of ids[i] into out[i] (out as long as ids), the
// derived halves checked eight side by side. The first id refused refuses the
// batch with Decode's error, naming ids[i], and out is left all zero (no
// decoded value in it).
func (c *Codec) DecodeBatch(ids []ID, out []Decoded) error {
	if len(out) != len(ids) {
		return bad("DecodeBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	if err := c.DecodeUnverifiedBatch(ids, out); err != nil {
		if e, ok := err.(*Error); ok {
			e.Op = "DecodeBatch"
		}
		return err
	}
	rk := c.keys[c.current].rand
	var f [8]uint64
	for base := 0; base < len(ids); base += 8 {
		n := min(8, len(ids)-base)
		for j := range n {
			f[j] = out[base+j].Seq
		}
		rk.PRF64x8(&f)
		for j := range n {
			d := out[base+j]
			want := f[j] & c.MaxRand()
			if d.KeyVersion == c.current && subtle.ConstantTimeEq(int32(d.Rand>>32), int32(want>>32))&subtle.ConstantTimeEq(int32(d.Rand), int32(want)) == 1 {
				continue
			}
			d, err := c.Decode(ids[base+j]) // other versions, or the refusal
			if err != nil {
				clear(out)
				return fmt.Errorf("extid: DecodeBatch: ids[%d]: %w", base+j, err)
			}
			out[base+j] = d
		}
	}
	return nil
}

// DecodeSeqBatch is DecodeBatch's sequence numbers (out as long as ids),
// with its refusals; on one, out is left all zero.
func (c *Codec) DecodeSeqBatch(ids []ID, out []uint64) error {
	if len(out) != len(ids) {
		return bad("DecodeSeqBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	ds := make([]Decoded, len(ids))
	if err := c.DecodeBatch(ids, ds); err != nil {
		clear(out)
		return err
	}
	for i, d := range ds {
		out[i] = d.Seq
	}
	return nil
}

// encodeBatch encodes checked input.
func (c *Codec) encodeBatch(in []Pair, out []ID) {
	k := c.keys[c.current]
	if k.one != nil {
		for i, p := range in {
			out[i], _ = c.Encode(p.Seq, p.Rand)
		}
		return
	}
	lMask := uint64(1)<<c.lBits() - 1
	var ls, rs, f [8]uint64
	for base := 0; base < len(in); base += 8 {
		n := min(8, len(in)-base)
		for j := range n {
			ls[j], rs[j] = in[base+j].Seq, in[base+j].Rand
		}
		for i := 0; i < len(k.rounds); i += 2 {
			f = rs
			k.rounds[i].PRF64x8(&f)
			for j := range ls {
				ls[j] ^= f[j] & lMask
			}
			f = ls
			k.rounds[i+1].PRF64x8(&f)
			for j := range rs {
				rs[j] ^= f[j] & rMask
			}
		}
		for j := range n {
			out[base+j] = c.place(ls[j], rs[j], c.current)
		}
	}
}

// DecodeUnverifiedBatch is DecodeUnverified of ids[i] into out[i] (out as
// long as ids), each under the key version it carries (or the current one).
// Every id's form is checked first: on error nothing is written.
func (c *Codec) DecodeUnverifiedBatch(ids []ID, out []Decoded) error {
	if len(out) != len(ids) {
		return bad("DecodeUnverifiedBatch", "out", fmt.Sprintf("it must be as long as ids (%d), got %d", len(ids), len(out)))
	}
	if c.mode != "feistel-uuid" {
		for i, id := range ids {
			if _, err := c.decode(id, -1); err != nil {
				return batchErr(err, i)
			}
		}
		for i, id := range ids {
			out[i], _ = c.decode(id, -1)
		}
		return nil
	}
	for i, id := range ids {
		if _, _, v := c.halves(id); !c.wellFormed(id, v) {
			_, _, _, err := c.unplace(id, -1) // words the error
			if err == nil {
				err = bad("DecodeUnverifiedBatch", "id", "not a well-formed id")
			}
			return batchErr(err, i)
		}
	}
	lMask := uint64(1)<<c.lBits() - 1
	var ls, rs, f [8]uint64
	var vs [8]uint8
	for base := 0; base < len(ids); base += 8 {
		n := min(8, len(ids)-base)
		for j := range n {
			ls[j], rs[j], vs[j] = c.halves(ids[base+j])
		}
		k := c.keys[vs[0]]
		same := true
		for j := 1; j < n; j++ {
			same = same && vs[j] == vs[0]
		}
		if !same {
			for j := range n {
				out[base+j], _ = c.decode(ids[base+j], -1)
			}
			continue
		}
		for i := len(k.rounds) - 2; i >= 0; i -= 2 {
			f = ls
			k.rounds[i+1].PRF64x8(&f)
			for j := range rs {
				rs[j] ^= f[j] & rMask
			}
			f = rs
			k.rounds[i].PRF64x8(&f)
			for j := range ls {
				ls[j] ^= f[j] & lMask
			}
		}
		for j := range n {
			out[base+j] = Decoded{Seq: ls[j], Rand: rs[j], KeyVersion: vs[0]}
		}
	}
	return nil
}

// batchErr names the id of a batch that failed.
func batchErr(err error, i int) error {
	if e, ok := err.(*Error); ok {
		e.Op, e.Arg = "DecodeUnverifiedBatch", fmt.Sprintf("ids[%d]", i)
	}
	return err
}

// halves are a feistel-uuid id's halves and key version (not checked).
func (c *Codec) halves(id ID) (l, r uint64, version uint8) {
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	l, r = (hi>>16)<<12|hi&0xfff, lo&rMask
	if !c.inBand {
		return l, r, c.current
	}
	return l & (1<<56 - 1), r, uint8(l>>56) ^ uint8(r&0xf)
}

// wellFormed: unplace would accept the id (with its key version v).
func (c *Codec) wellFormed(id ID, v uint8) bool {
	return id[6]>>4 == c.uuidVersion && id[8]>>6 == 0b10 && v <= MaxKeyVersion && c.keys[v] != nil
}
