# Frame-pointer and SP-only prologues and epilogues, callee-saved
# registers, several stack adjustments and more than one epilogue.
	.text
	.globl	fp_frame
	.type	fp_frame, @function
fp_frame:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	pushq	%r12
	.cfi_offset %rbx, -24
	.cfi_offset %r12, -32
	subq	$48, %rsp
	call	leaf
	addq	$48, %rsp
	popq	%r12
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	sp_only
	.type	sp_only, @function
sp_only:
	.cfi_startproc
	pushq	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	pushq	%r13
	.cfi_def_cfa_offset 24
	.cfi_offset %r13, -24
	subq	$40, %rsp
	.cfi_def_cfa_offset 64
	call	leaf
	subq	$16, %rsp
	.cfi_adjust_cfa_offset 16
	call	leaf
	addq	$16, %rsp
	.cfi_adjust_cfa_offset -16
	addq	$40, %rsp
	.cfi_def_cfa_offset 24
	popq	%r13
	.cfi_def_cfa_offset 16
	popq	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	sp_only, .-sp_only

	.globl	multi_epilogue
	.type	multi_epilogue, @function
multi_epilogue:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	testq	%rdi, %rdi
	je	1f
	.cfi_remember_state
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
1:
	.cfi_restore_state
	cmpq	$1, %rdi
	je	2f
	.cfi_remember_state
	movq	-8(%rbp), %rbx
	leave
	.cfi_def_cfa %rsp, 8
	ret
2:
	.cfi_restore_state
	call	leaf
	popq	%rbx
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	jmp	leaf
	.cfi_endproc
	.size	multi_epilogue, .-multi_epilogue

	.globl	leaf
	.type	leaf, @function
leaf:
	.cfi_startproc
	ret
	.cfi_endproc
	.size	leaf, .-leaf
