# gen.awk writes the x86-64 assembly of the benchmark section: N small
# functions (default 20000) in the shapes GCC gives ordinary code, picked
# by the function's index modulo 20, so the output is the same every run.
#
#   awk -v N=20000 -f gen.awk >bench.s
#
# Per 20 functions: 2 leaves (1 FRE), 4 SP-only frames (3 FREs), 6 frame-
# pointer frames (4 FREs), 5 frame-pointer frames with a second epilogue
# (.cfi_remember_state, 6 FREs) and 3 frames saving callee-saved registers
# (9 FREs). Stack sizes vary with the index; one SP-only frame in 20
# allocates 4 KiB, which needs 2-byte data words.
BEGIN {
	if (N == "") N = 20000
	print "\t.text"
	print "\t.globl f0"
	for (i = 0; i < N; i++) {
		k = i % 20
		printf "\t.type f%d,@function\nf%d:\n\t.cfi_startproc\n", i, i
		frame = 16 * (1 + i % 7)
		if (k < 2) {
			leaf()
		} else if (k < 6) {
			sp_only(k == 5 ? 4096 : frame + 8)
		} else if (k < 12) {
			fp_frame()
		} else if (k < 17) {
			two_epilogues()
		} else {
			callee_saved(frame + 8)
		}
		printf "\t.cfi_endproc\n\t.size f%d, .-f%d\n", i, i
	}
}

function leaf() {
	print "\tmovl $1, %eax"
	print "\tret"
}

function sp_only(n) {
	printf "\tsubq $%d, %%rsp\n\t.cfi_def_cfa_offset %d\n", n, n + 8
	print "\tmovq %rdi, (%rsp)"
	printf "\taddq $%d, %%rsp\n\t.cfi_def_cfa_offset 8\n", n
	print "\tret"
}

function fp_frame() {
	print "\tpushq %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16"
	print "\tmovq %rsp, %rbp\n\t.cfi_def_cfa_register %rbp"
	print "\tmovq %rdi, -8(%rbp)"
	print "\tpopq %rbp\n\t.cfi_def_cfa %rsp, 8"
	print "\tret"
}

function two_epilogues() {
	print "\tpushq %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16"
	print "\tmovq %rsp, %rbp\n\t.cfi_def_cfa_register %rbp"
	print "\ttestq %rdi, %rdi"
	print "\tje 1f"
	print "\t.cfi_remember_state"
	print "\tpopq %rbp\n\t.cfi_def_cfa %rsp, 8"
	print "\tret"
	print "1:"
	print "\t.cfi_restore_state"
	print "\tmovq %rdi, -8(%rbp)"
	print "\tpopq %rbp\n\t.cfi_def_cfa %rsp, 8"
	print "\tret"
}

function callee_saved(n) {
	print "\tpushq %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16"
	print "\tpushq %rbx\n\t.cfi_def_cfa_offset 24\n\t.cfi_offset %rbx, -24"
	print "\tpushq %r12\n\t.cfi_def_cfa_offset 32\n\t.cfi_offset %r12, -32"
	printf "\tsubq $%d, %%rsp\n\t.cfi_def_cfa_offset %d\n", n, n + 32
	print "\tmovq %rdi, (%rsp)"
	printf "\taddq $%d, %%rsp\n\t.cfi_def_cfa_offset 32\n", n
	print "\tpopq %r12\n\t.cfi_def_cfa_offset 24"
	print "\tpopq %rbx\n\t.cfi_def_cfa_offset 16"
	print "\tpopq %rbp\n\t.cfi_def_cfa_offset 8"
	print "\tret"
}
