package uuid

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// manual is a clock the test moves.
type manual struct {
	mu sync.Mutex
	t  time.Time
}

func (m *manual) now() time.Time  { m.mu.Lock(); defer m.mu.Unlock(); return m.t }
func (m *manual) set(t time.Time) { m.mu.Lock(); m.t = t; m.mu.Unlock() }

func TestV7LayoutIsRFC9562(t *testing.T) {
	clock := &manual{t: time.UnixMilli(1_700_000_000_123).Add(500 * time.Microsecond)}
	g := V7Generator{Now: clock.now}
	u := g.New()
	if u.Version() != 7 || u[8]>>6 != 0b10 {
		t.Fatalf("version %d, variant %b", u.Version(), u[8]>>6)
	}
	if u.UnixMilli() != 1_700_000_000_123 {
		t.Fatalf("unix ms %d", u.UnixMilli())
	}
	if frac := uint16(u[6]&0xf)<<8 | uint16(u[7]); frac != 2048 {
		t.Fatalf("the fraction of 0.5 ms is %d, want 2048", frac)
	}
	if tm, ok := u.Time(); !ok || tm.UnixMilli() != 1_700_000_000_123 {
		t.Fatalf("Time() = %v, %v", tm, ok)
	}
}

func TestV7MonotonicWhenTheClockStallsOrStepsBack(t *testing.T) {
	clock := &manual{t: time.UnixMilli(1_700_000_000_000)}
	g := V7Generator{Now: clock.now}
	last := g.New()
	for i := 0; i < 10_000; i++ {
		if i == 5000 {
			clock.set(time.UnixMilli(1_600_000_000_000)) // NTP steps back 3 years
		}
		u := g.New()
		if bytes.Compare(u[:], last[:]) <= 0 {
			t.Fatalf("#%d: %s after %s", i, u, last)
		}
		last = u
	}
	// 10,001 ids in a stalled millisecond spill into the next ones (1/4096 ms each).
	if last.UnixMilli() != 1_700_000_000_002 {
		t.Fatalf("last id's ms %d", last.UnixMilli())
	}
	clock.set(time.UnixMilli(1_700_000_000_010))
	if ms := g.New().UnixMilli(); ms != 1_700_000_000_010 {
		t.Fatalf("after the clock caught up: %d", ms)
	}
}

func TestV7ConcurrentIdsAreDistinctAndEachGoroutineSeesThemRise(t *testing.T) {
	const workers, each = 8, 50_000
	clock := &manual{t: time.UnixMilli(1_700_000_000_000)} // frozen: all ids from the counter
	g := V7Generator{Now: clock.now}
	out := make([][]UUID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ids := make([]UUID, each)
			for i := range ids {
				ids[i] = g.New()
				if i > 0 && bytes.Compare(ids[i][:], ids[i-1][:]) <= 0 {
					t.Errorf("goroutine %d: not increasing at %d", w, i)
					return
				}
			}
			out[w] = ids
		})
	}
	wg.Wait()
	seen := make(map[UUID]bool, workers*each)
	var ticks []uint64
	for _, ids := range out {
		for _, u := range ids {
			if seen[u] {
				t.Fatalf("duplicate %s", u)
			}
			seen[u] = true
			ticks = append(ticks, uint64(u.UnixMilli())<<12|uint64(u[6]&0xf)<<8|uint64(u[7]))
		}
	}
	// Every (ms, fraction) is used once: the 60-bit prefix alone orders them.
	sort.Slice(ticks, func(i, j int) bool { return ticks[i] < ticks[j] })
	for i := 1; i < len(ticks); i++ {
		if ticks[i] == ticks[i-1] {
			t.Fatalf("two ids share the time prefix %x", ticks[i])
		}
	}
}

func TestPgTuidDocumentedExamples(t *testing.T) {
	u, err := FromCompact("AYOFdhN7r5ymN75rjTKvbg")
	if err != nil || u.String() != "01838576-137b-af9c-a637-be6b8d32af6e" {
		t.Fatalf("%s, %v", u, err)
	}
	if got := time.UnixMilli(u.UnixMilli()).UTC().Format("2006-01-02 15:04:05.000"); got != "2022-09-28 18:57:31.515" {
		t.Fatalf("time %s", got)
	}
	if ToCompact(u[:]) != "AYOFdhN7r5ymN75rjTKvbg" {
		t.Fatal("to compact")
	}
	p, err := Parse("01838576-137B-AF9C-A637-BE6B8D32AF6E")
	if err != nil || p != u {
		t.Fatalf("parse: %v", err)
	}
}

func TestRFC9562Version1Time(t *testing.T) {
	// RFC 9562 Appendix A.1: a version 1 UUID from 2022-02-22 19:22:22 UTC.
	u, _ := Parse("c232ab00-9414-11ec-b3c8-9f6bdeced846")
	tm, ok := u.Time()
	if !ok || tm.Format(time.DateTime) != "2022-02-22 19:22:22" {
		t.Fatalf("%v %v", tm, ok)
	}
	nilID := UUID{}
	if _, ok := nilID.Time(); ok || nilID.Version() != -1 {
		t.Fatal("the nil UUID has no time and no RFC 9562 version")
	}
}

