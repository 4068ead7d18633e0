package consumer

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// The restorers a signal handler returns to, from their first instruction
// after the leading nop: glibc's x86-64 __restore_rt (movq $15,%rax;
// syscall) and the AArch64 vDSO's __kernel_rt_sigreturn (mov x8, #139;
// svc #0), as docs/consumer-protocol.md states them and gen emits them
// (gen's TestSignalRestorerBytes).
var restorerCode = map[target.Target][]byte{
	target.X86_64:  {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
	target.AArch64: binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0xd2801168), 0xd4000001),
}

// glibcSignalCase is a handler's frame 0 with a signal frame above it, as
// package sigframe delivers it, and a version 2 section in which the
// trampoline has no FDE (SFrame v2 cannot describe it): glibc finds no
// FRE at the restorer and asks its uw-sigframe.h, which reads the code
// there. withCode says whether the image carries the code.
func glibcSignalCase(t *testing.T, abi target.Target, withCode bool) (*image.Image, Step, *sigframe.Context) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 5))
	const caller, fn, handler, tramp = 0x10001000, 0x10002000, 0x10003000, 0x10004000
	nop := 1
	if abi == target.AArch64 {
		nop = 4
	}
	restorer := uint64(tramp + nop)
	var ctx sigframe.Context
	for d := range ctx.Regs {
		ctx.Regs[d] = 0x1_0000_0000 + r.Uint64N(1<<30)
	}
	const sp = 0x70008000
	ctx.Regs[abi.SP()] = sp
	ctx.PC = fn + 8
	d := sigframe.Of(abi).Deliver(&ctx, 10, handler, restorer)
	words := map[uint64]uint64{}
	order := abi.ByteOrder()
	for k := 0; k+8 <= len(d.Data); k += 8 {
		words[d.Frame+uint64(k)] = order.Uint64(d.Data[k:])
	}
	expr := func(reg int, off int64, deref bool) sframe.Rule {
		return sframe.Rule{Kind: sframe.RuleExpr, Reg: reg, Offset: off, Deref: deref}
	}
	same := sframe.Rule{Kind: sframe.RuleSame}
	// The interrupted function saved its caller's RA (and on AArch64 its
	// FP) at its CFA, SP + 16; the caller is the outermost frame.
	const callerRA = caller + 4
	words[sp+8] = callerRA
	fnRow := sframe.Row{CFA: expr(abi.SP(), 16, false), RA: expr(sframe.RegCFA, -8, true), FP: same}
	regs := &machine.Registers{PC: handler}
	for dw := 0; dw < 32; dw++ {
		regs.Set(dw, d.Entry.Regs[dw])
	}
	var handlerRow sframe.Row
	if abi == target.X86_64 {
		// At the handler's entry the restorer's address is at the SP.
		handlerRow = sframe.Row{CFA: expr(abi.SP(), 8, false), RA: expr(sframe.RegCFA, -8, true), FP: same}
	} else {
		// glibc never reads x30: the handler has pushed its frame record
		// {x29, x30 = the restorer}, its CFA is the signal frame.
		fnRow.FP = expr(sframe.RegCFA, -16, true)
		words[sp] = ctx.Regs[abi.FP()]
		entry := d.Entry.Regs[abi.SP()]
		words[entry-16] = d.Entry.Regs[abi.FP()]
		words[entry-8] = restorer
		regs.Set(abi.SP(), entry-16)
		handlerRow = sframe.Row{CFA: expr(abi.SP(), 16, false), RA: expr(sframe.RegCFA, -8, true), FP: expr(sframe.RegCFA, -16, true)}
	}
	lo := d.Frame - 0x100
	snap := &machine.Snapshot{StackAddr: lo, Stack: make([]byte, sp+0x100-lo)}
	for a, v := range words {
		order.PutUint64(snap.Stack[a-lo:], v)
	}
	snap.Regs = *regs
	outer := sframe.Row{CFA: sframe.Rule{Kind: sframe.RuleUndefined}, RA: sframe.Rule{Kind: sframe.RuleUndefined}, FP: same}
	fdes := []sframe.FDE{
		{Start: caller, Size: 0x10, Rows: []sframe.Row{outer}},
		{Start: fn, Size: 0x10, Rows: []sframe.Row{fnRow}},
		{Start: handler, Size: 0x10, Rows: []sframe.Row{handlerRow}},
	}
	sa := sframe.ABI(abi)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(sa)
	sec, err := sframe.Encode(fdes, sframe.EncodeOptions{Version: 2, ABI: sa, Base: 0x10009000, PCRel: true, CFAFixedFP: fixedFP, CFAFixedRA: fixedRA})
	if err != nil {
		t.Fatal(err)
	}
	img := &image.Image{Target: abi, SFrameVersion: 2, SFrame: sec, SFrameAddr: 0x10009000}
	if withCode {
		img.CodeAddr = caller
		img.Code = make([]byte, tramp+0x10-caller)
		copy(img.Code[restorer-caller:], restorerCode[abi])
	}
	return img, Step{Regs: &snap.Regs, Mem: snap, Snapshot: snap}, &ctx
}

