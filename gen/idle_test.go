package gen_test

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/target"
)

// TestIdleShares checks the large tables a run of consecutive seeds gets,
// wherever it starts: at least 1 program in 20 with 1,000 or more idle
// functions, and in every 500 one with 10,000 or more.
func TestIdleShares(t *testing.T) {
	for _, first := range []int64{0, 7, 1 << 33, -250} {
		large, huge := 0, 0
		for s := first; s < first+500; s++ {
			n := gen.IdleCount(s)
			if n >= gen.IdleLarge {
				large++
			}
			if n >= gen.IdleHuge {
				huge++
			}
		}
		if large < 500/20 || huge < 1 {
			t.Errorf("seeds %d..%d: %d programs with %d+ idle functions, %d with %d+", first, first+499, large, gen.IdleLarge, huge, gen.IdleHuge)
		}
	}
}

// TestIdleFuncsInTheTable checks that a large table's idle functions are
// laid out with the rest, get one FDE each, lie before, between and after
// the functions that run, and that Options.Idle overrides the seed.
func TestIdleFuncsInTheTable(t *testing.T) {
	for _, abi := range target.All {
		p := mustGenerate(t, abi, 500, gen.Options{})
		n := p.IdleFuncs()
		if n != gen.IdleCount(500) || n < gen.IdleHuge {
			t.Fatalf("%s: %d idle functions, want %d", abi.Name(), n, gen.IdleCount(500))
		}
		if got := len(p.FDEs()); got < n+2 {
			t.Errorf("%s: %d FDEs for %d idle functions", abi.Name(), got, n)
		}
		first, last := -1, -1
		for i, f := range p.Funcs {
			if f.Idle {
				if first < 0 {
					first = i
				}
				last = i
				if len(f.Rows) == 0 || f.Size == 0 || f.Pattern != "" {
					t.Fatalf("%s: idle %s: %d rows, %d bytes, pattern %q", abi.Name(), f.Name, len(f.Rows), f.Size, f.Pattern)
				}
			}
		}
		if first != 1 || last != len(p.Funcs)-1 {
			t.Errorf("%s: idle functions from %d to %d of %d: not right after the entry stub and at the end", abi.Name(), first, last, len(p.Funcs))
		}
		none := mustGenerate(t, abi, 500, gen.Options{Idle: -1})
		if none.IdleFuncs() != 0 || len(none.Funcs)+n != len(p.Funcs) {
			t.Errorf("%s: Idle -1: %d idle functions, %d functions (with: %d)", abi.Name(), none.IdleFuncs(), len(none.Funcs), len(p.Funcs))
		}
		some := mustGenerate(t, abi, 3, gen.Options{Idle: 300})
		if some.IdleFuncs() != 300 {
			t.Errorf("%s: Idle 300: %d idle functions", abi.Name(), some.IdleFuncs())
		}
	}
}
