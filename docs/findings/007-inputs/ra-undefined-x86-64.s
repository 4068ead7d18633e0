	.text
	.type	f, @function
f:
	.cfi_startproc
	nop
	.cfi_undefined %rip
	nop
	.cfi_restore %rip
	nop
	.cfi_undefined %rip
	nop
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
	.size	f, .-f
