	.text
	.type	_start, @function
_start:
	.cfi_startproc simple
	.cfi_undefined %rip
	hlt
	.cfi_endproc
	.size	_start, .-_start
