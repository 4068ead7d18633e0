# Functions the dynamic check's synthetic inputs drive into writing on
# their own stack (x86-64, with CFI; assembled with --gsframe).
#
# clob(p, i) adds 1 to the word i words above its stack pointer. With
# i = 0, the check's first variant, that is the FP it saved: the program
# destroys the value its epilogue restores, as zlib's inflate_table does
# with lengths from the check's filler memory. The rows are right; the
# run is left out from there, never an error.
#
# wrongslot(p, q) saves %rbp at CFA-16 but its CFI says CFA-24, the slot
# of a local it then writes: a wrong row, which must stay an error even
# though a write to the slot follows.
	.text
	.globl	clob
	.type	clob, @function
clob:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rdi, %rbp
	addq	$1, (%rsp,%rsi,8)
	movq	%rbp, %rax
	popq	%rbp
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	clob, .-clob

	.globl	wrongslot
	.type	wrongslot, @function
wrongslot:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -24
	subq	$16, %rsp
	.cfi_def_cfa_offset 32
	movq	%rdi, %rbp
	movq	%rsi, 8(%rsp)
	movq	%rbp, %rax
	addq	$16, %rsp
	.cfi_def_cfa_offset 16
	popq	%rbp
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	wrongslot, .-wrongslot

# clob2 is clob with the write before the function uses %rbp: the slot is
# still the copy the epilogue restores from.
	.globl	clob2
	.type	clob2, @function
clob2:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	addq	$1, (%rsp,%rsi,8)
	movq	%rdi, %rbp
	movq	%rbp, %rax
	popq	%rbp
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	clob2, .-clob2

# stale restores %rbp from its slot without saying so in the CFI, then
# writes its second argument there: the rule outlived the restore (the
# register holds the caller's value again), a wrong row that must stay an
# error.
	.globl	stale
	.type	stale, @function
stale:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rdi, %rbp
	movq	(%rsp), %rbp
	movq	%rsi, (%rsp)
	movq	%rdi, %rax
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	stale, .-stale

	.globl	main
	.type	main, @function
main:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	xorl	%edi, %edi
	movl	$2, %esi
	call	clob
	xorl	%edi, %edi
	movl	$7, %esi
	call	wrongslot
	xorl	%edi, %edi
	movl	$2, %esi
	call	clob2
	xorl	%edi, %edi
	movq	%rbp, %rsi
	call	stale
	xorl	%eax, %eax
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	main, .-main
	.section	.note.GNU-stack,"",@progbits
