	.text
	.type	f, @function
f:
	.cfi_startproc
	push	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	jmp	f.cold
	.cfi_endproc
	.size	f, .-f
	.type	f.cold, @function
f.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	pop	%rbp
	.cfi_def_cfa_offset 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	f.cold, .-f.cold
