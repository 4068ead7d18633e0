package sigframe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/target"
)

// The rt_sigreturn system call: its number, and how each target calls it.
const (
	// x86-64: mov $15,%eax; syscall.
	RtSigreturnX86_64 = 15
	// AArch64: mov x8, #139; svc #0.
	RtSigreturnAArch64 = 139
	// s390x: svc 173, the number in the instruction.
	RtSigreturnS390X = 173
)

// SIUser is si_code of a signal sent with kill(2).
const SIUser = 0

// NumRegs bounds the DWARF numbers a Context holds: x86-64 0-15, AArch64
// 0-31 (31 is SP), s390x 0-31 (16-31 are FPRs).
const NumRegs = 32

// Context is the machine state a signal interrupts, as the kernel saves
// it and rt_sigreturn loads it back.
type Context struct {
	PC uint64
	// Regs by DWARF number: the general registers and the SP (x86-64
	// 0-15, AArch64 0-31, s390x 0-15), and the s390x FPRs as raw bits
	// (16-31, in the ELF ABI's DWARF order).
	Regs [NumRegs]uint64
	// Flags is the condition state: x86-64 RFLAGS, AArch64 PSTATE (NZCV in
	// bits 28-31), s390x the PSW mask.
	Flags uint64
	// Access holds the s390x access registers.
	Access [16]uint32
}

// Layout is one target's signal frame. Offsets count from the frame, the
// SP the handler is entered with.
type Layout struct {
	Target target.Target
	// Size is the kernel's struct rt_sigframe.
	Size uint64
	// Info, UContext and MContext locate siginfo, the ucontext and its
	// uc_mcontext.
	Info, UContext, MContext uint64
	// PC and Flags are the slots of the interrupted PC and condition state
	// (x86-64 rip and eflags, AArch64 pc and pstate, s390x the PSW address
	// and mask). Reg gives the other registers' slots.
	PC, Flags uint64
	// Restorer is the slot of the handler's return address, the
	// restorer (x86-64 pretcode), or -1 where the kernel passes it in the
	// link register.
	Restorer int64
	// Record is the AArch64 frame record {x29, x30} of the interrupted
	// context, placed above the frame; -1 elsewhere.
	Record int64
	// BackChain is the slot of the s390x back chain (the interrupted
	// r15); -1 elsewhere.
	BackChain int64
	// UCFlags is what the kernel writes to uc_flags.
	UCFlags uint64
	// Sigreturn is the rt_sigreturn system call number.
	Sigreturn int
	// FlagsRestored are the bits of the saved condition state that
	// rt_sigreturn loads back; FlagsClearedAtEntry the bits the kernel
	// clears for the handler.
	FlagsRestored, FlagsClearedAtEntry uint64

	order binary.ByteOrder
	regs  [NumRegs]int32 // slot + 1 by DWARF number; 0: not saved
	// ucStack is uc.uc_stack; sigmask uc.uc_sigmask.
	ucStack, sigmask uint64
	// x86-64: the uc_mcontext.fpstate pointer's slot and the FPU state's
	// size; AArch64: the fpsimd_context record and the terminator after
	// it in uc_mcontext.__reserved; s390x: the access registers.
	fpPtr, fpSize   uint64
	fpsimd, termRec uint64
	access          uint64
}

// Registers a context holds, by DWARF number.
func (l *Layout) holds(dwarf int) bool { return dwarf >= 0 && dwarf < NumRegs && l.regs[dwarf] != 0 }

// Reg returns the slot of the interrupted register dwarf (the SP
// included).
func (l *Layout) Reg(dwarf int) (uint64, bool) {
	if !l.holds(dwarf) {
		return 0, false
	}
	return uint64(l.regs[dwarf] - 1), true
}

// SP is the slot of the interrupted stack pointer.
func (l *Layout) SP() uint64 {
	off, _ := l.Reg(l.Target.SP())
	return off
}

