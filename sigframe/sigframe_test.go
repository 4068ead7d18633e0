package sigframe

import (
	"math/rand/v2"
	"testing"

	"github.com/sfconform/sfconform/target"
)

// randomContext is a machine state with every register the layout saves
// set to a distinct value and SP at sp.
func randomContext(r *rand.Rand, l *Layout, sp uint64) *Context {
	c := &Context{PC: r.Uint64(), Flags: r.Uint64()}
	for d := range c.Regs {
		c.Regs[d] = r.Uint64()
	}
	for i := range c.Access {
		c.Access[i] = r.Uint32()
	}
	c.Regs[l.Target.SP()] = sp
	return c
}

// TestDeliverAndReturn delivers signals at many SPs and returns from them:
// the frame lies below the interrupted SP (x86-64: below the red zone too)
// at the alignment the ABI gives a function's entry, the handler starts
// with the registers the kernel sets, and rt_sigreturn on the frame's
// bytes gives back every saved register, the PC and the flags bits it
// restores.
func TestDeliverAndReturn(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, abi := range target.All {
		l := Of(abi)
		for i := 0; i < 200; i++ {
			sp := 0x7000_0000 + r.Uint64N(1<<16)
			if abi != target.X86_64 {
				sp &^= 7 // s390x and AArch64 code keeps SP aligned
			}
			ctx := randomContext(r, l, sp)
			const handler, restorer = 0x1000, 0x2000
			d := l.Deliver(ctx, 14, handler, restorer)
			top := d.Frame + uint64(len(d.Data))
			limit := sp
			if abi == target.X86_64 {
				limit = sp - 128
			}
			if top > limit || uint64(len(d.Data)) < l.Size {
				t.Fatalf("%s sp %#x: frame [%#x, %#x) of size %d, must end at or below %#x", abi.Name(), sp, d.Frame, top, l.Size, limit)
			}
			align := map[target.Target]uint64{target.X86_64: 16, target.S390X: 8}[abi]
			switch {
			case abi == target.X86_64 && (d.Frame+8)%16 != 0,
				abi == target.S390X && d.Frame%8 != 0,
				abi != target.X86_64 && abi != target.S390X && d.Frame%16 != 0:
				t.Fatalf("%s: frame %#x misaligned (%d)", abi.Name(), d.Frame, align)
			}
			e := d.Entry
			if e.PC != handler || e.Regs[abi.SP()] != d.Frame {
				t.Fatalf("%s: handler entered at %#x with SP %#x, frame %#x", abi.Name(), e.PC, e.Regs[abi.SP()], d.Frame)
			}
			word := func(off uint64) uint64 { return l.order.Uint64(d.Data[off:]) }
			info, uc := d.Frame+l.Info, d.Frame+l.UContext
			switch abi {
			case target.X86_64:
				if e.Regs[5] != 14 || e.Regs[4] != info || e.Regs[1] != uc || word(0) != restorer {
					t.Fatalf("x86-64: rdi %d rsi %#x rdx %#x pretcode %#x", e.Regs[5], e.Regs[4], e.Regs[1], word(0))
				}
				if e.Flags != ctx.Flags&^(1<<10|1<<16|1<<8) {
					t.Fatalf("x86-64: handler flags %#x from %#x", e.Flags, ctx.Flags)
				}
			case target.S390X:
				if e.Regs[2] != 14 || e.Regs[3] != info || e.Regs[4] != uc || e.Regs[14] != restorer || word(0) != sp {
					t.Fatalf("s390x: r2 %d r3 %#x r4 %#x r14 %#x back chain %#x", e.Regs[2], e.Regs[3], e.Regs[4], e.Regs[14], word(0))
				}
			default:
				rec := e.Regs[29] - d.Frame
				if e.Regs[0] != 14 || e.Regs[1] != info || e.Regs[2] != uc || e.Regs[30] != restorer ||
					int64(rec) != l.Record || word(rec) != ctx.Regs[29] || word(rec+8) != ctx.Regs[30] {
					t.Fatalf("%s: x0 %d x1 %#x x2 %#x x30 %#x, record at +%#x holds %#x %#x", abi.Name(), e.Regs[0], e.Regs[1], e.Regs[2], e.Regs[30], rec, word(rec), word(rec+8))
				}
			}
			// The handler ran and changed everything; rt_sigreturn brings the
			// interrupted state back.
			cur := randomContext(r, l, d.Frame)
			back, err := l.Return(d.Data, cur)
			if err != nil {
				t.Fatal(err)
			}
			want := *ctx
			want.Flags = cur.Flags&^l.FlagsRestored | ctx.Flags&l.FlagsRestored
			for dw := range want.Regs {
				if !l.holds(dw) {
					want.Regs[dw] = cur.Regs[dw]
				}
			}
			if abi != target.S390X {
				want.Access = cur.Access
			}
			if back != want {
				t.Fatalf("%s: rt_sigreturn gives\n %+v\nwant\n %+v", abi.Name(), back, want)
			}
		}
	}
}

// TestReturnFrame: a x86-64 handler returned through pretcode, so
// rt_sigreturn's SP is a word above the frame; elsewhere it is the frame.
func TestReturnFrame(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		l := Of(abi)
		f := l.Frame(0x7000_8000)
		sp := f
		if abi == target.X86_64 {
			sp += 8
		}
		if got := l.ReturnFrame(sp); got != f {
			t.Errorf("%s: ReturnFrame(%#x) = %#x, want %#x", abi.Name(), sp, got, f)
		}
	}
	if Of(target.Target(9)) != nil {
		t.Error("a layout for target 9")
	}
	if _, err := Of(target.S390X).Return(make([]byte, 10), &Context{}); err == nil {
		t.Error("Return of a truncated frame succeeded")
	}
}
