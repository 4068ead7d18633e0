# Calls through the PLT of a shared object built from pltlib.s.
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	brasl	%r14, ext_a@PLT
	brasl	%r14, ext_b@PLT
	lmg	%r14, %r15, 272(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	_start, .-_start
