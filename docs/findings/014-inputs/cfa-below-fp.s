	.text
	.type	f, @function
f:
	.cfi_startproc
	lea	24(%rsp), %rbp
	.cfi_def_cfa %rbp, -16
	ret
	.cfi_endproc
	.size	f, .-f
