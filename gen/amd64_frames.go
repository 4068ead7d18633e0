package gen

import (
	"fmt"

	"github.com/sfconform/sfconform/sframe"
)

// amd64Own are the x86-64 patterns beyond the skeletons: frames whose SP
// is no fixed distance from the CFA, CFAs on other registers or loaded
// from memory, data below SP, row-per-byte push sequences and a return
// address kept in a register. Each follows what GCC emits (quoted in the
// builders' comments) or, for the shapes no compiler emits, what
// hand-written assembly does.
var amd64Own = []*pattern{
	{name: "drap", doc: "GCC's dynamic realignment argument pointer: CFA on %r10, then loaded from -8(%rbp)",
		calls: true, versions: []int{3}, build: amd64DRAP,
		cannot: "a DEFAULT FDE bases the CFA on SP or FP plus an offset: it cannot say CFA = %r10 or CFA = *(%rbp-8), which only version 3's flexible FDEs express"},
	{name: "realign-fp", doc: "FP frame, then SP aligned down (and $-N,%rsp): SP no fixed distance from the CFA",
		calls: true, build: amd64RealignFP},
	{name: "dynamic-alloc", doc: "FP frame with an allocation sized by an argument (sub %rax,%rsp), sometimes released again before more calls",
		calls: true, epilogueCalls: true, build: amd64DynamicAlloc},
	{name: "red-zone", doc: "leaf keeping data in the 128 bytes below SP without moving SP",
		build: amd64RedZone},
	{name: "push-pop-every-byte", doc: "GCC's push-per-register prologues and epilogues: a row after every 1- or 2-byte push and pop, calls in between",
		calls: true, epilogueCalls: true, earlyExit: true, build: amd64PushPopEveryByte},
	{name: "cfa-other-reg-ra-in-reg", doc: "CFA on %r10 or %r11, RA popped into %r11 and returned through it (topmost-frame rules, no calls)",
		versions: []int{3}, build: amd64OtherRegRAInReg,
		cannot: "AMD64 DEFAULT FDEs have no RA word (the RA is always at the fixed CFA offset) and base the CFA on SP or FP only; an RA in %r11 or a CFA on %r10/%r11 needs version 3's flexible FDEs"},
}

// x86 memory operands: ModRM (+SIB, +disp8) for disp(%base) with reg field r.
func amd64ModRM(r, base int, disp int64) (rex byte, enc []byte) {
	if disp < -128 || disp > 127 {
		panic(fmt.Sprintf("gen: x86 displacement %d needs more than 8 bits", disp))
	}
	if r >= 8 {
		rex |= 0x44 // REX.R
	}
	if base >= 8 {
		rex |= 0x41 // REX.B
	}
	mod := byte(1)
	if disp == 0 && base&7 != amd64RBP {
		mod = 0 // (%rbp) and (%r13) have no disp-less form
	}
	enc = []byte{mod<<6 | byte(r&7)<<3 | byte(base&7)}
	if base&7 == amd64RSP {
		enc = append(enc, 0x24) // SIB: no index, base rsp/r12
	}
	if mod == 1 {
		enc = append(enc, byte(int8(disp)))
	}
	return rex, enc
}

func amd64MemText(base int, disp int64) string {
	switch {
	case disp == 0:
		return fmt.Sprintf("(%%%s)", amd64Names64[base])
	case disp < 0:
		return fmt.Sprintf("-0x%x(%%%s)", -disp, amd64Names64[base])
	}
	return fmt.Sprintf("0x%x(%%%s)", disp, amd64Names64[base])
}

// amd64RM emits a 64-bit instruction with opcode opc, register r in the
// ModRM reg field and disp(%base) as the memory operand.
func amd64RM(b *builder, opc byte, r, base int, disp int64, text string) {
	rex, m := amd64ModRM(r, base, disp)
	b.insn(append([]byte{0x48 | rex, opc}, m...), "%s", text)
}

