package gen_test

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
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
	// And, outermost rows aside, exactly one data-word width.
	if w := c.Kinds["words:1-byte"] + c.Kinds["words:2-byte"] + c.Kinds["words:4-byte"]; w != c.Steps-c.Kinds["cfa:outermost"] {
		t.Errorf("data-word widths add up to %d of %d steps with a CFA: %v", w, c.Steps-c.Kinds["cfa:outermost"], c.Kinds)
	}
	c2 := gen.NewCoverage()
	c2.Add(p, all[:1])
	if c2.FuncsRun != 0 || c2.InsnsRun != 1 || c2.RowsRun != 1 {
		t.Errorf("one stub instruction: %+v", c2)
	}
}
