// Functions long enough for 2-byte and 4-byte FRE start offsets, and
// CFA offsets that need 2-byte and 4-byte data words.
	.text
	.globl	addr2
	.type	addr2, %function
addr2:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	sub	sp, sp, #0x1000
	.cfi_adjust_cfa_offset 0x1000
	.skip	300
	add	sp, sp, #0x1000
	.cfi_adjust_cfa_offset -0x1000
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	addr2, .-addr2

	.globl	addr4
	.type	addr4, %function
addr4:
	.cfi_startproc
	sub	sp, sp, #0x100, lsl 12
	.cfi_def_cfa_offset 0x100000
	.skip	70000
	stp	x29, x30, [sp, -16]!
	.cfi_adjust_cfa_offset 16
	.cfi_offset 29, -0x100010
	.cfi_offset 30, -0x100008
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_adjust_cfa_offset -16
	add	sp, sp, #0x100, lsl 12
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	addr4, .-addr4