// amd64Lea: lea disp(%base),%dst.
func amd64Lea(b *builder, dst, base int, disp int64) {
	amd64RM(b, 0x8d, dst, base, disp, fmt.Sprintf("lea %s,%%%s", amd64MemText(base, disp), amd64Names64[dst]))
}

// amd64Store: mov %src,disp(%base).
func amd64Store(b *builder, src, base int, disp int64) {
	amd64RM(b, 0x89, src, base, disp, fmt.Sprintf("mov %%%s,%s", amd64Names64[src], amd64MemText(base, disp)))
}

// amd64Load: mov disp(%base),%dst, or add disp(%base),%dst.
func amd64Load(b *builder, dst, base int, disp int64, add bool) {
	opc, mn := byte(0x8b), "mov"
	if add {
		opc, mn = 0x03, "add"
	}
	amd64RM(b, opc, dst, base, disp, fmt.Sprintf("%s %s,%%%s", mn, amd64MemText(base, disp), amd64Names64[dst]))
}

// amd64MovReg: mov %src,%dst, 64-bit.
func amd64MovReg(b *builder, src, dst int) {
	rex := byte(0x48)
	if src >= 8 {
		rex |= 0x04
	}
	if dst >= 8 {
		rex |= 0x01
	}
	b.insn([]byte{rex, 0x89, 0xc0 | byte(src&7)<<3 | byte(dst&7)}, "mov %%%s,%%%s", amd64Names64[src], amd64Names64[dst])
}

// amd64PushOnly is push without the frame model's reading of it: amd64Push
// records a push of %rbp as the caller's FP saved at a CFA offset, which
// after a realignment it is not.
func amd64PushOnly(b *builder, r int) {
	b.insn(append(amd64Rex(r), 0x50+byte(r&7)), "push %%%s", amd64Names64[r])
	b.sp(-8)
}

// amd64AlignSP: and $-align,%rsp. SP is lost; what it is aligned to is not.
func amd64AlignSP(b *builder, align int64) {
	b.insn([]byte{0x48, 0x83, 0xe4, byte(-align)}, "and $-0x%x,%%rsp", align)
	b.spLose(align)
}

// amd64QuietFiller is amd64Filler without the writes to %r10 and %r11, for
// code where they hold a rule's base.
func amd64QuietFiller(b *builder) {
	switch b.rng.IntN(4) {
	case 0:
		amd64MovImm(b, amd64RAX, b.rng.Uint32())
	case 1:
		n := 1 + b.rng.IntN(127)
		b.insn([]byte{0x48, 0x83, 0xc0, byte(n)}, "add $0x%x,%%rax", n)
	case 2:
		b.insn([]byte{0x31, 0xc0}, "xor %%eax,%%eax")
	default:
		b.insn([]byte{0x90}, "nop")
	}
}

// amd64QuietBody is the plan's body with amd64QuietFiller.
func amd64QuietBody(b *builder) { b.bodyWith(amd64QuietFiller) }

// fpSavedAtFP records the caller's FP saved at *(FP+0): the frame
// pointer of a realigned frame is no fixed distance from the CFA.
func (b *builder) fpSavedAtFP() {
	b.st.fp = sframe.Rule{Kind: sframe.RuleExpr, Reg: b.t.fp, Offset: 0, Deref: true}
}

