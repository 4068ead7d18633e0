# Functions long enough for 2-byte and 4-byte FRE start offsets, and
# CFA offsets that need 2-byte and 4-byte data words.
	.text
	.globl	addr2
	.type	addr2, @function
addr2:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	subq	$0x1000, %rsp
	.cfi_adjust_cfa_offset 0x1000
	.skip	300, 0x90
	addq	$0x1000, %rsp
	.cfi_adjust_cfa_offset -0x1000
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	addr2, .-addr2

	.globl	addr4
	.type	addr4, @function
addr4:
	.cfi_startproc
	subq	$0x100000, %rsp
	.cfi_def_cfa_offset 0x100008
	.skip	70000, 0x90
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -0x100010
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	addq	$0x100000, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	addr4, .-addr4
