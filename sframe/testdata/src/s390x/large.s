# Functions long enough for 2-byte and 4-byte FRE start offsets, and
# CFA offsets that need 2-byte and 4-byte data words.
	.text
	.globl	addr2
	.type	addr2, @function
addr2:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	aghi	%r15, -4096
	.cfi_adjust_cfa_offset 4096
	.skip	300
	lmg	%r14, %r15, 4208(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	addr2, .-addr2

	.globl	addr4
	.type	addr4, @function
addr4:
	.cfi_startproc
	agfi	%r15, -0x100000
	.cfi_adjust_cfa_offset 0x100000
	.skip	70000
	agfi	%r15, 0x100000
	.cfi_adjust_cfa_offset -0x100000
	br	%r14
	.cfi_endproc
	.size	addr4, .-addr4
