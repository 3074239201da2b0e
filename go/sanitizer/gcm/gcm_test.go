package gcm_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/nonceforge/nonceforge/go/sanitizer/gcm"
)

func block(t *testing.T, key []byte) cipher.Block {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func freshKey(t *testing.T, n int) []byte {
	t.Helper()
	k := make([]byte, n)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = strings.TrimSpace(strings.SplitN(stringOf(r), "\n", 2)[0])
		}
	}()
	f()
	return ""
}

func stringOf(r any) string {
	if e, ok := r.(error); ok {
		return e.Error()
	}
	if s, ok := r.(string); ok {
		return s
	}
	return ""
}

func TestSameBytesAsCryptoCipherAndReuseRefused(t *testing.T) {
	for _, keyLen := range []int{16, 24, 32} {
		key := freshKey(t, keyLen)
		for _, size := range []int{12, 8, 16, 24} {
			var plainGCM cipher.AEAD
			var ours cipher.AEAD
			var err error
			if size == 12 {
				plainGCM, _ = cipher.NewGCM(block(t, key))
				ours, err = gcm.NewGCM(block(t, key))
			} else {
				plainGCM, _ = cipher.NewGCMWithNonceSize(block(t, key), size)
				ours, err = gcm.NewGCMWithNonceSize(block(t, key), size)
			}
			if err != nil {
				t.Fatal(err)
			}
			if ours.NonceSize() != size || ours.Overhead() != 16 {
				t.Fatalf("sizes %d/%d", ours.NonceSize(), ours.Overhead())
			}
			nonce := freshKey(t, size)
			msg, aad := []byte("attack at dawn"), []byte("hdr")
			got := ours.Seal(nil, nonce, msg, aad)
			if want := plainGCM.Seal(nil, nonce, msg, aad); !bytes.Equal(got, want) {
				t.Fatalf("AES-%d, %d-byte nonce: bytes differ", keyLen*8, size)
			}
			if plain, err := ours.Open(nil, nonce, got, aad); err != nil || !bytes.Equal(plain, msg) {
				t.Fatalf("open: %v", err)
			}
			// The same message again: allowed (same bytes); another one: refused.
			if again := ours.Seal(nil, nonce, msg, aad); !bytes.Equal(again, got) {
				t.Fatal("the same message sealed again differs")
			}
			if m := panics(func() { ours.Seal(nil, nonce, []byte("retreat"), aad) }); !strings.HasPrefix(m, "nonceforge: nonce reuse") {
				t.Fatalf("a second message under one nonce: %q", m)
			}
		}
	}
}

func TestOneKeyOneStateAcrossBlocksAndInstances(t *testing.T) {
	key := freshKey(t, 32)
	a, _ := gcm.NewGCM(block(t, key))
	b, _ := gcm.NewGCM(block(t, key)) // another block of the same key
	other, _ := gcm.NewGCM(block(t, freshKey(t, 32)))
	nonce := make([]byte, 12)
	a.Seal(nil, nonce, []byte("one"), nil)
	if m := panics(func() { b.Seal(nil, nonce, []byte("two"), nil) }); m == "" {
		t.Fatal("a second instance over the same key sealed another message under a used nonce")
	}
	other.Seal(nil, nonce, []byte("two"), nil) // another key: fine
}

func TestACounterRestartedAfterManySealsIsRefused(t *testing.T) {
	aead, _ := gcm.NewGCM(block(t, freshKey(t, 16)))
	nonce := make([]byte, 12)
	for i := uint32(0); i < 200_000; i++ {
		nonce[8], nonce[9], nonce[10], nonce[11] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		aead.Seal(nil, nonce, []byte{byte(i)}, nil)
	}
	nonce[8], nonce[9], nonce[10], nonce[11] = 0, 0, 0, 0
	if m := panics(func() { aead.Seal(nil, nonce, []byte("different"), nil) }); m == "" {
		t.Fatal("a restarted counter was not refused")
	}
}

func TestWhatIsNotOfferedIsRefused(t *testing.T) {
	b := block(t, freshKey(t, 32))
	for _, tc := range []struct {
		name string
		f    func() (cipher.AEAD, error)
		want string
	}{
		{"tag 12", func() (cipher.AEAD, error) { return gcm.NewGCMWithTagSize(b, 12) }, "tag size 12"},
		{"nonce 4", func() (cipher.AEAD, error) { return gcm.NewGCMWithNonceSize(b, 4) }, "nonce size 4"},
		{"nonce 32", func() (cipher.AEAD, error) { return gcm.NewGCMWithNonceSize(b, 32) }, "nonce size 32"},
		{"nil block", func() (cipher.AEAD, error) { return gcm.NewGCM(nil) }, "block is nil"},
	} {
		a, err := tc.f()
		if err == nil || a != nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: %v, %v", tc.name, a, err)
		}
	}
	if a, err := gcm.NewGCMWithTagSize(b, 16); err != nil || a.Overhead() != 16 {
		t.Fatalf("tag 16: %v", err)
	}
}
