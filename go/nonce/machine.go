package nonce

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MachineID is a generator's machine id, chosen on purpose: Machine(n). The
// zero value is no id, which New refuses with ErrNoMachineID — there is no
// default id, because two members on one id repeat each other's nonces.
type MachineID struct {
	id  int
	set bool
}

// Machine is the machine id n (0..511, or 0..65535 with Options.Layout Wide;
// New checks the range).
func Machine(n int) MachineID { return MachineID{id: n, set: true} }

// Int is the id as a number, and whether one was chosen.
func (m MachineID) Int() (int, bool) { return m.id, m.set }

// String is the id, or "none".
func (m MachineID) String() string {
	if !m.set {
		return "none"
	}
	return strconv.Itoa(m.id)
}

// MachineIDFromEnv is the number at the end of environment variable name
// (POD_NAME=nonces-12 gives 12), as the core reads it.
func MachineIDFromEnv(name string) (int, error) {
	return MachineIDFromEnvIn(Standard, name)
}

// MachineIDFromEnvIn is MachineIDFromEnv for a machine id of layout
// (0..65535 in Wide).
func MachineIDFromEnvIn(layout Layout, name string) (int, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return 0, &Error{Op: "MachineIDFromEnv", Arg: name, Rule: "the environment variable is not set"}
	}
	return MachineIDFromTrailingNumberIn(layout, name, v)
}

// MachineIDFromTrailingNumber is the number at the end of value; name labels errors.
func MachineIDFromTrailingNumber(name, value string) (int, error) {
	return MachineIDFromTrailingNumberIn(Standard, name, value)
}

// MachineIDFromTrailingNumberIn is MachineIDFromTrailingNumber for a machine
// id of layout.
func MachineIDFromTrailingNumberIn(layout Layout, name, value string) (int, error) {
	i := len(value)
	for i > 0 && value[i-1] >= '0' && value[i-1] <= '9' {
		i--
	}
	if i == len(value) {
		return 0, &Error{Op: "MachineIDFromEnv", Arg: name, Rule: fmt.Sprintf("%q does not end in a number", value)}
	}
	n, err := strconv.ParseUint(value[i:], 10, 64)
	if err != nil || n > uint64(layout.MaxMachineID()) {
		return 0, &Error{Op: "MachineIDFromEnv", Arg: name, Rule: fmt.Sprintf("%q: the machine id must be in 0..%d", value, layout.MaxMachineID())}
	}
	return int(n), nil
}

// MachineIDFromHostList is host's position (from 0) in hosts, used in the
// order given, never sorted: appending a host keeps every existing host's
// id. Empty and repeated entries are errors.
func MachineIDFromHostList(hosts []string, host string) (int, error) {
	found := -1
	for i, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			return 0, &Error{Op: "MachineIDFromHostList", Arg: "hosts", Rule: fmt.Sprintf("entry %d is empty", i)}
		}
		for j := range i {
			if strings.TrimSpace(hosts[j]) == h {
				return 0, &Error{Op: "MachineIDFromHostList", Arg: "hosts", Rule: fmt.Sprintf("%q is listed twice (entries %d and %d)", h, j, i)}
			}
		}
		if h == host && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return 0, &Error{Op: "MachineIDFromHostList", Arg: "host", Rule: fmt.Sprintf("%q is not in the list of %d hosts", host, len(hosts))}
	}
	if found > maxMachineID {
		return 0, &Error{Op: "MachineIDFromHostList", Arg: "hosts", Rule: fmt.Sprintf("%q is entry %d: a machine id is at most 511", host, found)}
	}
	return found, nil
}
