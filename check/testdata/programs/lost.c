/* lost() carries DW_CFA_GNU_args_size 16 (.cfi_escape 0x2e, 0x10) ahead
   of everything else, which says nothing about the CFA, the return address
   or the frame pointer: its CFI is expressible in SFrame, yet GNU as 2.44
   warns "skipping SFrame FDE" and 2.47 "no SFrame FDE emitted", and
   neither writes an FDE for it, while before() and after(), from the same
   object, get theirs (with a size of 0, 2.47 keeps the FDE; g++'s own
   args_size escapes before calls are kept too). check must report lost()
   as an error (an FDE the producer dropped), not as coverage of an input
   without SFrame. */
__attribute__((noinline)) int callee(int x)
{
	return x ^ 5;
}

__attribute__((noinline)) int before(int x)
{
	return callee(x) + 1;
}

__attribute__((noinline)) int lost(int x)
{
	__asm__ volatile(".cfi_escape 0x2e, 0x10");
	return callee(x) * 3;
}

__attribute__((noinline)) int after(int x)
{
	return callee(x) - 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	return before(argc) + lost(argc) + after(argc);
}
