# int probe (ctx, pc, frep, uint64_t regs[6]): sframe_find_fre (ctx, pc,
# frep) called with rbx, rbp, r12-r15 (the registers a callee must
# preserve) set to 0x11..11 ... 0x66..66; stores what they hold after the
# call in regs, and returns its result.
	.text
	.globl	probe
	.type	probe, @function
probe:
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	pushq	%rcx
	movabsq	$0x1111111111111111, %rbx
	movabsq	$0x2222222222222222, %rbp
	movabsq	$0x3333333333333333, %r12
	movabsq	$0x4444444444444444, %r13
	movabsq	$0x5555555555555555, %r14
	movabsq	$0x6666666666666666, %r15
	call	sframe_find_fre
	popq	%rcx
	movq	%rbx, 0(%rcx)
	movq	%rbp, 8(%rcx)
	movq	%r12, 16(%rcx)
	movq	%r13, 24(%rcx)
	movq	%r14, 32(%rcx)
	movq	%r15, 40(%rcx)
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret
	.size	probe, .-probe
	.section	.note.GNU-stack,"",@progbits
