// Calls through the PLT of a shared object built from pltlib.s.
	.text
	.globl	_start
	.type	_start, %function
_start:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	bl	ext_a
	bl	ext_b
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	_start, .-_start
