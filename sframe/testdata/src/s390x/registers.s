# Saved registers in unusual places: the frame pointer saved without the
# return address (RA padding word), the frame pointer as a value
# (.cfi_val_offset), and the return address re-saved deep in a large frame
# (2-byte data words).
	.text
	.globl	fp_only
	.type	fp_only, @function
fp_only:
	.cfi_startproc
	stg	%r11, 88(%r15)
	.cfi_offset %r11, -72
	aghi	%r15, -160
	.cfi_adjust_cfa_offset 160
	lgr	%r11, %r15
	.cfi_def_cfa_register %r11
	lg	%r11, 248(%r11)
	.cfi_def_cfa %r15, 320
	.cfi_restore %r11
	aghi	%r15, 160
	.cfi_adjust_cfa_offset -160
	br	%r14
	.cfi_endproc
	.size	fp_only, .-fp_only

	.globl	fp_val
	.type	fp_val, @function
fp_val:
	.cfi_startproc
	stmg	%r11, %r15, 88(%r15)
	.cfi_val_offset %r11, -72
	.cfi_offset %r14, -48
	lmg	%r11, %r15, 88(%r15)
	.cfi_restore %r11
	.cfi_restore %r14
	br	%r14
	.cfi_endproc
	.size	fp_val, .-fp_val

	.globl	ra_deep
	.type	ra_deep, @function
ra_deep:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset %r14, -48
	.cfi_offset %r15, -40
	agfi	%r15, -40000
	.cfi_adjust_cfa_offset 40000
	stg	%r14, 8(%r15)
	.cfi_offset %r14, -40152
	agfi	%r15, 40000
	.cfi_adjust_cfa_offset -40000
	.cfi_offset %r14, -48
	lmg	%r14, %r15, 112(%r15)
	.cfi_restore %r14
	.cfi_restore %r15
	br	%r14
	.cfi_endproc
	.size	ra_deep, .-ra_deep
