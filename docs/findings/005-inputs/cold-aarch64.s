	.text
	.type	f, @function
f:
	.cfi_startproc
	stp	x29, x30, [sp, #-16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	b	f.cold
	.cfi_endproc
	.size	f, .-f
	.type	f.cold, @function
f.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	ldp	x29, x30, [sp], #16
	.cfi_def_cfa_offset 0
	.cfi_restore 30
	.cfi_restore 29
	ret
	.cfi_endproc
	.size	f.cold, .-f.cold
