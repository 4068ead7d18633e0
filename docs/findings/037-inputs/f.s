	.text
	.globl	f
	.type	f, @function
f:
	.cfi_startproc
	call	g@PLT
	movq	g@GOTPCREL(%rip), %rax
	ret
	.cfi_endproc
	.size	f, .-f
	.section	.note.GNU-stack,"",@progbits
