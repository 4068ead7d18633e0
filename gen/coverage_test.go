package gen_test

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// addrs returns the address of every instruction of p but padding, in
// layout order.
func addrs(p *gen.Program) (all []uint64, calls int) {
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			if in.Pad > 0 {
				continue
			}
			all = append(all, f.Addr+uint64(in.Off))
			if in.Call {
				calls++
			}
		}
	}
	return all, calls
}

func TestCoverageCounts(t *testing.T) {
	t.Parallel()
	p := mustGenerate(t, target.S390X, 5, gen.Options{})
	all, calls := addrs(p)
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

// The size kinds: instructions under a PCMASK FDE, rows that start past
// offset 0xff, offsets past a byte.
func TestCoverageSizeKinds(t *testing.T) {
	t.Parallel()
	p := mustGenerate(t, target.X86_64, 3, gen.Options{Patterns: []string{"plt-stubs", "long-function"}, Funcs: 12})
	all, _ := addrs(p)
	c := gen.NewCoverage()
	c.Add(p, all)
	stubInsns, past2, past4, pad := 0, 0, 0, 0
	for _, f := range p.Funcs {
		for _, in := range f.Insns {
			switch {
			case in.Pad > 0:
				pad += in.Pad
			case f.StubBlock != "":
				stubInsns++
			}
		}
		for _, r := range f.Rows {
			switch {
			case r.Start >= 0x10000:
				past4++
			case r.Start >= 0x100:
				past2++
			}
		}
	}
	if stubInsns == 0 || c.Kinds["fde:pcmask"] != stubInsns {
		t.Errorf("fde:pcmask counted %d times, %d stub instructions", c.Kinds["fde:pcmask"], stubInsns)
	}
	if past2 == 0 || past4 == 0 || c.Kinds["fre-start:2"] < past2 || c.Kinds["fre-start:4"] < past4 {
		t.Errorf("%d rows start past 0xff, %d past 0xffff; fre-start:2 counted %d times, fre-start:4 %d", past2, past4, c.Kinds["fre-start:2"], c.Kinds["fre-start:4"])
	}
	if pad == 0 || c.Padding != pad || c.InsnsRun != c.Insns {
		t.Errorf("padding: %d counted, %d in the program", c.Padding, pad)
	}
}

// Entries by a jump: a tail call, one made by a function entered by a
// tail call, a jump into a cold part; an entry by a call is none of them.
func TestCoverageShapes(t *testing.T) {
	t.Parallel()
	p := mustGenerate(t, target.AArch64, 2, gen.Options{Funcs: 12, Patterns: []string{"hot-cold", "fp-frame"}})
	var caller, f, g, h, cold *gen.Func
	var call uint64
	for _, fn := range p.Funcs[1:] {
		switch {
		case fn.PartOf != "":
			cold = fn
		case f == nil:
			f = fn
		case g == nil:
			g = fn
		case h == nil:
			h = fn
		}
		for _, in := range fn.Insns {
			if in.Call && caller == nil && fn != f && fn != g && fn != h {
				caller, call = fn, fn.Addr+uint64(in.Off)
			}
		}
	}
	if f == nil || g == nil || h == nil || cold == nil || caller == nil {
		t.Fatal("program lacks the functions this test needs")
	}
	// The cold part is entered by a jump from its owner (which instruction
	// of the owner does not matter to the tally).
	var hot *gen.Func
	for _, fn := range p.Funcs {
		if fn.Name == cold.PartOf {
			hot = fn
		}
	}
	c := gen.NewCoverage()
	c.Add(p, []uint64{call, f.Addr, g.Addr, h.Addr, hot.Addr + uint64(hot.Insns[1].Off), cold.Addr})
	want := map[string]int{"call": 1, "tail-call": 2, "tail-call-chain": 1, "part-entry": 1}
	for k, n := range want {
		if c.Shapes[k] != n {
			t.Errorf("shape %s counted %d times, want %d: %v", k, c.Shapes[k], n, c.Shapes)
		}
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

// A stub after the first of its PLT block counts when every instruction of
// it ran, and not when one did not.
func TestCoveragePCMaskStubs(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		p := mustGenerate(t, abi, 1, gen.Options{Patterns: []string{"plt-stubs"}})
		var later *gen.Func
		for i, f := range p.Funcs {
			if i > 0 && f.StubBlock != "" && p.Funcs[i-1].StubBlock == f.StubBlock {
				later = f
				break
			}
		}
		if later == nil {
			t.Fatalf("%s: no block of two stubs", abi.Name())
		}
		var run []uint64
		for _, in := range later.Insns {
			run = append(run, later.Addr+uint64(in.Off))
		}
		c := gen.NewCoverage()
		c.Add(p, run[:len(run)-1])
		if n := c.Shapes["pcmask-later-stub-every-insn"]; n != 0 {
			t.Errorf("%s: a stub without its last instruction counted %d times", abi.Name(), n)
		}
		c.Add(p, run)
		if n := c.Shapes["pcmask-later-stub-every-insn"]; n != 1 {
			t.Errorf("%s: a stub run whole counted %d times, want 1", abi.Name(), n)
		}
	}
}
