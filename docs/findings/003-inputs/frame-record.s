	.text
	.globl	g
	.type	g, @function
g:
	sub	sp, sp, #32
	stp	x29, x30, [sp, #16]
	add	x29, sp, #16
	sub	sp, sp, #16
	nop
	sub	sp, x29, #16
	ldp	x29, x30, [sp, #16]
	add	sp, sp, #32
	ret
	.size	g, .-g
