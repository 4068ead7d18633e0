package gen

import (
	"hash/fnv"
	"math/rand/v2"
)

// Function edges: what lies right after a function decides what an
// unwinder finds at start + size. Laid out back to back, every function's
// end is the next one's start; a toolchain's code also has bytes that
// belong to no function: alignment padding (the no-ops `.p2align` fills
// in) and gaps (data, literal pools, trap bytes between functions). A PC
// there has no FDE, and an unwinder that takes a function's range to
// include its end (pc <= start + size) finds the previous function's row
// instead of none.
//
// After a function whose last instruction is a call (noreturn-call), the
// return address is start + size itself: with the next function there,
// an unwinder that looks it up without subtracting one takes that
// function's row; with a gap or padding there, it finds no row at all.
// Which of the three follows such a function is drawn from the seed and
// the function's name alone, one in three each; after any other function
// (but idle ones, the stubs of a PLT block, far ones) a gap or padding
// follows one time in six each. Bytes past a function are never run.
//
// Edge kinds, what Func.After holds.
const (
	EdgeNext    = "next-function" // the next function starts at start + size (or the code ends there)
	EdgeGap     = "gap"           // trap bytes, in no function
	EdgePadding = "padding"       // no-op instructions, in no function, as alignment leaves them
)

// EdgeShapeNames lists what EdgeShapes can name, in a fixed order, so
// that a report shows the ones no program had as zeros.
var EdgeShapeNames = []string{
	"after-call:" + EdgeNext, "after-call:" + EdgeGap, "after-call:" + EdgePadding,
	"after:" + EdgeGap, "after:" + EdgePadding,
	"signal:first-insn", "signal:last-insn",
}

// EdgeShapes names the function-edge shapes the program has: what follows
// a function whose last instruction is a call ("after-call:gap"), what
// follows any function ("after:padding"; next-function is every other
// case), and signals delivered at a function's first or last instruction.
func (p *Program) EdgeShapes() []string {
	var out []string
	add := func(s string) {
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	for i, f := range p.Funcs {
		if f.Idle {
			continue
		}
		if f.endsInCall() {
			if f.After == EdgeNext && i+1 < len(p.Funcs) && p.Funcs[i+1].Addr == f.Addr+uint64(f.Size) {
				add("after-call:" + EdgeNext)
			} else if f.After != EdgeNext {
				add("after-call:" + f.After)
			}
		}
		if f.After != EdgeNext {
			add("after:" + f.After)
		}
	}
	for _, s := range p.sigs {
		f := p.Funcs[s.fn]
		if s.op == 0 {
			add("signal:first-insn")
		}
		if s.op == len(f.ops)-1 {
			add("signal:last-insn")
		}
	}
	return out
}

// endsInCall reports whether the function's last instruction is a call.
func (f *Func) endsInCall() bool {
	n := len(f.ops)
	return n > 0 && f.ops[n-1].call
}

// addEdges decides what follows each function (Func.After, Func.Gap),
// from the seed and the function's name (a PLT block's, for its last
// stub) alone, so that a reduction (shrink.go) never grows a program: a
// function that no longer ends in a call keeps a gap only where any
// function would have had it.
func (p *Program) addEdges(t *isa) {
	for i, f := range p.Funcs {
		f.After, f.Gap = EdgeNext, nil
		if f.Idle || f.Far || i+1 < len(p.Funcs) && f.StubBlock != "" && p.Funcs[i+1].StubBlock == f.StubBlock {
			continue
		}
		name := f.Name
		if f.StubBlock != "" {
			name = f.StubBlock
		}
		h := fnv.New64a()
		h.Write([]byte(name))
		rng := rand.New(rand.NewPCG(uint64(p.Seed), h.Sum64()))
		k, gap, pad := rng.IntN(6), 1+rng.IntN(16), 1+rng.IntN(15/t.codeAlign)
		if f.endsInCall() {
			k %= 3 // one in three each
		} else if k >= 2 {
			k = 2 // one in six each
		}
		switch k {
		case 0:
			f.After, f.Gap = EdgeGap, t.gapBytes(EdgeGap, gap)
		case 1:
			f.After, f.Gap = EdgePadding, t.gapBytes(EdgePadding, pad)
		}
	}
}

// gapBytes are n units (instructions' alignment) of kind's fill: a trap
// (x86-64 int3, AArch64 udf #0, s390x's invalid opcode 0) for a gap, the
// target's no-op for padding.
func (t *isa) gapBytes(kind string, n int) []byte {
	var unit []byte
	switch {
	case kind == EdgeGap && t.codeAlign == 1:
		unit = []byte{0xcc}
	case kind == EdgeGap:
		unit = make([]byte, t.codeAlign)
	case t.codeAlign == 1:
		unit = []byte{0x90}
	case t.codeAlign == 4:
		unit = []byte{0x1f, 0x20, 0x03, 0xd5} // nop; AArch64 instructions are little-endian in both byte orders
	default:
		unit = []byte{0x07, 0x07} // nopr %r7
	}
	out := make([]byte, 0, n*len(unit))
	for range n {
		out = append(out, unit...)
	}
	return out
}
