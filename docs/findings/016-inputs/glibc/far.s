	.text
	.globl	f
	.type	f, @function
f:				# near the section: an FDE
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	jmp	.
	.cfi_endproc
	.size	f, .-f

	.section .far,"ax",@progbits
	.globl	far
	.type	far, @function
far:				# 4 GiB above f: no CFI, no FDE
	nop
	jmp	.
	.size	far, .-far
