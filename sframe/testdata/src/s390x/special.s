# A signal trampoline (.cfi_signal_frame) and an outermost function whose
# return address is undefined.
	.text
	.globl	outermost
	.type	outermost, @function
outermost:
	.cfi_startproc
	.cfi_undefined %r14
	lghi	%r11, 0
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	brasl	%r14, sigtramp
	j	.
	.cfi_endproc
	.size	outermost, .-outermost

	.globl	sigtramp
	.type	sigtramp, @function
sigtramp:
	.cfi_startproc
	.cfi_signal_frame
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	svc	173
	lmg	%r14, %r15, 112(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	br	%r14
	.cfi_endproc
	.size	sigtramp, .-sigtramp
