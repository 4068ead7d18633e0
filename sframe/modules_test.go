package sframe

import (
	"errors"
	"testing"
)

// TestBacktraceAcrossModules splits x86Chain's functions into two modules,
// each with its own table, and unwinds across them: with and without a
// row cache the frames are the single table's. Each PC must be looked up
// in its own module's table: the other table has no FDE for it.
func TestBacktraceAcrossModules(t *testing.T) {
	t.Parallel()
	_, regs, mem, wants := x86Chain(t, 3)
	const split = 0x401180 // _start and function 1 below, functions 2 and 3 above
	lo := unwTable(t, ABIAMD64LE, mkFDE(0x400000, 0x10, outermostRow), mkFDE(0x401100, 0x20, x86Prologue...))
	hi := unwTable(t, ABIAMD64LE, mkFDE(0x401200, 0x20, x86Prologue...), mkFDE(0x401300, 0x20, x86Prologue...))
	ms := Modules{{Start: 0x400000, End: split, Table: lo}, {Start: split, End: 0x500000, Table: hi}}
	u := Unwinder{Modules: ms}
	got, err := u.Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, wants)

	c := NewRowCache(nil)
	c.ResetModules(ms)
	c.Recheck = 1
	cu := Unwinder{Modules: ms, Rows: c}
	for range 3 {
		got, err := cu.Backtrace(regs, mem, nil)
		if err != nil || len(got) != len(wants) || !got[len(got)-1].Outermost {
			t.Fatalf("cached: %d frames, %v", len(got), err)
		}
		for i := range got {
			if got[i].PC != wants[i].pc || got[i].CFA != wants[i].cfa {
				t.Errorf("cached frame %d: pc %#x cfa %#x, want %#x %#x", i, got[i].PC, got[i].CFA, wants[i].pc, wants[i].cfa)
			}
		}
	}

	// A PC in no module has no FDE; so has one whose module's table lacks it.
	for _, pc := range []uint64{0x3fffff, 0x500000} {
		if _, _, err := ms.FindRow(pc); !errors.Is(err, ErrNoFDE) {
			t.Errorf("FindRow(%#x) outside every module: %v", pc, err)
		}
	}
	swapped := Modules{{Start: 0x400000, End: split, Table: hi}, {Start: split, End: 0x500000, Table: lo}}
	if _, _, err := swapped.FindRow(0x401300); !errors.Is(err, ErrNoFDE) {
		t.Errorf("a PC looked up in the wrong module's table: %v", err)
	}
	if m := ms.Find(split); m == nil || m.Table != hi {
		t.Errorf("Find at the boundary")
	}
}
