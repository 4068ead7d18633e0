// Saved registers in unusual places: the return address in another
// register, the frame pointer as a value (.cfi_val_offset), and the frame
// pointer saved without the return address.
	.text
	.globl	ra_in_reg
	.type	ra_in_reg, %function
ra_in_reg:
	.cfi_startproc
	mov	x9, x30
	.cfi_register 30, 9
	bl	leaf
	mov	x30, x9
	.cfi_restore 30
	ret
	.cfi_endproc
	.size	ra_in_reg, .-ra_in_reg

	.globl	fp_val
	.type	fp_val, %function
fp_val:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_val_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	fp_val, .-fp_val

	.globl	fp_only
	.type	fp_only, %function
fp_only:
	.cfi_startproc
	str	x29, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	ldr	x29, [sp], 16
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	fp_only, .-fp_only

	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	leaf, .-leaf
