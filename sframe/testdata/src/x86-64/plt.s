# Calls through the PLT: the linker adds SFrame FDEs for .plt (and
# .plt.sec) itself when linking against pltlib.s as a shared object.
	.text
	.globl	_start
	.type	_start, @function
_start:
	.cfi_startproc
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	call	ext_a@PLT
	call	ext_b@PLT
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	_start, .-_start
