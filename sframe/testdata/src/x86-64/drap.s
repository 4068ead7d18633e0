# Stack realignment through a DRAP register (%r10), as GCC emits it for
# functions with over-aligned locals. drap_plain uses only .cfi_def_cfa;
# drap_escape adds GCC's DW_CFA_expression / DW_CFA_def_cfa_expression
# escapes.
	.text
	.globl	drap_plain
	.type	drap_plain, @function
drap_plain:
	.cfi_startproc
	leaq	8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq	$-32, %rsp
	pushq	-8(%r10)
	pushq	%rbp
	movq	%rsp, %rbp
	.cfi_def_cfa %rbp, 16
	.cfi_offset %rbp, -16
	subq	$64, %rsp
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	drap_plain, .-drap_plain

	.globl	drap_escape
	.type	drap_escape, @function
drap_escape:
	.cfi_startproc
	leaq	8(%rsp), %r10
	.cfi_def_cfa %r10, 0
	andq	$-32, %rsp
	pushq	-8(%r10)
	pushq	%rbp
	# DW_CFA_expression %rbp: DW_OP_breg6 0
	.cfi_escape 0x10,0x6,0x2,0x76,0
	movq	%rsp, %rbp
	pushq	%r10
	# DW_CFA_def_cfa_expression: DW_OP_breg6 -8; DW_OP_deref
	.cfi_escape 0xf,0x3,0x76,0x78,0x6
	subq	$64, %rsp
	addq	$64, %rsp
	popq	%r10
	.cfi_def_cfa %r10, 0
	popq	%rbp
	leaq	-8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	drap_escape, .-drap_escape
