# FREs that start at the function's end: an empty function (its one FRE
# starts at 0, its size) and a CFI directive after the last instruction.
# GNU as 2.40 to 2.47 write both; ld and objdump 2.40 and 2.44 abort on
# them (libsframe asserts start < size), 2.47's print them.
	.text
	.globl	tail
	.type	tail, @function
tail:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	popq	%rbp
	ret
	.cfi_def_cfa_offset 8
	.cfi_endproc
	.size	tail, .-tail

	.type	empty, @function
empty:
	.cfi_startproc
	.cfi_endproc
	.size	empty, .-empty
