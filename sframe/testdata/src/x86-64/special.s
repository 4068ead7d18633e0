# A signal trampoline (.cfi_signal_frame) and an outermost function whose
# return address is undefined.
	.text
	.globl	outermost
	.type	outermost, @function
outermost:
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp
	movq	%rsp, %rdi
	andq	$-16, %rsp
	call	sigtramp
	hlt
	.cfi_endproc
	.size	outermost, .-outermost

	.globl	sigtramp
	.type	sigtramp, @function
sigtramp:
	.cfi_startproc
	.cfi_signal_frame
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movl	$15, %eax
	syscall
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sigtramp, .-sigtramp
