package nonce

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Parts are the fields of a counter or sortable nonce.
type Parts struct {
	// UnixMilli is the millisecond the nonce was made in (Unix ms).
	UnixMilli int64
	MachineID int
	// Counter: the counter field (at 128 bits the low 64 bits; the 13 bits
	// above, 6 in the wide layout, are zero).
	Counter uint64
}

// Time is the millisecond the nonce was made in.
func (p Parts) Time() time.Time { return time.UnixMilli(p.UnixMilli) }

// Decompose reads the fields of a counter or sortable nonce (8, 12 or 16
// bytes) made in the standard layout with epoch (the zero time.Time:
// DefaultEpoch). Decrypt an encrypted nonce first. Layout.Decompose reads
// either layout.
func Decompose(nonce []byte, epoch time.Time) (Parts, error) {
	return Standard.Decompose(nonce, epoch)
}

// Decompose reads the fields of a counter or sortable nonce made in this
// layout (the bytes do not say which: every member of a fleet uses one).
func (l Layout) Decompose(nonce []byte, epoch time.Time) (Parts, error) {
	epochUnixMilli, err := epochMilli("Decompose", epoch)
	if err != nil {
		return Parts{}, err
	}
	if l != Standard && l != Wide {
		return Parts{}, &Error{Op: "Decompose", Arg: "layout", Rule: fmt.Sprintf("must be Standard or Wide, got %d", int(l))}
	}
	var p Parts
	var ts uint64
	mmask := uint64(l.MaxMachineID())
	switch len(nonce) {
	case 8:
		if l == Wide {
			return p, wide64("Decompose")
		}
		v := binary.BigEndian.Uint64(nonce)
		ts, p.MachineID, p.Counter = v>>22, int(v>>13&0x1ff), v&0x1fff
	case 12:
		k := l.counterBits(96)
		hi := uint64(binary.BigEndian.Uint32(nonce[:4]))
		lo := binary.BigEndian.Uint64(nonce[4:])
		ts, p.MachineID, p.Counter = hi<<10|lo>>54, int(lo>>k&mmask), lo&(1<<k-1)
	case 16:
		hi := binary.BigEndian.Uint64(nonce[:8])
		s := l.machineShift(128) - 64
		if hi&(1<<s-1) != 0 {
			return p, &Error{Op: "Decompose", Arg: "nonce", Rule: fmt.Sprintf("bits %d..63 of a 128-bit counter nonce are zero: is it encrypted?", 64-s)}
		}
		ts, p.MachineID, p.Counter = hi>>22, int(hi>>s&mmask), binary.BigEndian.Uint64(nonce[8:])
	default:
		return p, &Error{Op: "Decompose", Arg: "nonce", Rule: fmt.Sprintf("a nonce is 8, 12 or 16 bytes (64, 96 or 128 bits), got %d bytes", len(nonce))}
	}
	p.UnixMilli = int64(ts) + epochUnixMilli
	return p, nil
}
