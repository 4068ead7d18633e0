// Frame-record and SP-only prologues and epilogues, callee-saved
// registers, several stack adjustments and more than one epilogue.
	.text
	.globl	fp_frame
	.type	fp_frame, %function
fp_frame:
	.cfi_startproc
	stp	x29, x30, [sp, -48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	mov	x29, sp
	.cfi_def_cfa_register 29
	stp	x19, x20, [sp, 16]
	.cfi_offset 19, -32
	.cfi_offset 20, -24
	bl	leaf
	ldp	x19, x20, [sp, 16]
	.cfi_restore 20
	.cfi_restore 19
	ldp	x29, x30, [sp], 48
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa sp, 0
	ret
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	sp_only
	.type	sp_only, %function
sp_only:
	.cfi_startproc
	sub	sp, sp, #64
	.cfi_def_cfa_offset 64
	str	x30, [sp, 56]
	.cfi_offset 30, -8
	str	x21, [sp, 48]
	.cfi_offset 21, -16
	sub	sp, sp, #32
	.cfi_adjust_cfa_offset 32
	bl	leaf
	add	sp, sp, #32
	.cfi_adjust_cfa_offset -32
	ldr	x21, [sp, 48]
	.cfi_restore 21
	ldr	x30, [sp, 56]
	.cfi_restore 30
	add	sp, sp, #64
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	sp_only, .-sp_only

	.globl	multi_epilogue
	.type	multi_epilogue, %function
multi_epilogue:
	.cfi_startproc
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	str	x19, [sp, 16]
	.cfi_offset 19, -16
	cbz	x0, 1f
	.cfi_remember_state
	ldr	x19, [sp, 16]
	.cfi_restore 19
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
1:
	.cfi_restore_state
	cmp	x0, 1
	b.eq	2f
	.cfi_remember_state
	bl	leaf
	ldr	x19, [sp, 16]
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_restore 19
	.cfi_def_cfa_offset 0
	ret
2:
	.cfi_restore_state
	ldr	x19, [sp, 16]
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_restore 19
	.cfi_def_cfa_offset 0
	b	leaf
	.cfi_endproc
	.size	multi_epilogue, .-multi_epilogue

	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	leaf, .-leaf
