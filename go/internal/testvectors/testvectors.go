// Package testvectors reads the shared test vectors (testdata/vectors/ at the
// repository's root), the files the Rust tests read too.
package testvectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is testdata/vectors.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "vectors")
}

// Read decodes testdata/vectors/name into v, failing t on error.
func Read(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