// amd64DRAP is GCC's prologue for a function whose frame must be aligned
// beyond 16 bytes when it cannot use the frame pointer for it (alloca,
// -mforce-drap). gcc 12 -O2 -mforce-drap for
// `void f(void){ char b[64] __attribute__((aligned(32))); g(b); g(b); }`:
//
//	leaq 8(%rsp), %r10        .cfi_def_cfa 10, 0
//	andq $-32, %rsp
//	pushq -8(%r10)
//	pushq %rbp
//	movq %rsp, %rbp           .cfi_escape 0x10,0x6,0x2,0x76,0     (rbp saved at rbp+0)
//	pushq %r10                .cfi_escape 0xf,0x3,0x76,0x78,0x6   (CFA = *(rbp-8))
//	pushq %rbx
//	subq $64, %rsp
//	... call g ...
//	addq $64, %rsp
//	popq %rbx
//	popq %r10                 .cfi_def_cfa 10, 0
//	popq %rbp
//	leaq -8(%r10), %rsp       .cfi_def_cfa 7, 8
//	ret
//
// and with nothing to pop, `movq -8(%rbp), %r10; leave` for the last
// three pops. The caller's FP is restored by popq %rbp / leave; GCC
// writes no CFI for it there (its rule keeps reading *(rbp+0) for the
// last two instructions, where %rbp is the caller's again), gen writes
// .cfi_restore %rbp.
func amd64DRAP(b *builder, f *plan) {
	sp, fp := b.t.sp, b.t.fp
	r10 := amd64Dwarf(amd64R10)
	amd64Lea(b, amd64R10, amd64RSP, 8)
	b.cfaAt(r10, b.st.spOff-8)
	amd64AlignSP(b, []int64{16, 32, 32, 64}[b.rng.IntN(4)])
	// The RA again, above the saved FP, so that the realigned frame looks
	// like an ordinary one to an FP-chain walker; the unwind rule keeps
	// reading the original slot at CFA-8.
	b.insn([]byte{0x41, 0xff, 0x72, 0xf8}, "pushq -0x8(%%r10)")
	b.sp(-8)
	amd64PushOnly(b, amd64RBP)
	amd64MovReg(b, amd64RSP, amd64RBP)
	fpAt := b.st.spOff // FP's distance below the realigned SP
	b.fpSavedAtFP()
	amd64PushOnly(b, amd64R10)
	b.cfaLoadedFrom(fp, -8)
	pushed := []int{amd64R10}
	if b.rng.IntN(2) == 0 {
		amd64PushOnly(b, amd64RBX)
		pushed = append(pushed, amd64RBX)
	}
	// Locals, keeping SP 16-aligned for the calls.
	n := 16 * int64(b.rng.IntN(4))
	if b.st.spOff%16 != 0 {
		n += 8
	}
	amd64AdjSP(b, -n)
	b.calls(posPrologue)
	if len(pushed) > 1 {
		amd64MovImm(b, amd64RBX, b.rng.Uint32())
	}
	b.body()
	b.calls(posBody)
	if b.rng.IntN(2) == 0 {
		// Reload from the frame, then leave.
		for i := len(pushed) - 1; i >= 0; i-- {
			amd64Load(b, pushed[i], amd64RBP, -8*int64(i+1), false)
		}
		b.cfaAt(r10, 0)
		b.insn([]byte{0xc9}, "leave")
		b.st.spOff = fpAt
		b.restoreFP()
		b.sp(8)
	} else {
		// GCC releases the locals with add, or from %rbp when it
		// cannot know their size (alloca).
		if n > 0 && b.rng.IntN(2) == 0 {
			amd64Lea(b, amd64RSP, amd64RBP, -8*int64(len(pushed)))
			b.st.spOff = fpAt + 8*int64(len(pushed))
		} else {
			amd64AdjSP(b, n)
		}
		for i := len(pushed) - 1; i >= 0; i-- {
			amd64Pop(b, pushed[i])
		}
		b.cfaAt(r10, 0)
		amd64Pop(b, amd64RBP)
	}
	amd64Lea(b, amd64RSP, amd64R10, -8)
	b.spFound(8)
	b.cfaAt(sp, 8)
	amd64Ret(b)
}

