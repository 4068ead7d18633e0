# Stack-pointer and frame-pointer (%r11) prologues and epilogues with
# callee-saved registers in the register save area, several stack
# adjustments and more than one epilogue.
	.text
	.globl	fp_frame
	.type	fp_frame, @function
fp_frame:
	.cfi_startproc
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset %r11, -72
	.cfi_offset %r12, -64
	.cfi_offset %r13, -56
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	lgr	%r1, %r15
	aghi	%r15, -168
	.cfi_adjust_cfa_offset 168
	stg	%r1, 0(%r15)
	lgr	%r11, %r15
	.cfi_def_cfa_register %r11
	brasl	%r14, leaf
	lmg	%r11, %r15, 256(%r11)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_restore %r13
	.cfi_restore %r12
	.cfi_restore %r11
	.cfi_def_cfa %r15, 160
	br	%r14
	.cfi_endproc
	.size	fp_frame, .-fp_frame

	.globl	sp_only
	.type	sp_only, @function
sp_only:
	.cfi_startproc
	stmg	%r6, %r15, 48(%r15)
	.cfi_offset %r6, -112
	.cfi_offset %r7, -104
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	brasl	%r14, leaf
	aghi	%r15, -64
	.cfi_adjust_cfa_offset 64
	brasl	%r14, leaf
	aghi	%r15, 64
	.cfi_adjust_cfa_offset -64
	lmg	%r6, %r15, 208(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_restore %r7
	.cfi_restore %r6
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	sp_only, .-sp_only

	.globl	multi_epilogue
	.type	multi_epilogue, @function
multi_epilogue:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	cghi	%r2, 0
	jne	1f
	.cfi_remember_state
	lmg	%r14, %r15, 272(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_def_cfa_offset 160
	br	%r14
1:
	.cfi_restore_state
	brasl	%r14, leaf
	lmg	%r14, %r15, 272(%r15)
	.cfi_restore %r15
	.cfi_restore %r14
	.cfi_def_cfa_offset 160
	jg	leaf
	.cfi_endproc
	.size	multi_epilogue, .-multi_epilogue

	.globl	leaf
	.type	leaf, @function
leaf:
	.cfi_startproc
	br	%r14
	.cfi_endproc
	.size	leaf, .-leaf