// x86-64 uc_mcontext.gregs indexes (REG_R8 ... REG_CR2 of glibc's
// <sys/ucontext.h>, the order of the kernel's struct sigcontext).
const (
	x86RegR8 = iota
	x86RegR9
	x86RegR10
	x86RegR11
	x86RegR12
	x86RegR13
	x86RegR14
	x86RegR15
	x86RegRDI
	x86RegRSI
	x86RegRBP
	x86RegRBX
	x86RegRDX
	x86RegRAX
	x86RegRCX
	x86RegRSP
	x86RegRIP
	x86RegEFL
	x86RegCSGSFS
	x86RegERR
	x86RegTRAPNO
	x86RegOLDMASK
	x86RegCR2
	x86NGREG
)

// x86GregOfDwarf maps the psABI's DWARF numbers 0-15 (rax, rdx, rcx, rbx,
// rsi, rdi, rbp, rsp, r8-r15) to gregs indexes.
var x86GregOfDwarf = [16]int{x86RegRAX, x86RegRDX, x86RegRCX, x86RegRBX, x86RegRSI, x86RegRDI, x86RegRBP, x86RegRSP,
	x86RegR8, x86RegR9, x86RegR10, x86RegR11, x86RegR12, x86RegR13, x86RegR14, x86RegR15}

// S390XFPROfDwarf is the FPR that DWARF number 16+i names (s390x ELF ABI).
var S390XFPROfDwarf = [16]int{0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15}

// x86-64 constants: EFLAGS bits, the FPU state of a CPU without XSAVE,
// uc_flags and the user segment selectors.
const (
	x86FlagCF, x86FlagPF, x86FlagAF, x86FlagZF, x86FlagSF = 1 << 0, 1 << 2, 1 << 4, 1 << 6, 1 << 7
	x86FlagTF, x86FlagDF, x86FlagOF, x86FlagRF, x86FlagAC = 1 << 8, 1 << 10, 1 << 11, 1 << 16, 1 << 18
	// FIX_EFLAGS, arch/x86/include/asm/sighandling.h.
	x86FixEflags = x86FlagAC | x86FlagOF | x86FlagDF | x86FlagTF | x86FlagSF |
		x86FlagZF | x86FlagAF | x86FlagPF | x86FlagCF | x86FlagRF
	x86FxsaveSize     = 512 // sizeof(struct fxregs_state)
	x86RedZone        = 128
	x86UCSigcontextSS = 0x2 // UC_SIGCONTEXT_SS
	x86UCStrictSS     = 0x4 // UC_STRICT_RESTORE_SS
	x86UserCS         = 0x33
	x86UserDS         = 0x2b
)

// AArch64 constants.
const (
	a64FPSIMDMagic = 0x46508001 // FPSIMD_MAGIC
	a64FPSIMDSize  = 528        // sizeof(struct fpsimd_context)
	a64NZCV        = 0xf << 28
)

// s390x PSW mask bits (arch/s390/include/uapi/asm/ptrace.h, asm/ptrace.h).
const (
	zPSWMaskUser  = 0x0000FF0180000000 // PSW_MASK_USER: ASC, CC, PM, EA, BA
	zPSWMaskRI    = 0x0000008000000000
	zPSWUserBits  = 0x0705000000000000 // PSW_USER_BITS: DAT, IO, EXT, MCHECK, PSTATE
	zUCVXRS       = 2                  // UC_VXRS
	zSaveArea     = 160                // __SIGNAL_FRAMESIZE
	stackDisabled = 2                  // SS_DISABLE: no alternate signal stack
)

