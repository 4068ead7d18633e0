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
	c2 := gen.NewCoverage()
	c2.Add(p, all[:1])
	if c2.FuncsRun != 0 || c2.InsnsRun != 1 || c2.RowsRun != 1 {
		t.Errorf("one stub instruction: %+v", c2)
	}
}

// TestCoverageSignalShapes: the instruction after a trampoline's
// rt_sigreturn is the one the signal interrupted, and its shape is
// counted.
func TestCoverageSignalShapes(t *testing.T) {
	t.Parallel()
	for _, abi := range []target.Target{target.AArch64, target.X86_64} {
		// A program with a trampoline and a leaf.
		var p *gen.Program
		var leafEntry uint64
		for seed := int64(1); leafEntry == 0 || p.SignalTrampoline() == nil; seed++ {
			if seed > 100 {
				t.Fatalf("%s: no program with a signal handler and a leaf", abi.Name())
			}
			p, leafEntry = mustGenerate(t, abi, seed, gen.Options{SFrameVersion: 3}), 0
			for _, f := range p.Funcs[1:] {
				if f.Pattern == "leaf" {
					leafEntry = f.Addr
				}
			}
		}
		tramp := p.SignalTrampoline()
		sigreturn := tramp.Addr + uint64(tramp.Insns[len(tramp.Insns)-1].Off)
		// A leaf's first instruction (the RA in the link register where
		// the target has one) and the stub's first, each interrupted.
		c := gen.NewCoverage()
		c.Add(p, []uint64{p.Entry, sigreturn, leafEntry, sigreturn, p.Entry})
		want := map[string]int{"signal": 2, "signal-interrupted-outermost": 1, "signal-interrupted-rule-edge": 1}
		if abi.HasLinkRegister() {
			want["signal-interrupted-ra-in-lr"] = 1
		}
		for k, n := range want {
			if c.Shapes[k] != n {
				t.Errorf("%s: shape %s counted %d times, want %d (%v)", abi.Name(), k, c.Shapes[k], n, c.Shapes)
			}
		}
		if c.Shapes["signal-interrupted-ra-in-lr"] != want["signal-interrupted-ra-in-lr"] {
			t.Errorf("%s: RA-in-LR counted %d times", abi.Name(), c.Shapes["signal-interrupted-ra-in-lr"])
		}
		// Without rt_sigreturn before them, the same PCs count nothing.
		c2 := gen.NewCoverage()
		c2.Add(p, []uint64{p.Entry, leafEntry, p.Entry})
		if c2.Shapes["signal"] != 0 {
			t.Errorf("%s: signals counted without a signal: %v", abi.Name(), c2.Shapes)
		}
	}
}
