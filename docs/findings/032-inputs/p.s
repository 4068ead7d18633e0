	.text
	.globl	f
	.type	f, @function
f:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	call	g@PLT
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	f, .-f
	.section	.note.GNU-stack,"",@progbits
