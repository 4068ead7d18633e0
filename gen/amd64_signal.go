package gen

import (
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// glibc's __restore_rt (sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c)
// describes the signal context to DWARF unwinders with hand-written CFI:
// the handler returned through the frame's pretcode, so %rsp points at
// the ucontext, and the CFA is the interrupted %rsp loaded from it
// (DW_CFA_def_cfa_expression: DW_OP_breg7 oRSP; DW_OP_deref), every
// register is saved at %rsp + its offset (DW_CFA_expression), %rip among
// them as the return address. The offsets into ucontext_t:
const (
	amd64ORSP = 160 // offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP])
	amd64ORIP = 168 // ... gregs[REG_RIP]
	amd64ORBP = 120 // ... gregs[REG_RBP]
)

// amd64SigTrampoline is __restore_rt: a nop the FDE starts at (so that an
// unwinder looking up the return address - 1 finds this FDE), then
// movq $__NR_rt_sigreturn,%rax; syscall, encoded as glibc's is (48 c7 c0
// 0f 00 00 00 0f 05: the REX.W form with a 32-bit immediate, not the
// shorter mov to %eax), the bytes an unwinder without unwind information
// for the trampoline recognises it by (glibc's x86-64 uw-sigframe.h,
// libgcc's linux-unwind.h). Its rows are glibc's CFI, as far as SFrame
// goes: CFA, RA and FP, all in a version 3 FLEX FDE.
func amd64SigTrampoline(b *builder) {
	b.signal = true
	b.cfaLoadedFrom(target.RegX86SP, amd64ORSP)
	b.st.ra = sframe.Rule{Kind: sframe.RuleExpr, Reg: target.RegX86SP, Offset: amd64ORIP, Deref: true}
	b.st.fp = sframe.Rule{Kind: sframe.RuleExpr, Reg: target.RegX86SP, Offset: amd64ORBP, Deref: true}
	b.insn([]byte{0x90}, "nop")
	b.insn([]byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00}, "mov $0xf,%%rax")
	b.insn([]byte{0x0f, 0x05}, "syscall")
}
