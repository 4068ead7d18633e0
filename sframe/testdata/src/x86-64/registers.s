# Saved registers in unusual places: the frame pointer in another
# register, the return address copied deeper into the frame, the frame
# pointer as a value (.cfi_val_offset), and a CFA offset that exists only
# between two directives at the same address.
	.text
	.globl	fp_in_reg
	.type	fp_in_reg, @function
fp_in_reg:
	.cfi_startproc
	movq	%rbp, %rbx
	.cfi_register %rbp, %rbx
	leaq	-16(%rsp), %rbp
	movq	%rbx, %rbp
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	fp_in_reg, .-fp_in_reg

	.globl	ra_moved
	.type	ra_moved, @function
ra_moved:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	pushq	-8(%rsp)
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rip, -24
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
	.size	ra_moved, .-ra_moved

	.globl	val_off
	.type	val_off, @function
val_off:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_val_offset %rbp, -16
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	val_off, .-val_off

	.globl	cfa_rel_off
	.type	cfa_rel_off, @function
cfa_rel_off:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	.cfi_def_cfa_offset 0x10000
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	cfa_rel_off, .-cfa_rel_off
