// Package readme runs the Go blocks of go/README.md and of the top README as
// written: each becomes the body of a program's main function in a module of
// its own (requiring this one by a replace), after the few values
// the README says the blocks are given (ctx, baseKey, masterKey, key, buf,
// row, maxID); what a block declares and does not use is kept alive with
// `_ = name`, and an `import` line in a block joins the program's imports.
// A block after `<!-- not run: why -->` is compiled, not run (it needs a
// store); the README says why.
package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

type block struct {
	where, code string
	compileOnly string // why it is not run, or ""
}

func blocks(t *testing.T, file, label string) []block {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		start := i
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, lines[i])
		}
		why := ""
		if start > 0 {
			if m := regexp.MustCompile(`^<!-- not run: (.+) -->$`).FindStringSubmatch(strings.TrimSpace(lines[start-1])); m != nil {
				why = m[1]
			}
		}
		out = append(out, block{where: label + ":" + strconv.Itoa(start+1), code: strings.Join(body, "\n"), compileOnly: why})
	}
	return out
}

// What the README's blocks are given, and the packages a block may name.
const prelude = `	ctx := context.Background()
	baseKey := bytes.Repeat([]byte{0x42}, 32)
	masterKey := bytes.Repeat([]byte{0x17}, 32)
	key := bytes.Repeat([]byte{0x07}, 32)
	buf := make([]byte, 12*64)
	row := struct{ ID, Rand uint64 }{ID: 42, Rand: 7}
	maxID := uint64(1000)
	_, _, _, _, _, _, _ = ctx, baseKey, masterKey, key, buf, row, maxID
`

var known = map[string]string{
	"nonce":   "github.com/nonceforge/nonceforge/go/nonce",
	"extid":   "github.com/nonceforge/nonceforge/go/extid",
	"uuid":    "github.com/nonceforge/nonceforge/go/uuid",
	"lease":   "github.com/nonceforge/nonceforge/go/lease",
	"aes":     "crypto/aes",
	"time":    "time",
	"errors":  "errors",
	"fmt":     "fmt",
	"context": "context",
	"bytes":   "bytes",
}

func program(code string) string {
	imports := map[string]bool{`"context"`: true, `"bytes"`: true}
	var body []string
	for _, line := range strings.Split(code, "\n") {
		if m := regexp.MustCompile(`^import (\S+)`).FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			imports[m[1]] = true
			continue
		}
		body = append(body, line)
	}
	joined := strings.Join(body, "\n")
	code = regexp.MustCompile(`(?m)(^|\s)//\s.*$`).ReplaceAllString(joined, "") // what the comments name is not used (a URL's // is not a comment)
	for name, path := range known {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(code) {
			imports[`"`+path+`"`] = true
		}
	}
	// Every name a block declares, used once more so that Go compiles it.
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([\w, ]+?)\s*:=`).FindAllStringSubmatch(joined, -1) {
		for _, n := range strings.Split(m[1], ",") {
			if n = strings.TrimSpace(n); n != "_" && n != "" {
				declared[n] = true
			}
		}
	}
	var uses []string
	for n := range declared {
		uses = append(uses, "\t_ = "+n)
	}
	sort.Strings(uses)
	var imps []string
	for i := range imports {
		imps = append(imps, "\t"+i)
	}
	sort.Strings(imps)
	return "package main\n\nimport (\n" + strings.Join(imps, "\n") + "\n)\n\nfunc main() {\n" + prelude +
		joined + "\n" + strings.Join(uses, "\n") + "\n}\n"
}

func TestReadmeBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program per block")
	}
	root, _ := filepath.Abs("../..")
	all := append(blocks(t, filepath.Join(root, "README.md"), "go/README.md"),
		blocks(t, filepath.Join(root, "..", "README.md"), "README.md")...)
	if len(all) < 6 {
		t.Fatalf("only %d Go blocks found", len(all))
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	leaseSum, err := os.ReadFile(filepath.Join(root, "lease", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	sum = append(sum, leaseSum...)
	for i, b := range all {
		t.Run(b.where, func(t *testing.T) {
			dir := t.TempDir()
			mod := "module readmeblock\n\ngo 1.26.0\n\n" +
				"require (\n\tgithub.com/nonceforge/nonceforge/go v0.0.0\n\tgithub.com/nonceforge/nonceforge/go/lease v0.0.0\n)\n\n" +
				"replace github.com/nonceforge/nonceforge/go => " + root + "\n\n" +
				"replace github.com/nonceforge/nonceforge/go/lease => " + filepath.Join(root, "lease") + "\n"
			must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
			src := program(b.code)
			must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
			run := func(args ...string) {
				cmd := exec.Command("go", args...)
				cmd.Dir = dir
				// The module cache has what go/ and go/lease need once they were built
				// (make lint vets both first); the proxy is asked only on a bare machine.
				cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s (block %d): go %s: %v\n%s\n--- the program:\n%s", b.where, i, strings.Join(args, " "), err, out, src)
				}
			}
			if b.compileOnly != "" {
				run("build", "-o", filepath.Join(dir, "block"), ".")
				t.Logf("compiled, not run: %s", b.compileOnly)
				return
			}
			run("run", ".")
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