// amd64RealignFP is GCC's frame for over-aligned locals when it may use the
// frame pointer (gcc 12 -O2, `char b[64] __attribute__((aligned(32)))`):
//
//	pushq %rbp       .cfi_def_cfa_offset 16; .cfi_offset 6, -16
//	movq %rsp, %rbp  .cfi_def_cfa_register 6
//	andq $-32, %rsp
//	subq $64, %rsp
//	... call g ...
//	leave            .cfi_def_cfa 7, 8
//	ret
//
// and, with a callee-saved register, pushq %rbx after the frame setup and
// `movq -8(%rbp), %rbx; leave` or `leaq -8(%rbp), %rsp; popq %rbx; popq
// %rbp` at the end. The CFA stays on FP; the realignment moves SP by an
// amount only the machine knows.
func amd64RealignFP(b *builder, f *plan) {
	amd64FrameSetup(b)
	var pushed []int
	if b.rng.IntN(2) == 0 {
		pool := []int{amd64RBX, amd64R12, amd64R13}
		pushed = pool[:1+b.rng.IntN(len(pool))]
		for _, r := range pushed {
			amd64Push(b, r)
		}
	}
	amd64AlignSP(b, []int64{16, 32, 32, 64}[b.rng.IntN(4)])
	amd64AdjSP(b, -16*int64(b.rng.IntN(5)))
	b.calls(posPrologue)
	for _, r := range pushed {
		amd64MovImm(b, r, b.rng.Uint32())
	}
	b.body()
	b.calls(posBody)
	switch {
	case len(pushed) > 0 && b.rng.IntN(2) == 0:
		amd64Lea(b, amd64RSP, amd64RBP, -8*int64(len(pushed)))
		b.spFound(b.st.fpOff + 8*int64(len(pushed)))
		for i := len(pushed) - 1; i >= 0; i-- {
			amd64Pop(b, pushed[i])
		}
		amd64Pop(b, amd64RBP)
	default:
		for i, r := range pushed {
			amd64Load(b, r, amd64RBP, -8*int64(i+1), false)
		}
		[]func(*builder){amd64Leave, amd64MovPop}[b.rng.IntN(2)](b)
	}
	amd64Ret(b)
}

// amd64DynamicAlloc allocates an amount taken from an argument register, as
// alloca or a variable-length array does: gcc 12 -O2 for `char *c =
// __builtin_alloca(n)` rounds n up to 16 and subtracts it from %rsp
// (`addq $23, %rdi; andq $-16, %rdi; subq %rdi, %rsp`). Here the amount
// is a masked argument bit field (0-0x70 bytes, a multiple of 16), so
// paths with other arguments allocate other sizes through the same code.
// The CFA stays on FP. Sometimes the area is released again (leaq
// -N(%rbp), %rsp, as GCC does at the end of a VLA's scope) before more
// calls.
func amd64DynamicAlloc(b *builder, f *plan) {
	amd64FrameSetup(b)
	amd64AdjSP(b, -16*int64(b.rng.IntN(3)))
	b.calls(posPrologue)
	before := b.st.spOff
	arg := amd64ArgHW[b.rng.IntN(len(amd64ArgHW))]
	b.insn([]byte{0x89, 0xc0 | byte(arg)<<3}, "mov %%%s,%%eax", amd64Names32[arg])
	mask := []byte{0x30, 0x70}[b.rng.IntN(2)]
	b.insn([]byte{0x83, 0xe0, mask}, "and $0x%x,%%eax", mask)
	b.insn([]byte{0x48, 0x29, 0xc4}, "sub %%rax,%%rsp")
	b.spLose(16) // SP was 16-aligned and moved by a multiple of 16
	if locals := before - b.st.fpOff; locals > 0 && b.rng.IntN(2) == 0 {
		// Into the new area, or the locals when it is empty: never the
		// saved %rbp.
		amd64Store(b, amd64ArgHW[b.rng.IntN(len(amd64ArgHW))], amd64RSP, 0)
	}
	b.body()
	b.calls(posBody)
	if locals := before - b.st.fpOff; locals > 0 && b.rng.IntN(2) == 0 {
		amd64Lea(b, amd64RSP, amd64RBP, -locals)
		b.spFound(before)
	}
	b.calls(posEpilogue)
	if b.st.spLost {
		[]func(*builder){amd64Leave, amd64MovPop}[b.rng.IntN(2)](b)
	} else {
		[]func(*builder){amd64Leave, amd64MovPop, amd64AddPop}[b.rng.IntN(3)](b)
	}
	amd64Ret(b)
}

