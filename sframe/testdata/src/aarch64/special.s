// A signal trampoline (.cfi_signal_frame), an outermost function whose
// return address is undefined, and a CFA in a register other than SP/FP.
	.text
	.globl	outermost
	.type	outermost, %function
outermost:
	.cfi_startproc
	.cfi_undefined 30
	mov	x29, #0
	mov	x0, sp
	bl	sigtramp
	brk	#0
	.cfi_endproc
	.size	outermost, .-outermost

	.globl	sigtramp
	.type	sigtramp, %function
sigtramp:
	.cfi_startproc
	.cfi_signal_frame
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x8, #139
	svc	#0
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	sigtramp, .-sigtramp

	.globl	cfa_x9
	.type	cfa_x9, %function
cfa_x9:
	.cfi_startproc
	mov	x9, sp
	.cfi_def_cfa_register 9
	and	sp, x9, #-64
	stp	x29, x30, [sp, -16]!
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	mov	sp, x9
	.cfi_def_cfa_register sp
	ret
	.cfi_endproc
	.size	cfa_x9, .-cfa_x9
