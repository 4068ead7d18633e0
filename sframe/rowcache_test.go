package sframe

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestRowCacheAgreesWithTable looks every PC around both functions of a
// section up through a cache, several times over (first lookups, hits and
// rechecks at every stride), and requires the table's own answer each time.
func TestRowCacheAgreesWithTable(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV2AMD64(o, false))
		for _, recheck := range []int{-1, 0, 1, 3} {
			c := NewRowCache(tab)
			c.Recheck = recheck
			// 0x10000-0x11130 has gaps, both functions and the end of
			// the section; enough PCs to make the cache grow twice. The
			// same PCs with high bits set are in no function and share
			// probe sequences with them (a cache that served another
			// PC's entry would be caught).
			var pcs []uint64
			for pc := uint64(0x10000); pc < 0x11130; pc++ {
				pcs = append(pcs, pc, pc|uint64(pc&3)<<40)
			}
			rnd := rand.New(rand.NewPCG(1, 2))
			for round := 0; round < 4; round++ {
				rnd.Shuffle(len(pcs), func(i, j int) { pcs[i], pcs[j] = pcs[j], pcs[i] })
				for _, pc := range pcs {
					f, r, err := c.FindRow(pc)
					wf, wr, werr := tab.FindRow(pc)
					sameErr := (err == nil) == (werr == nil) && (err == nil || err.Error() == werr.Error())
					if f != wf || r != wr || !sameErr {
						t.Fatalf("%s recheck %d round %d: cached FindRow(%#x) = %+v %+v %v, table %+v %+v %v",
							o, recheck, round, pc, f, r, err, wf, wr, werr)
					}
				}
			}
			if c.Table() != tab {
				t.Errorf("Table() is not the table given")
			}
		}
	}
}

// TestRowCacheCatchesAChangedTable changes an FRE's CFA offset in the
// decoded buffer after the cache has seen its PC: the sampled recheck
// must report the difference instead of serving the remembered row.
func TestRowCacheCatchesAChangedTable(t *testing.T) {
	t.Parallel()
	o := binary.LittleEndian
	tab := decodeOK(t, "le", secV2AMD64(o, false))
	c := NewRowCache(tab)
	c.Recheck = 4
	const pc = 0x11100 // f1's row @0: CFA = rbp+256, a 2-byte word at 78
	if _, r, err := c.FindRow(pc); err != nil || r.CFA.Offset != 256 {
		t.Fatalf("first lookup: %+v, %v", r, err)
	}
	tab.buf[78]++
	var mismatch error
	for i := 0; i < 4 && mismatch == nil; i++ {
		_, _, mismatch = c.FindRow(pc)
	}
	if !errors.Is(mismatch, ErrCacheMismatch) {
		t.Fatalf("4 hits after the table changed: %v, want ErrCacheMismatch", mismatch)
	}
	// Reset forgets: the table's new answer is served from then on.
	c.Reset(tab)
	if _, r, err := c.FindRow(pc); err != nil || r.CFA.Offset != 257 {
		t.Fatalf("after Reset: %+v, %v; want CFA offset 257", r, err)
	}
}

// TestUnwinderWithRowCache: a backtrace through a cache equals one
// through the table, at every depth, and stops allocating once the cache
// has seen the PCs.
func TestUnwinderWithRowCache(t *testing.T) {
	tab, regs, mem, want := x86Chain(t, 5)
	for k := range want {
		want[k].fdeStart = 0 // frames through the cache carry no FDE
	}
	plain := Unwinder{Table: tab}
	cached := Unwinder{Table: tab, Rows: NewRowCache(tab)}
	dst := make([]Frame, 0, 16)
	for i := 0; i < 3; i++ {
		got, err := cached.Backtrace(regs, mem, dst)
		if err != nil {
			t.Fatal(err)
		}
		checkFrames(t, got, want)
		ref, _ := plain.Backtrace(regs, mem, nil)
		for k := range ref {
			// Through the cache, frames leave FDE and Row zero.
			if g, w := got[k], ref[k]; g.FDE != (Func{}) || g.Row != (Row{}) {
				t.Fatalf("frame %d: FDE %+v, row %+v through the cache, want them zero", k, g.FDE, g.Row)
			} else if g.FDE, g.Row = w.FDE, w.Row; g != w {
				t.Fatalf("frame %d: cached %+v, table %+v", k, g, w)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { cached.Backtrace(regs, mem, dst) }); n != 0 {
		t.Errorf("a cached backtrace allocates %v times", n)
	}
}
