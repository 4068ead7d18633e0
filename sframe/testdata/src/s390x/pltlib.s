# The shared object plt.s calls into; its own .sframe is not kept.
	.text
	.globl	ext_a
	.type	ext_a, @function
ext_a:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	ext_a, .-ext_a
	.globl	ext_b
	.type	ext_b, @function
ext_b:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	ext_b, .-ext_b
