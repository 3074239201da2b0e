package scratch

import (
	"sync"
	"testing"
)

// No block is lent twice at once: 16 goroutines (more than there are slots)
// write their own mark into every block they hold and find it unchanged.
func TestLoansAreExclusive(t *testing.T) {
	var bs Blocks
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 20000 {
				l := bs.Get(uint64(i))
				if *l.B != [16]byte{} {
					t.Errorf("a block lent dirty: %x", *l.B)
					return
				}
				for k := range l.B {
					l.B[k] = byte(g + 1)
				}
				for k := range l.B {
					if l.B[k] != byte(g+1) {
						t.Errorf("block shared: %x", *l.B)
						return
					}
				}
				l.Return()
			}
		})
	}
	wg.Wait()
	// Every slot is free again.
	for i := range bs.s {
		if bs.s[i].busy.Load() != 0 {
			t.Fatalf("slot %d still busy", i)
		}
	}
}

func BenchmarkGetReturn(b *testing.B) {
	var bs Blocks
	for i := 0; i < b.N; i++ {
		bs.Get(uint64(i)).Return()
	}
}
