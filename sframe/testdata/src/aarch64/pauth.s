// Return addresses signed with pointer authentication, A key and B key.
	.text
	.globl	pac_a
	.type	pac_a, %function
pac_a:
	.cfi_startproc
	hint	25		// paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	mov	x29, sp
	bl	pac_b
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint	29		// autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	pac_a, .-pac_a

	.globl	pac_b
	.type	pac_b, %function
pac_b:
	.cfi_startproc
	.cfi_b_key_frame
	hint	27		// pacibsp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	hint	31		// autibsp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	pac_b, .-pac_b
