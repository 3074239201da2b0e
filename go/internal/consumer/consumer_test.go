// Package consumer_test builds small programs the way users build them —
// a module of their own in a temporary directory that imports this one — and
// checks what they download.
package consumer_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The stores' clients: only the lease module may bring them.
var storeModules = []string{
	"github.com/jackc/pgx",
	"github.com/redis/go-redis",
	"go.etcd.io/etcd",
	"google.golang.org/grpc",
}

func repoGo(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// consumer writes a module with main.go in a temporary directory, replacing the
// nonceforge modules by this checkout, and returns its directory.
func consumer(t *testing.T, main string, lease bool) string {
	t.Helper()
	dir := t.TempDir()
	root := repoGo(t)
	mod := "module example.com/consumer\n\ngo 1.26.0\n\nrequire github.com/nonceforge/nonceforge/go v0.1.0\n" +
		"replace github.com/nonceforge/nonceforge/go => " + root + "\n"
	if lease {
		mod += "require github.com/nonceforge/nonceforge/go/lease v0.1.0\n" +
			"replace github.com/nonceforge/nonceforge/go/lease => " + filepath.Join(root, "lease") + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "go", "mod", "tidy")
	run(t, dir, "go", "build", "-o", filepath.Join(dir, "consumer"), ".")
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestCoreImportsNoStoreClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	dir := consumer(t, `package main

import (
	"fmt"

	"github.com/nonceforge/nonceforge/go/extid"
	"github.com/nonceforge/nonceforge/go/nonce"
	"github.com/nonceforge/nonceforge/go/sanitizer"
	"github.com/nonceforge/nonceforge/go/uuid"
)

func main() {
	g, _ := nonce.New(nonce.Options{MachineID: nonce.Machine(1)})
	n, _ := g.Counter(96)
	fmt.Println(n, uuid.NewV7(), extid.MaxKeyVersion, sanitizer.DefaultMaxSeals)
}
`, false)
	all := run(t, dir, "go", "list", "-m", "all")
	for _, m := range storeModules {
		if strings.Contains(all, m) {
			t.Errorf("a program importing nonce, extid, uuid and sanitizer has %s in its module graph:\n%s", m, all)
		}
	}
	if strings.Contains(all, "nonceforge/go/lease") {
		t.Errorf("the lease module is in the graph:\n%s", all)
	}
}

func TestLeaseModuleBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	dir := consumer(t, `package main

import (
	"context"
	"fmt"

	"github.com/nonceforge/nonceforge/go/lease"
)

func main() {
	_, err := lease.Acquire(context.Background(), "redis://127.0.0.1:1", lease.Options{IDs: "0x10"})
	fmt.Println(err)
}
`, true)
	all := run(t, dir, "go", "list", "-m", "all")
	if !strings.Contains(all, "github.com/redis/go-redis") {
		t.Errorf("the lease module's clients are missing:\n%s", all)
	}
	out := run(t, dir, filepath.Join(dir, "consumer"))
	if !strings.Contains(out, "lease: IDs = 0x10") {
		t.Errorf("the consumer printed %q", out)
	}
}
