package nonce

import "fmt"

// Layout is where the machine id sits in a nonce, and how wide it is. Every
// member of a fleet uses one layout: the bytes of a nonce do not say which
// made them (docs/contracts.md, "The wide layout").
type Layout int

const (
	// Standard is NoNoncense's layout, the default: a 9-bit machine id
	// (0..511), nonces of 64, 96 and 128 bits.
	Standard Layout = iota
	// Wide gives the machine id 16 bits (0..65535) at 96 bits (timestamp 42 |
	// machine 16 | counter 38) and 128 bits (42 | 16 | 6 zero bits | 64);
	// 64-bit nonces are refused (ErrWideLayoutNo64).
	Wide
)

// ParseLayout reads a layout's name: "standard" or "wide".
func ParseLayout(name string) (Layout, error) {
	switch name {
	case "standard":
		return Standard, nil
	case "wide":
		return Wide, nil
	}
	if len(name) > 40 {
		name = name[:40]
	}
	return Standard, &Error{Op: "ParseLayout", Arg: "layout", Rule: fmt.Sprintf("%q is not a layout: it must be \"standard\" (9-bit machine ids, NoNoncense's) or \"wide\" (16-bit machine ids, 96 and 128 bits)", name)}
}

// String is the layout's name, as ParseLayout reads it.
func (l Layout) String() string {
	switch l {
	case Standard:
		return "standard"
	case Wide:
		return "wide"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// MaxMachineID is the largest machine id of the layout: 511 or 65535.
func (l Layout) MaxMachineID() int {
	if l == Wide {
		return 1<<16 - 1
	}
	return maxMachineID
}

// machineShift is where the machine id starts, counted from the least
// significant bit of a nonce of bits (the counter field, and at 128 bits the
// zero bits, lie below it).
func (l Layout) machineShift(bits int) uint {
	w := 9
	if l == Wide {
		w = 16
	}
	return uint(bits - 42 - w)
}

// counterBits is the counter field's width: 13, 45, 64 (standard); 38, 64 (wide).
func (l Layout) counterBits(bits int) uint {
	if bits == 128 {
		return 64
	}
	return l.machineShift(bits)
}

func wide64(op string) error {
	return &Error{Op: op, Arg: "bits", Rule: "the wide layout has no 64-bit nonces: 64 bits leave no room for a 16-bit machine id; use 96 or 128 bits, or the standard layout (9-bit machine ids)", Err: ErrWideLayoutNo64}
}

// setLayout puts the layout and what follows from it (with the machine id)
// into g.
func (g *Generator) setLayout(l Layout) {
	g.layout = l
	g.k96 = l.counterBits(96)
	g.m96 = g.machine << g.k96
	g.m128 = g.machine << (l.machineShift(128) - 64)
}

// sizeOf is the size's index (64, 96, 128: 0, 1, 2) in this generator's layout, or -1:
// bits not a nonce size, or 64 in the wide layout (badSize says which). Small
// enough to inline on every call's path.
func (g *Generator) sizeOf(bits int) int {
	if bits == 96 || bits == 128 || (bits == 64 && g.layout != Wide) {
		return (bits - 64) >> 5
	}
	return -1
}

//go:noinline
func badSize(op string, bits int) error {
	if bits == 64 {
		return wide64(op)
	}
	return badBits(op, bits)
}