var layouts = func() map[target.Target]*Layout {
	m := map[target.Target]*Layout{}

	// x86-64: pretcode at 0, the ucontext at 8, siginfo after it.
	x := &Layout{Target: target.X86_64, order: binary.LittleEndian,
		Size: 8 + 304 + 128, Restorer: 0, UContext: 8, Info: 8 + 304, MContext: 8 + 40,
		Record: -1, BackChain: -1, UCFlags: x86UCSigcontextSS | x86UCStrictSS,
		Sigreturn: RtSigreturnX86_64, FlagsRestored: x86FixEflags, FlagsClearedAtEntry: x86FlagDF | x86FlagRF | x86FlagTF,
		fpSize: x86FxsaveSize}
	greg := func(i int) uint64 { return x.MContext + 8*uint64(i) }
	for d, g := range x86GregOfDwarf {
		x.regs[d] = int32(greg(g)) + 1
	}
	x.PC, x.Flags = greg(x86RegRIP), greg(x86RegEFL)
	x.fpPtr = greg(x86NGREG)
	x.ucStack, x.sigmask = x.UContext+16, x.UContext+296
	m[target.X86_64] = x

	// AArch64: siginfo at 0, the ucontext at 128; struct sigcontext is
	// fault_address, regs[31], sp, pc, pstate, then __reserved, 16-aligned.
	for _, abi := range []target.Target{target.AArch64, target.AArch64BE} {
		a := &Layout{Target: abi, order: abi.ByteOrder(),
			Size: 128 + 4560, Info: 0, UContext: 128, MContext: 128 + 176,
			Restorer: -1, BackChain: -1, Sigreturn: RtSigreturnAArch64, FlagsRestored: a64NZCV}
		for r := 0; r <= 30; r++ {
			a.regs[r] = int32(a.MContext+8+8*uint64(r)) + 1
		}
		a.regs[target.RegAArch64SP] = int32(a.MContext+8+8*31) + 1
		a.PC, a.Flags = a.MContext+8+8*32, a.MContext+8+8*33
		a.fpsimd = a.MContext + 288
		a.termRec = a.fpsimd + a64FPSIMDSize
		a.Record = int64(a.Size) // sigframe_size: nothing outgrows the struct
		a.ucStack, a.sigmask = a.UContext+16, a.UContext+40
		m[abi] = a
	}

	// s390x: the callee's save area, svc_insn, siginfo at 168, the
	// ucontext at 296; _sigregs is the PSW, gprs[16], acrs[16], then fpc,
	// a pad word and fprs[16].
	z := &Layout{Target: target.S390X, order: binary.BigEndian,
		Size: 296 + 1024, Info: 168, UContext: 296, MContext: 296 + 40,
		Restorer: -1, Record: -1, BackChain: 0, UCFlags: zUCVXRS, Sigreturn: RtSigreturnS390X,
		FlagsRestored: zPSWMaskUser | zPSWMaskRI}
	z.Flags, z.PC = z.MContext, z.MContext+8
	for r := 0; r < 16; r++ {
		z.regs[r] = int32(z.MContext+16+8*uint64(r)) + 1
	}
	z.access = z.MContext + 16 + 128
	fprs := z.access + 64 + 8
	for i, f := range S390XFPROfDwarf {
		z.regs[16+i] = int32(fprs+8*uint64(f)) + 1
	}
	z.ucStack, z.sigmask = z.UContext+16, z.UContext+384
	m[target.S390X] = z
	return m
}()

// Of returns the layout of t's signal frame, nil for no target.
func Of(t target.Target) *Layout { return layouts[t] }

// Frame is where the kernel places the frame for a signal interrupting a
// context whose SP is sp: the SP the handler is entered with.
func (l *Layout) Frame(sp uint64) uint64 {
	switch l.Target {
	case target.X86_64:
		return alignDown(l.fpState(sp)-l.Size, 16) - 8
	case target.S390X:
		return (sp - l.Size) &^ 7
	}
	return l.record(sp) - l.Size
}

// fpState is the x86-64 FPU state area: below the red zone, 64-aligned.
func (l *Layout) fpState(sp uint64) uint64 { return alignDown(sp-x86RedZone-l.fpSize, 64) }

// record is the AArch64 frame record's address.
func (l *Layout) record(sp uint64) uint64 { return alignDown(sp-16, 16) }

func alignDown(v, a uint64) uint64 { return v &^ (a - 1) }

// Delivery is what delivering a signal produces: the bytes to store from
// address Frame up, and the machine state the handler starts with.
type Delivery struct {
	Frame uint64
	Data  []byte
	Entry Context
}

