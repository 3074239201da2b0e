package chacha20poly1305_test

// The drop-in, shown on a real program: age's stream package (the STREAM
// construction over ChaCha20-Poly1305) is taken from the Go module cache at
// test time — never committed here — its import of x/crypto's
// chacha20poly1305 swapped for this package, and its own tests run. Then a bug
// is injected (the writer skips a nonce increment) and the sanitizer stops it.

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const ageVersion = "filippo.io/age@v1.3.2"

func goCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOSUMDB=off")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s: %q not found (age changed?)", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAgeStreamWithTheSanitizer(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads age and runs its tests")
	}
	out, err := goCmd(t, ".", "mod", "download", "-json", ageVersion)
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", ageVersion, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal([]byte(out), &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download: %v %s", err, out)
	}
	ours, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	age := t.TempDir()
	copyTree(t, mod.Dir, age)
	// The one-line change, in age's own source:
	stream := filepath.Join(age, "internal", "stream", "stream.go")
	edit(t, stream, `"golang.org/x/crypto/chacha20poly1305"`, `"github.com/nonceforge/nonceforge/go/sanitizer/chacha20poly1305"`)
	// Point age's module at this checkout; build with the local Go.
	gomod := filepath.Join(age, "go.mod")
	b, _ := os.ReadFile(gomod)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "toolchain ") {
			lines = append(lines, l)
		}
	}
	lines = append(lines,
		"require github.com/nonceforge/nonceforge/go v0.0.0",
		"replace github.com/nonceforge/nonceforge/go => "+ours)
	if err := os.WriteFile(gomod, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err = goCmd(t, age, "test", "-short", "-count=1", "./internal/stream/")
	if err != nil {
		t.Fatalf("age's stream tests fail with the sanitizer:\n%s", out)
	}
	t.Logf("age's stream tests pass with the sanitizer: %s", strings.TrimSpace(out))

	// The bug: the writer forgets to move to the next nonce after a chunk.
	edit(t, stream, "\t_, err := w.dst.Write(ciphertext)\n\tincNonce(&w.nonce)\n",
		"\t_, err := w.dst.Write(ciphertext)\n")
	out, err = goCmd(t, age, "test", "-count=1", "-run", "TestRoundTrip", "./internal/stream/")
	if err == nil {
		t.Fatal("the injected nonce bug went unnoticed")
	}
	if !strings.Contains(out, "panic: nonceforge: nonce reuse: ChaCha20-Poly1305") {
		t.Fatalf("the bug was not stopped by the sanitizer:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "nonceforge: nonce reuse") {
			t.Logf("stopped: %s", strings.TrimSpace(l))
			break
		}
	}
}
