package consumer

import (
	"math/rand/v2"
	"testing"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// TestBuiltinReadsTheKernelsSignalFrame delivers a signal with package
// sigframe (the layouts the emulator writes and the oracle reads, checked
// against the C headers) and unwinds with the builtin consumer, whose
// sframe package keeps its own copy of the layouts: the interrupted frame
// comes out with the saved PC, SP and FP, and its caller with the RA that
// a rule of the interrupted function finds in a saved register (x86-64: a
// CFA on %r10; AArch64: the RA in x30; s390x: the RA in %f8). The two
// copies agree, in both byte orders.
func TestBuiltinReadsTheKernelsSignalFrame(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for _, abi := range target.All {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			const caller, fn, handler, tramp = 0x1000, 0x2000, 0x3000, 0x4000
			const restorer = tramp + 4
			l := sigframe.Of(abi)
			sa := sframe.ABI(abi)
			var ctx sigframe.Context
			for d := range ctx.Regs {
				ctx.Regs[d] = 0x1_0000_0000 + r.Uint64N(1<<30)
			}
			const sp = 0x7000_8000
			ctx.Regs[abi.SP()] = sp
			ctx.PC, ctx.Flags = fn+8, 0
			expr := func(reg int, off int64, deref bool) sframe.Rule {
				return sframe.Rule{Kind: sframe.RuleExpr, Reg: reg, Offset: off, Deref: deref}
			}
			same := sframe.Rule{Kind: sframe.RuleSame}
			var fnRow, entry sframe.Row
			var wantRA uint64
			words := map[uint64]uint64{}
			switch abi {
			case target.X86_64:
				ctx.Regs[10] = sp + 0x40 // %r10: the CFA
				wantRA = 0x1004
				words[sp+0x40-8] = wantRA
				fnRow = sframe.Row{CFA: expr(10, 0, false), RA: expr(sframe.RegCFA, -8, true), FP: same}
				entry = sframe.Row{CFA: expr(abi.SP(), 8, false), RA: expr(sframe.RegCFA, -8, true), FP: same}
			case target.S390X:
				wantRA = 0x1006
				ctx.Regs[24] = wantRA // %f8
				fnRow = sframe.Row{CFA: expr(abi.SP(), 160, false), RA: expr(24, 0, false), FP: same}
				entry = sframe.Row{CFA: expr(abi.SP(), 160, false), RA: same, FP: same}
			default:
				wantRA = 0x1008
				ctx.Regs[30] = wantRA
				fnRow = sframe.Row{CFA: expr(abi.SP(), 0, false), RA: same, FP: same}
				entry = fnRow
			}
			d := l.Deliver(&ctx, 10, handler, restorer)
			order := abi.ByteOrder()
			for k := 0; k+8 <= len(d.Data); k += 8 {
				words[d.Frame+uint64(k)] = order.Uint64(d.Data[k:])
			}
			// The snapshot the memory is read from, byte by byte.
			lo := d.Frame
			snap := &machine.Snapshot{StackAddr: lo, Stack: make([]byte, sp+0x100-lo), BigEndian: abi != target.X86_64 && abi != target.AArch64}
			for a, v := range words {
				order.PutUint64(snap.Stack[a-lo:], v)
			}
			sigRow := entry
			sigRow.Signal = true
			outer := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleUndefined}, RA: sframe.Rule{Kind: sframe.RuleUndefined}, FP: same}
			fdes := []sframe.FDE{
				{Start: caller, Size: 0x10, Rows: []sframe.Row{outer}},
				{Start: fn, Size: 0x10, Type: sframe.FDETypeFlex, Rows: []sframe.Row{fnRow}},
				{Start: handler, Size: 0x10, Rows: []sframe.Row{entry}},
				{Start: tramp, Size: 8, Signal: true, Rows: []sframe.Row{sigRow}},
			}
			fixedFP, fixedRA := sframe.DefaultFixedOffsets(sa)
			sec, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: 3, ABI: sa, Base: 0x9000, PCRel: true, CFAFixedFP: fixedFP, CFAFixedRA: fixedRA})
			if err != nil {
				t.Fatal(err)
			}
			b := NewBuiltin()
			if err := b.Load(&image.Image{Target: abi, SFrame: sec, SFrameAddr: 0x9000}); err != nil {
				t.Fatal(err)
			}
			regs := &machine.Registers{PC: handler}
			for dw := 0; dw < 32; dw++ {
				regs.Set(dw, d.Entry.Regs[dw])
			}
			out := make([]Result, 1)
			if err := b.Unwind([]Step{{Regs: regs, Mem: snap}}, out); err != nil {
				t.Fatal(err)
			}
			fr := out[0].Frames
			if out[0].Err != nil || len(fr) != 4 {
				t.Fatalf("%d frames, error %v: %+v", len(fr), out[0].Err, fr)
			}
			if !fr[1].Signal || fr[1].PC != restorer || fr[0].Signal || fr[2].Signal {
				t.Errorf("the trampoline is not the only signal frame: %+v", fr)
			}
			i := fr[2]
			if i.PC != ctx.PC || i.SP != sp || i.FP != ctx.Regs[abi.FP()] {
				t.Errorf("interrupted frame %v, the context has pc %#x sp %#x fp %#x", i, ctx.PC, sp, ctx.Regs[abi.FP()])
			}
			if fr[3].PC != wantRA || !fr[3].Outermost {
				t.Errorf("the interrupted function's caller is %v, want pc %#x, outermost", fr[3], wantRA)
			}
		})
	}
}