// Deliver lays out the frame for signal signo interrupting ctx, with
// restorer as the handler's return address and handler as its entry.
func (l *Layout) Deliver(ctx *Context, signo int, handler, restorer uint64) Delivery {
	sp := ctx.Regs[l.Target.SP()]
	frame := l.Frame(sp)
	top := frame + l.Size
	switch l.Target {
	case target.X86_64:
		top = l.fpState(sp) + l.fpSize
	case target.AArch64, target.AArch64BE:
		top = l.record(sp) + 16
	}
	b := make([]byte, top-frame)
	o := l.order
	put64 := func(off, v uint64) { o.PutUint64(b[off:], v) }
	put32 := func(off uint64, v uint32) { o.PutUint32(b[off:], v) }

	// siginfo: si_signo, si_errno, si_code; kill(2)'s si_pid and si_uid
	// are 0.
	put32(l.Info, uint32(signo))
	put32(l.Info+8, SIUser)
	// ucontext: uc_flags, uc_link, uc_stack (no alternate stack), the
	// empty signal mask.
	put64(l.UContext, l.UCFlags)
	put32(l.ucStack+8, stackDisabled)
	for d := 0; d < NumRegs; d++ {
		if off, ok := l.Reg(d); ok {
			put64(off, ctx.Regs[d])
		}
	}
	put64(l.PC, ctx.PC)
	entry := *ctx
	entry.PC = handler
	entry.Regs[l.Target.SP()] = frame
	switch l.Target {
	case target.X86_64:
		put64(l.Flags, ctx.Flags)
		put64(uint64(l.Restorer), restorer)
		// cs, gs, fs, ss in one word, then err, trapno, oldmask, cr2 (0).
		put64(l.MContext+8*x86RegCSGSFS, x86UserCS|x86UserDS<<48)
		put64(l.fpPtr, l.fpState(sp))
		entry.Regs[5] = uint64(signo)      // rdi
		entry.Regs[4] = frame + l.Info     // rsi
		entry.Regs[1] = frame + l.UContext // rdx
		entry.Regs[0] = 0                  // rax
		entry.Flags &^= l.FlagsClearedAtEntry
	case target.AArch64, target.AArch64BE:
		put64(l.Flags, ctx.Flags&a64NZCV)
		put32(l.fpsimd, a64FPSIMDMagic)
		put32(l.fpsimd+4, a64FPSIMDSize)
		rec := l.record(sp) - frame
		put64(rec, ctx.Regs[29])
		put64(rec+8, ctx.Regs[30])
		entry.Regs[0] = uint64(signo)
		entry.Regs[1] = frame + l.Info
		entry.Regs[2] = frame + l.UContext
		entry.Regs[29] = frame + rec
		entry.Regs[30] = restorer
	case target.S390X:
		put64(l.Flags, zPSWUserBits|ctx.Flags&(zPSWMaskUser|zPSWMaskRI))
		for i, a := range ctx.Access {
			put32(l.access+4*uint64(i), a)
		}
		put64(uint64(l.BackChain), sp)
		entry.Regs[2] = uint64(signo)
		entry.Regs[3] = frame + l.Info
		entry.Regs[4] = frame + l.UContext
		entry.Regs[5] = 0 // the last breaking-event address: not recorded
		entry.Regs[14] = restorer
	}
	return Delivery{Frame: frame, Data: b, Entry: entry}
}

// ReturnFrame is where rt_sigreturn finds the frame when called with SP
// sp: x86-64 handlers return through pretcode, so the frame is a word
// below.
func (l *Layout) ReturnFrame(sp uint64) uint64 {
	if l.Target == target.X86_64 {
		return sp - 8
	}
	return sp
}

// ErrShortFrame: fewer bytes than the frame's size.
var ErrShortFrame = errors.New("sigframe: frame truncated")

// Return is rt_sigreturn: it loads the context saved in frame (at least
// Size bytes from the frame's address) over cur, the state at the system
// call, and returns the state execution continues with.
func (l *Layout) Return(frame []byte, cur *Context) (Context, error) {
	if uint64(len(frame)) < l.Size {
		return Context{}, fmt.Errorf("%w: %d bytes, %s's frame has %d", ErrShortFrame, len(frame), l.Target.Name(), l.Size)
	}
	o := l.order
	get64 := func(off uint64) uint64 { return o.Uint64(frame[off:]) }
	next := *cur
	for d := 0; d < NumRegs; d++ {
		if off, ok := l.Reg(d); ok {
			next.Regs[d] = get64(off)
		}
	}
	next.PC = get64(l.PC)
	next.Flags = cur.Flags&^l.FlagsRestored | get64(l.Flags)&l.FlagsRestored
	if l.Target == target.S390X {
		for i := range next.Access {
			next.Access[i] = o.Uint32(frame[l.access+4*uint64(i):])
		}
	}
	return next, nil
}