// amd64RedZone is a leaf that keeps its data in the 128 bytes below SP the
// psABI (3.2.2) reserves for it: gcc -O2 spills there without moving SP
// (`movq %rdi, -8(%rsp)`), gcc -O0 sets up %rbp and stores below it
// (`pushq %rbp; movq %rsp, %rbp; movq %rdi, -24(%rbp); ...; popq %rbp`).
func amd64RedZone(b *builder, f *plan) {
	base := amd64RSP
	frame := b.rng.IntN(2) == 0
	if frame {
		amd64FrameSetup(b)
		base = amd64RBP
	}
	slots := 1 + b.rng.IntN(4)
	offs := make([]int64, slots)
	for i := range offs {
		offs[i] = -8 * int64(1+b.rng.IntN(16))
		amd64Store(b, amd64ArgHW[b.rng.IntN(len(amd64ArgHW))], base, offs[i])
	}
	b.body()
	leave := func() {
		amd64Load(b, amd64RAX, base, offs[0], false)
		if slots > 1 {
			amd64Load(b, amd64RAX, base, offs[slots-1], true)
		}
		if frame {
			amd64Pop(b, amd64RBP)
		}
		amd64Ret(b)
	}
	if b.rng.IntN(2) == 0 {
		l := b.newLabel()
		b.cond(l)
		saved := b.st
		amd64Store(b, amd64RAX, base, offs[b.rng.IntN(slots)])
		leave()
		b.st = saved
		b.place(l)
	}
	leave()
}

// amd64PushPopEveryByte saves callee-saved registers one push at a time, as
// gcc -O2 does (`pushq %r15; pushq %r14; pushq %r13; pushq %r12; pushq
// %rbp; pushq %rbx; subq $24, %rsp`, each push followed by its
// .cfi_def_cfa_offset), and pops them one at a time: every instruction of
// prologue and epilogue starts a row, the REX-prefixed ones at odd
// offsets. A sub $8 alignment may sit between two pushes. Calls go where
// SP is 16-aligned: after the prologue, in the body and, in the
// epilogue, between pops. An early return on an argument bit has an
// epilogue of its own, after which the rows go back to the full frame.
func amd64PushPopEveryByte(b *builder, f *plan) {
	pool := []int{amd64R15, amd64R14, amd64R13, amd64R12, amd64RBP, amd64RBX}
	n := 1 + b.rng.IntN(5)
	var regs []int
	for i, r := range pool {
		// Keep n of the six in GCC's order.
		if b.rng.IntN(len(pool)-i) < n-len(regs) {
			regs = append(regs, r)
		}
	}
	type step struct {
		reg int   // pushed register, or -1
		adj int64 // else a sub of this many bytes
	}
	var steps []step
	gap := -1
	if len(regs) > 1 && b.rng.IntN(3) == 0 {
		gap = 1 + b.rng.IntN(len(regs)-1)
	}
	for i, r := range regs {
		if i == gap {
			steps = append(steps, step{reg: -1, adj: 8})
		}
		steps = append(steps, step{reg: r})
	}
	if rem := (b.st.spOff + 8*int64(len(steps))) % 16; rem != 0 || b.rng.IntN(3) == 0 {
		steps = append(steps, step{reg: -1, adj: 16 - rem + 16*int64(b.rng.IntN(2))})
	}
	for _, s := range steps {
		if s.reg < 0 {
			amd64AdjSP(b, -s.adj)
		} else {
			amd64Push(b, s.reg)
		}
	}
	// epilogue undoes steps; epi runs at one of the points where SP is
	// 16-aligned.
	epilogue := func(epi func()) {
		spOff := b.st.spOff
		var at []int
		for i := len(steps); i >= 0; i-- {
			if spOff%16 == 0 {
				at = append(at, i)
			}
			if i > 0 {
				if s := steps[i-1]; s.reg < 0 {
					spOff -= s.adj
				} else {
					spOff -= 8
				}
			}
		}
		callAt := at[b.rng.IntN(len(at))]
		for i := len(steps); i > 0; i-- {
			if i == callAt {
				epi()
			}
			if s := steps[i-1]; s.reg < 0 {
				amd64AdjSP(b, s.adj)
			} else {
				amd64Pop(b, s.reg)
			}
		}
		if callAt == 0 {
			epi()
		}
		amd64Ret(b)
	}
	b.calls(posPrologue)
	for _, r := range regs {
		if r != amd64RBP {
			amd64MovImm(b, r, b.rng.Uint32())
		}
	}
	if b.rng.IntN(2) == 0 {
		early := b.newLabel()
		b.cond(early)
		saved := b.st
		b.body()
		b.calls(posBody)
		epilogue(func() { b.calls(posEpilogue) })
		b.st = saved
		b.place(early)
		epilogue(func() {})
		return
	}
	b.body()
	b.calls(posBody)
	epilogue(func() { b.calls(posEpilogue) })
}

