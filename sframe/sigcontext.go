package sframe

// Where the Linux kernel saves an interrupted context when it delivers a
// signal, seen from the signal trampoline's frame: its SP is the SP the
// handler returns with, and the saved registers lie at fixed offsets from
// it. SFrame does not describe this (the FDE's signal flag only says that
// the function is a trampoline); every unwinder knows it per ABI. The
// offsets are those of the C library's ucontext_t (glibc
// <sys/ucontext.h>) placed as the kernel's rt_sigframe places it:
//
//   - AMD64: the handler returned through rt_sigframe.pretcode, so SP
//     points at the ucontext; uc_mcontext.gregs starts 40 bytes in, in the
//     order r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
//   - AArch64: SP points at the rt_sigframe: siginfo (128 bytes), then
//     the ucontext, whose uc_mcontext (176 bytes in) is fault_address,
//     regs[31], sp, pc.
//   - s390x: SP points at the rt_sigframe: the 160-byte save area, the
//     sigreturn instruction slot, siginfo from 168, the ucontext from 296,
//     whose uc_mcontext (40 bytes in) is the PSW (mask, address), gprs[16],
//     acrs[16], fpc and a pad word, fprs[16].
type sigContext struct {
	mcontext uint64 // the saved registers' block, reported as the frame's CFA
	pc       uint64
	regs     []sigSlot
}

type sigSlot struct {
	reg int // DWARF number
	off uint64
}

var sigContexts = func() map[ABI]*sigContext {
	m := map[ABI]*sigContext{}

	const x86MContext = 40
	// DWARF rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15 by gregs index.
	x86Greg := [16]uint64{13, 12, 14, 11, 9, 8, 10, 15, 0, 1, 2, 3, 4, 5, 6, 7}
	x := &sigContext{mcontext: x86MContext, pc: x86MContext + 16*8}
	for d, g := range x86Greg {
		x.regs = append(x.regs, sigSlot{d, x86MContext + 8*g})
	}
	m[ABIAMD64LE] = x

	const a64MContext = 128 + 176
	a := &sigContext{mcontext: a64MContext, pc: a64MContext + 8 + 32*8}
	for r := 0; r <= 31; r++ { // x0-x30, then sp (DWARF 31)
		a.regs = append(a.regs, sigSlot{r, a64MContext + 8 + 8*uint64(r)})
	}
	m[ABIAArch64LE], m[ABIAArch64BE] = a, a

	const zMContext = 296 + 40
	z := &sigContext{mcontext: zMContext, pc: zMContext + 8}
	for r := 0; r < 16; r++ {
		z.regs = append(z.regs, sigSlot{r, zMContext + 16 + 8*uint64(r)})
	}
	const zFPRs = zMContext + 16 + 16*8 + 16*4 + 8
	// DWARF 16-31 are f0, f2, f4, f6, f1, f3, f5, f7, f8, f10, f12, f14,
	// f9, f11, f13, f15.
	for i, f := range [16]uint64{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15} {
		z.regs = append(z.regs, sigSlot{16 + i, zFPRs + 8*f})
	}
	m[ABIS390XBE] = z
	return m
}()

// SignalContext reads the context a signal interrupted from the signal
// frame whose trampoline frame is f (f.SP is that frame's SP): out
// receives the interrupted PC and every register the kernel saved (the
// general registers, the SP, and on s390x the FPRs). The frame that
// follows f in a backtrace is that context's: Interrupted, with out as its
// register file.
func (u *Unwinder) SignalContext(f *Frame, index int, mem Memory, out *RegisterFile) error {
	c := sigContexts[u.abi()]
	if c == nil {
		return unwindErr(f, index, ErrBadRule, "no signal frame layout for %s", u.abi())
	}
	*out = RegisterFile{}
	pc, ok := mem.ReadWord(f.SP + c.pc)
	if !ok {
		return unwindErr(f, index, ErrUnreadable, "loading the interrupted PC from %#x", f.SP+c.pc)
	}
	out.PC = pc
	for _, s := range c.regs {
		v, ok := mem.ReadWord(f.SP + s.off)
		if !ok {
			return unwindErr(f, index, ErrUnreadable, "loading the interrupted register %d from %#x", s.reg, f.SP+s.off)
		}
		out.Set(s.reg, v)
	}
	return nil
}
