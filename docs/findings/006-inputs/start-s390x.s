	.text
	.type	_start, @function
_start:
	.cfi_startproc simple
	.cfi_undefined %r14
	j	0
	.cfi_endproc
	.size	_start, .-_start
