	.text
	.type	_start, @function
_start:
	.cfi_startproc simple
	.cfi_undefined x30
	hlt	#0
	.cfi_endproc
	.size	_start, .-_start
