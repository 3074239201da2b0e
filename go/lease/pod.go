package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nonceforge/nonceforge/go/nonce"
)

// PodIndexLabel is the label a StatefulSet's controller puts on each pod
// (Kubernetes 1.28+), readable through the downward API as an environment
// variable or a file.
const PodIndexLabel = "apps.kubernetes.io/pod-index"

// PodIndex reads a StatefulSet pod's index as a machine id from source:
// "env:VAR" (a variable holding the index, or a name ending in it: the pod
// name "web-3"), "file:PATH" (a downward API labels file, its
// apps.kubernetes.io/pod-index line) or "hostname" (the host name's trailing
// number). The Rust lease crate's rule (testdata/vectors/pod-index.json ties
// the two). The id is of the standard layout (0..511); PodIndexIn reads one
// of the wide layout.
func PodIndex(source string) (int, error) {
	return PodIndexIn(source, nonce.Standard)
}

// PodIndexIn is PodIndex for a machine id of layout: up to 65535 in
// nonce.Wide (a StatefulSet of more than 512 pods).
func PodIndexIn(source string, layout nonce.Layout) (int, error) {
	bad := func(value, rule string) error { return badOption("pod index source", strconv.Quote(value), rule) }
	switch {
	case strings.HasPrefix(source, "env:"):
		name := source[len("env:"):]
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return 0, bad(source, "env:VAR needs a variable name (no '=' or NUL)")
		}
		id, err := nonce.MachineIDFromEnvIn(layout, name)
		if err != nil {
			return 0, bad(source, err.Error())
		}
		return id, nil
	case strings.HasPrefix(source, "file:"):
		path := source[len("file:"):]
		if path == "" {
			return 0, bad(source, "file:PATH needs a path")
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return 0, bad(path, "the labels file cannot be read (a downwardAPI volume with metadata.labels)")
		}
		for _, line := range strings.Split(string(text), "\n") {
			v, ok := strings.CutPrefix(strings.TrimSpace(line), PodIndexLabel+"=")
			if !ok {
				continue
			}
			digits := strings.Trim(strings.TrimSpace(v), `"`)
			n, err := strconv.ParseUint(digits, 10, 64)
			if digits == "" || strings.Trim(digits, "0123456789") != "" || err != nil {
				return 0, bad(path, "apps.kubernetes.io/pod-index is not a number")
			}
			if n > uint64(layout.MaxMachineID()) {
				return 0, bad(path, fmt.Sprintf("the machine id must be in 0..%d, got %d", layout.MaxMachineID(), n))
			}
			return int(n), nil
		}
		return 0, bad(path, "the labels file has no apps.kubernetes.io/pod-index line (Kubernetes 1.28+ sets it on StatefulSet pods)")
	case source == "hostname":
		host, err := os.Hostname()
		if err != nil {
			return 0, bad(source, "this host's name cannot be read")
		}
		id, err := nonce.MachineIDFromTrailingNumberIn(layout, "hostname", host)
		if err != nil {
			return 0, bad(source, err.Error())
		}
		return id, nil
	}
	return 0, bad(source, "use env:VAR, file:PATH (a downward API labels file) or hostname")
}

// AcquireExact leases exactly id — a StatefulSet pod's index — waiting while
// another member holds it (the pod this one replaces, still running or cut
// off; or a second pod with the same index), up to maxWait (0: as long as ctx
// allows). The wait is logged once, at warning level, naming the id.
// o.IDs is ignored: the id is the one given. Fails as Acquire does, and with
// ErrAllTaken when maxWait passes.
func AcquireExact(ctx context.Context, url string, id int, o Options, maxWait time.Duration) (*Lease, error) {
	if id < 0 || id > o.Layout.MaxMachineID() {
		return nil, badOption("machine id", id, fmt.Sprintf("must be in 0..%d (the %s layout)", o.Layout.MaxMachineID(), o.Layout))
	}
	o.IDs = strconv.Itoa(id)
	s, err := settle(o)
	if err != nil {
		return nil, err
	}
	retry := min(max(s.ttl/4, 50*time.Millisecond), time.Second)
	start := time.Now()
	told := false
	for {
		l, err := Acquire(ctx, url, o)
		if !errors.Is(err, ErrAllTaken) || (maxWait > 0 && time.Since(start)+retry > maxWait) {
			return l, err
		}
		if !told {
			s.log.Warn("nonceforge lease: machine id is held by another member (the pod this one replaces, or another with the same index): waiting for it to be released or to lapse (at most the TTL after that member stops renewing)",
				"machine_id", id, "ttl", s.ttl)
			told = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retry):
		}
	}
}
