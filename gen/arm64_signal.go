package gen

// arm64SigTrampoline is the kernel vDSO's __kernel_rt_sigreturn
// (arch/arm64/kernel/vdso/sigreturn.S): the "mysterious NOP" the FDE
// starts at, for unwinders that look up the return address - 1, then
// mov x8, #__NR_rt_sigreturn; svc #0. Its rows are the CFI the vDSO had
// (and keeps, commented out since libgcc tripped over it): the CFA is the
// frame record {x29, x30} of the interrupted context that the kernel
// places above the signal frame and points x29 at, so an unwinder that
// ignores the signal flag goes on from the interrupted function's caller.
//
//	.cfi_signal_frame
//	.cfi_def_cfa x29, 0
//	.cfi_offset x29, 0
//	.cfi_offset x30, 8
func arm64SigTrampoline(b *builder) {
	b.signal = true
	b.cfaAt(arm64FP, 0)
	b.st.fp = savedAt(0)
	b.st.ra = savedAt(8)
	arm64Insn(b, 0xd503201f, "nop")
	arm64Movz(b, 8, 139)
	arm64Insn(b, 0xd4000001, "svc #0x0")
}