// amd64OtherRegRAInReg is hand-written assembly's frame (no compiler emits
// it): the CFA on a scratch register, and the return address popped into
// %r11 and returned through it. Two shapes:
//
//	mov %rsp,%r11      .cfi_def_cfa_register %r11
//	sub $N,%rsp / and $-N,%rsp
//	...
//	mov %r11,%rsp      .cfi_def_cfa_register %rsp
//	pop %r11           .cfi_def_cfa_offset 0; .cfi_register %rip, %r11
//	jmp *%r11  |  push %r11; ret
//
// and, the RA taken first,
//
//	pop %r11           .cfi_def_cfa_offset 0; .cfi_register %rip, %r11
//	mov %rsp,%r10      .cfi_def_cfa_register %r10
//	sub $N,%rsp
//	...
//	mov %r10,%rsp      .cfi_def_cfa_register %rsp
//	jmp *%r11  |  push %r11; ret
//
// Both rules hold in the topmost frame only (a callee clobbers %r10 and
// %r11, and an unwinder knows them only for the interrupted frame), so
// the function makes no calls.
func amd64OtherRegRAInReg(b *builder, f *plan) {
	sp := b.t.sp
	r11 := amd64Dwarf(amd64R11)
	popRA := func() {
		amd64Pop(b, amd64R11)
		b.raIn(r11)
	}
	cfaReg := amd64R11
	if b.rng.IntN(2) == 0 {
		popRA()
		cfaReg = amd64R10
	}
	amd64MovReg(b, amd64RSP, cfaReg)
	b.cfaAt(amd64Dwarf(cfaReg), b.st.spOff)
	back := b.st.spOff
	// SP ends strictly below where it was, so that (%rsp) is ours.
	amd64AdjSP(b, -8*int64(1+b.rng.IntN(8)))
	if b.rng.IntN(3) == 0 {
		amd64AlignSP(b, 16)
	}
	if b.rng.IntN(2) == 0 {
		amd64Store(b, amd64ArgHW[b.rng.IntN(len(amd64ArgHW))], amd64RSP, 0)
	}
	amd64QuietBody(b)
	amd64MovReg(b, cfaReg, amd64RSP)
	b.spFound(back)
	b.cfaAt(sp, back)
	if cfaReg == amd64R11 {
		popRA()
	}
	if b.rng.IntN(2) == 0 {
		amd64QuietFiller(b)
	}
	if b.rng.IntN(2) == 0 {
		b.insn([]byte{0x41, 0xff, 0xe3}, "jmp *%%r11")
		return
	}
	amd64PushOnly(b, amd64R11)
	b.saveRA(0)
	amd64Ret(b)
}