// glibc's uw-sigframe.h recognises the restorer by the code the protocol
// carries and goes on from the interrupted context: on x86-64 with its
// PC, SP and FP; AArch64's takes the FP from x30 (its FP_REGNUM is 30,
// docs/findings/050). Without the code it recognises nothing, and the
// trace stops at the restorer.
func TestGlibcRecognisesSignalFrames(t *testing.T) {
	t.Parallel()
	for _, abi := range []target.Target{target.X86_64, target.AArch64} {
		t.Run(abi.Name(), func(t *testing.T) {
			t.Parallel()
			c := builtC(t, newGlibcConsumer)
			img, step, ctx := glibcSignalCase(t, abi, true)
			if err := c.Load(img); err != nil {
				t.Fatal(err)
			}
			out := make([]Result, 1)
			if err := c.Unwind([]Step{step}, out); err != nil {
				t.Fatal(err)
			}
			fr := out[0].Frames
			if out[0].Err != nil || len(fr) != 4 {
				t.Fatalf("%d frames, error %v: %+v", len(fr), out[0].Err, fr)
			}
			restorer := uint64(0x10004001) // after the nop
			if abi == target.AArch64 {
				restorer = 0x10004004
			}
			if !fr[1].Signal || fr[0].Signal || fr[2].Signal || fr[1].PC != restorer {
				t.Errorf("the trampoline is not the only signal frame: %+v", fr)
			}
			wantFP := ctx.Regs[abi.FP()]
			if abi == target.AArch64 {
				wantFP = ctx.Regs[30] // glibc's FP_REGNUM
			}
			if i := fr[2]; i.PC != ctx.PC || i.SP != ctx.Regs[abi.SP()] || i.FP != wantFP {
				t.Errorf("interrupted frame %+v, the context has pc %#x sp %#x, fp (as glibc reads it) %#x", i, ctx.PC, ctx.Regs[abi.SP()], wantFP)
			}
			if fr[3].PC != 0x10001004 || !fr[3].Outermost {
				t.Errorf("the interrupted function's caller is %+v, want pc 0x10001004, outermost", fr[3])
			}

			img, step, _ = glibcSignalCase(t, abi, false)
			if err := c.Load(img); err != nil {
				t.Fatal(err)
			}
			if err := c.Unwind([]Step{step}, out); err != nil {
				t.Fatal(err)
			}
			fr = out[0].Frames
			if out[0].Err == nil || len(fr) != 2 || !strings.Contains(out[0].Err.Error(), "no FRE") {
				t.Errorf("without the code: %d frames, error %v, want a stop at the restorer for want of an FRE", len(fr), out[0].Err)
			}
		})
	}
}
