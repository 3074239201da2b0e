package nonce

// blockLen is how many ticks a Local reserves at once: 64-bit counters hold
// 8192 a millisecond, so their blocks are small, to waste little when a Local
// is dropped (the Rust core's LocalNonces takes the same sizes).
func blockLen(bits int) uint64 {
	if bits == 64 {
		return 256
	}
	return 1 << 16
}

// lanes is how many encrypted nonces a Local makes at once: a block cipher
// runs independent blocks side by side (Speck64 four at a time here). AES-256
// nonces, encrypted in registers, skip the buffer: the CPU overlaps
// independent calls.
const lanes = 8

// Local is a handle on a Generator for one goroutine at a time (not safe for
// concurrent use; make one per goroutine). Counter nonces come from blocks of
// ticks reserved with one atomic operation, so the hot path writes nothing
// shared; encrypted nonces are made eight at a time and handed out one by
// one. Ticks left in a block when a Local is dropped are never issued.
//
// The deadline (SetValidUntil) is checked as the Rust core's LocalNonces
// checks it: when a block is reserved (reading the clock) and, between
// blocks, through the generator's stop flag, which Disable, CheckDeadline (a
// lease's timer) and every clock read past the deadline raise. Nonces of a
// block carry timestamps at or below the reading that admitted the block.
type Local struct {
	g      *Generator
	next   [3]uint64
	end    [3]uint64
	enc    [3][lanes]Nonce
	handed [3]int // of enc; lanes: none left
}

// Local returns a new handle for one goroutine.
func (g *Generator) Local() *Local {
	return &Local{g: g, handed: [3]int{lanes, lanes, lanes}}
}

// tick takes the next tick of the local block, reserving a block when empty.
func (l *Local) tick(bits, i int) (uint64, error) {
	if l.next[i] == l.end[i] {
		g := l.g
		if err := g.check(); err != nil {
			return 0, err
		}
		if err := g.checkDeadline(); err != nil {
			return 0, err
		}
		n := blockLen(bits)
		first := g.counters[i].Add(n) - n
		if err := g.admit(bits, first+n-1); err != nil {
			g.counts.ticksUnused[i].Add(n)
			return 0, err
		}
		l.next[i], l.end[i] = first, first+n
	}
	t := l.next[i]
	l.next[i]++
	return t, nil
}

// Counter returns a counter nonce of 64, 96 or 128 bits.
func (l *Local) Counter(bits int) (Nonce, error) {
	var n Nonce
	if bits == 128 && l.next[2] != l.end[2] {
		// The common case, kept short: no shared write.
		if l.g.state.Load() != stateLive {
			return n, l.g.stopErr()
		}
		t := l.next[2]
		l.next[2]++
		return Nonce{hi: l.g.hi128, lo: t, bits: 128}, nil
	}
	i := l.g.sizeOf(bits)
	if i < 0 {
		return n, badSize("Local.Counter", bits)
	}
	if err := l.g.check(); err != nil {
		return n, err
	}
	t, err := l.tick(bits, i)
	if err != nil {
		return n, err
	}
	l.g.tickNonce(&n, bits, t)
	return n, nil
}

// Encrypted returns an encrypted nonce (the generator needs a Key).
func (l *Local) Encrypted(bits int) (Nonce, error) {
	var n Nonce
	g := l.g
	i := g.sizeOf(bits)
	if i < 0 {
		return n, badSize("Local.Encrypted", bits)
	}
	if g.ciphers == nil {
		return n, g.noKey("Local.Encrypted", needKey)
	}
	if err := g.check(); err != nil {
		return n, err
	}
	if bits == 128 && g.ciphers.s128 == nil {
		// AES-256 in registers: one block at a time is as fast (the CPU
		// overlaps independent calls) as eight through a buffer.
		t, err := l.tick(bits, i)
		if err != nil {
			return n, err
		}
		hi, lo := g.ciphers.aesEnc.Encrypt(g.hi128, t)
		return Nonce{hi: hi, lo: lo, bits: 128}, nil
	}
	if l.handed[i] == lanes {
		batch := &l.enc[i]
		for j := range batch {
			t, err := l.tick(bits, i)
			if err != nil {
				// The ticks taken so far are dropped: never issued.
				return n, err
			}
			g.tickNonce(&batch[j], bits, t)
		}
		if s64 := g.ciphers.s64; bits == 64 && s64 != nil {
			// Speck64 four blocks side by side (a round waits on the last).
			for j := 0; j < lanes; j += 4 {
				v := [4]uint64{batch[j].hi, batch[j+1].hi, batch[j+2].hi, batch[j+3].hi}
				s64.encrypt4(&v)
				for k := range v {
					batch[j+k].hi = v[k]
				}
			}
		} else {
			for j := range batch {
				g.ciphers.encrypt(&batch[j])
			}
		}
		l.handed[i] = 0
	}
	n = l.enc[i][l.handed[i]]
	l.enc[i][l.handed[i]] = Nonce{}
	l.handed[i]++
	return n, nil
}

// Sortable returns a sortable nonce from the generator's shared sequence
// (one strictly increasing sequence across goroutines).
func (l *Local) Sortable(bits int) (Nonce, error) { return l.g.Sortable(bits) }
