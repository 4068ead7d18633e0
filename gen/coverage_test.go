package gen_test

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

func TestCoverageCounts(t *testing.T) {
	t.Parallel()
	p := mustGenerate(t, target.S390X, 5, gen.Options{})
	var all []uint64
	calls := 0
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			all = append(all, f.Addr+uint64(in.Off))
			if in.Call {
				calls++
			}
		}
	}
	c := gen.NewCoverage()
	c.Add(p, all)
	if c.FuncsRun != c.Funcs || c.InsnsRun != c.Insns || c.RowsRun != c.Rows || c.Steps != len(all) {
		t.Fatalf("every PC executed once: %+v", c)
	}
	if calls == 0 || c.Shapes["call"] != calls {
		t.Errorf("calls: %d counted, %d in the program", c.Shapes["call"], calls)
	}
	// Every step has exactly one CFA kind among the base kinds.
	base := c.Kinds["cfa:sp"] + c.Kinds["cfa:fp"] + c.Kinds["cfa:other-register"] + c.Kinds["cfa:outermost"]
	if base != c.Steps {
		t.Errorf("CFA kinds add up to %d of %d steps: %v", base, c.Steps, c.Kinds)
	}
	c2 := gen.NewCoverage()
	c2.Add(p, all[:1])
	if c2.FuncsRun != 0 || c2.InsnsRun != 1 || c2.RowsRun != 1 {
		t.Errorf("one stub instruction: %+v", c2)
	}
}

// The kinds of the far-code, new-stack and empty-fde patterns: steps in
// far functions, in functions whose FDE has no rows, and outermost rows
// past the stub.
func TestCoverageFarFreshEmpty(t *testing.T) {
	t.Parallel()
	p := mustGenerate(t, target.AArch64, 1, gen.Options{Patterns: []string{"far-code", "new-stack", "empty-fde"}})
	var all []uint64
	far, empty, mid, midCalls := 0, 0, 0, 0
	for i, f := range p.Funcs {
		for _, in := range f.Insns {
			all = append(all, f.Addr+uint64(in.Off))
			switch {
			case f.Far:
				far++
			case f.EmptyFDE:
				empty++
			}
			if i > 0 && in.Row.RA.Kind == sframe.RuleUndefined {
				mid++
				if in.Call {
					midCalls++
				}
			}
		}
	}
	c := gen.NewCoverage()
	c.Add(p, all)
	if far == 0 || empty == 0 || mid == 0 || midCalls == 0 {
		t.Fatalf("program lacks a far function (%d), an empty FDE (%d) or an outermost row past the stub (%d, calls %d)", far, empty, mid, midCalls)
	}
	if c.Kinds["fde:far"] != far || c.Kinds["fde:empty"] != empty || c.Shapes["outermost-mid-function"] != mid ||
		c.Shapes["call-on-fresh-stack"] != midCalls {
		t.Errorf("fde:far %d, fde:empty %d, outermost-mid-function %d (calls %d); want %d, %d, %d (%d)",
			c.Kinds["fde:far"], c.Kinds["fde:empty"], c.Shapes["outermost-mid-function"], c.Shapes["call-on-fresh-stack"],
			far, empty, mid, midCalls)
	}
}
