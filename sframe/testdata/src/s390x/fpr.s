# Leaf functions that keep the return address and the frame pointer in
# floating-point registers instead of the stack (.cfi_register to an FPR).
	.text
	.machine z10
	.globl	fpr_save
	.type	fpr_save, @function
fpr_save:
	.cfi_startproc
	ldgr	%f0, %r14
	.cfi_register %r14, %f0
	ldgr	%f2, %r11
	.cfi_register %r11, %f2
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	lgr	%r11, %r15
	.cfi_def_cfa_register %r11
	lgr	%r15, %r11
	.cfi_def_cfa_register %r15
	aghi	%r15, 160
	.cfi_adjust_cfa_offset -160
	lgdr	%r11, %f2
	.cfi_restore %r11
	lgdr	%r14, %f0
	.cfi_restore %r14
	br	%r14
	.cfi_endproc
	.size	fpr_save, .-fpr_save

	.globl	ra_in_gpr
	.type	ra_in_gpr, @function
ra_in_gpr:
	.cfi_startproc
	lgr	%r0, %r14
	.cfi_register %r14, %r0
	brasl	%r14, fpr_save
	lgr	%r14, %r0
	.cfi_restore %r14
	br	%r14
	.cfi_endproc
	.size	ra_in_gpr, .-ra_in_gpr
