	.text
	.globl	f
	.type	f, @function
f:
	mov	%rsp, %r11
	sub	$8, %rsp
	mov	%r11, %rsp
	ret
	.size	f, .-f
