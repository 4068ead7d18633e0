package gen

// s390xSigTrampoline is the kernel vDSO's __kernel_rt_sigreturn
// (arch/s390/kernel/vdso64/vdso_user_wrapper.S: svc __NR_rt_sigreturn
// under CFI_STARTPROC alone), after a nop the FDE starts at, for
// unwinders that look up the return address - 1: the rows are the entry
// rules (CFA %r15+160, the RA in %r14), which say nothing about the
// interrupted context; the signal flag says where it is.
func s390xSigTrampoline(b *builder) {
	b.signal = true
	b.insn([]byte{0x07, 0x07}, "nopr %%r7")
	b.insn([]byte{0x0a, 0xad}, "svc 173")
}
