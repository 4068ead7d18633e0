/* lost() carries DW_CFA_GNU_args_size 16 (.cfi_escape 0x2e, 0x10) while
   its CFA is SP-based. The directive says nothing about the CFA, the
   return address or the frame pointer, so the CFI is expressible in
   SFrame; yet GNU as writes no FDE for the function (2.44: "skipping
   SFrame FDE"; 2.47: "no SFrame FDE emitted", by design: gen-sframe.c
   skips a non-zero args size unless the CFA is FP-based, which is what
   gcc's own output has), while before() and after(), from the same
   object, get theirs. check must report lost() as an error (an FDE the
   producer dropped), not as coverage of an input without SFrame. */
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