func TestTuid6AndStuid(t *testing.T) {
	now := time.Now()
	u := Tuid6()
	if d := u.UnixMilli() - now.UnixMilli(); d < 0 || d > 1000 {
		t.Fatalf("tuid6 ms off by %d", d)
	}
	if Tuid6At(time.UnixMilli(5)).UnixMilli() != 5 || Tuid6At(time.UnixMilli(-5)).UnixMilli() != 0 {
		t.Fatal("Tuid6At clamps to 1970")
	}
	seen := map[UUID]bool{}
	for range 100_000 {
		v := Tuid6()
		if seen[v] {
			t.Fatal("tuid6 repeated")
		}
		seen[v] = true
	}
	s := Stuid()
	if d := StuidTime(s).Sub(now); d < 0 || d > time.Second {
		t.Fatalf("stuid time off by %v", d)
	}
	c := ToCompact(s[:])
	if len(c) != 43 {
		t.Fatalf("stuid compact %q", c)
	}
	back, err := StuidFromCompact(c)
	if err != nil || back != s {
		t.Fatalf("stuid round trip: %v", err)
	}
}

func TestBadTextNamesPositionAndRule(t *testing.T) {
	for _, c := range []struct {
		text string
		want string
	}{
		{"AYOFdhN7r5ymN75rjTKvb", "22 characters"},
		{"AYOFdhN7r5ymN75rjTK+bg", "character 19"},
		{"AYOFdhN7r5ymN75rjTKvbh", "spare bits"}, // the last character's spare bits set
	} {
		_, err := FromCompact(c.text)
		if !errors.Is(err, ErrCompact) || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%q: %v (want %q)", c.text, err, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want string
	}{
		{"01838576-137b-af9c-a637-be6b8d32af6", "36 characters"},
		{"01838576x137b-af9c-a637-be6b8d32af6e", "character 8"},
		{"01838576-137g-af9c-a637-be6b8d32af6e", "character 12"},
	} {
		_, err := Parse(c.text)
		if !errors.Is(err, ErrText) || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%q: %v (want %q)", c.text, err, c.want)
		}
	}
}

func FuzzCompact(f *testing.F) {
	f.Add("AYOFdhN7r5ymN75rjTKvbg")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := FromCompact(s)
		if err == nil && ToCompact(u[:]) != s {
			t.Fatalf("%q parsed but spells %q: two spellings of one value", s, ToCompact(u[:]))
		}
	})
}

// The system clock path: ids made at a human pace carry the wall clock's
// millisecond, and a fraction that follows the clock within the millisecond;
// goroutines at full speed get strictly increasing, distinct ids.
func TestNewV7FollowsTheWallClock(t *testing.T) {
	var g V7Generator
	for range 200 {
		before := time.Now()
		u := g.New()
		after := time.Now()
		ms := u.UnixMilli()
		if ms < before.UnixMilli() || ms > after.UnixMilli() {
			t.Fatalf("id at %d ms, clock %d..%d", ms, before.UnixMilli(), after.UnixMilli())
		}
		frac := int64(u[6]&0xf)<<8 | int64(u[7])
		lo := tickOf(before)
		hi := tickOf(after)
		if tick := uint64(ms)<<12 | uint64(frac); tick+2 < lo || tick > hi+2 {
			t.Fatalf("tick %d outside the clock's %d..%d", tick, lo, hi)
		}
		time.Sleep(137 * time.Microsecond)
		if u6 := Tuid6(); u6.UnixMilli() < ms || u6.UnixMilli() > time.Now().UnixMilli() {
			t.Fatalf("tuid6 at %d ms, after a v7 at %d", u6.UnixMilli(), ms)
		}
	}
	var wg sync.WaitGroup
	out := make([][]UUID, 4)
	for w := range out {
		wg.Go(func() {
			for range 50_000 {
				out[w] = append(out[w], NewV7())
			}
		})
	}
	wg.Wait()
	seen := map[UUID]bool{}
	for _, ids := range out {
		for i, u := range ids {
			if seen[u] || (i > 0 && bytes.Compare(u[:], ids[i-1][:]) <= 0) {
				t.Fatalf("id %s repeated or not increasing", u)
			}
			seen[u] = true
		}
	}
}

func TestEncodings(t *testing.T) {
	u := NewV7()
	j, err := json.Marshal(struct{ ID UUID }{u})
	if err != nil || string(j) != `{"ID":"`+u.String()+`"}` {
		t.Fatalf("json: %s %v", j, err)
	}
	var back struct{ ID UUID }
	if err := json.Unmarshal(j, &back); err != nil || back.ID != u {
		t.Fatalf("json back: %v", err)
	}
	b, _ := u.MarshalBinary()
	var fromBin, fromText, fromBytes UUID
	if err := fromBin.UnmarshalBinary(b); err != nil || fromBin != u {
		t.Fatal(err)
	}
	v, _ := u.Value()
	if err := fromText.Scan(v); err != nil || fromText != u {
		t.Fatal(err)
	}
	if err := fromBytes.Scan(u[:]); err != nil || fromBytes != u {
		t.Fatal(err)
	}
	if err := fromBytes.UnmarshalBinary(b[:3]); !errors.Is(err, ErrBinary) {
		t.Errorf("3 bytes: %v", err)
	}
	if err := fromBytes.Scan(7); err == nil || !strings.HasPrefix(err.Error(), "uuid: ") {
		t.Errorf("Scan(7): %v", err)
	}
	if err := fromText.UnmarshalText([]byte("not-a-uuid")); !errors.Is(err, ErrText) {
		t.Errorf("bad text: %v", err)
	}
}
