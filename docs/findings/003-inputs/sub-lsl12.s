	.text
	.globl	f
	.type	f, @function
f:
	sub	sp, sp, #0x8, lsl #12
	nop
	add	sp, sp, #0x8, lsl #12
	ret
	.size	f, .-f
