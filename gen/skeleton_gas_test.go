package gen

import (
	"github.com/sfconform/sfconform/target"
)

// What GNU as does with the far-code, new-stack and empty-fde patterns,
// measured (see gasCannot):
//
//   - new-stack, GNU as 2.40 and 2.44 (SFrame v1, v2): ".cfi_undefined
//     %rip" (x30, %r14) in the middle of a function is ignored, and the
//     frame the function left keeps being described. x86-64 after
//     "mov $0x700e0000,%esp; .cfi_undefined %rip; .cfi_restore %rbp",
//     2.44 writes the row "fp+16 u f" (2.40 "fp+16 u u") where 2.47
//     writes "RA undefined"; version 2 could say it (erratum 2: an FRE
//     without data words), GNU as 2.44 does not.
//   - new-stack under --scfi=experimental (2.44, 2.47.50; x86-64,
//     AArch64): clearing the frame pointer on the new stack ("xor
//     %ebp,%ebp", "mov x29, #0x0") gives "Error: SCFI: usage of REG_FP as
//     scratch not supported" and "Error: SCFI: forward pass failed for
//     func 'f1_new_stack'". Without that instruction SCFI keeps the CFA on
//     the frame pointer after the switch of SP and never marks the frame
//     outermost: it cannot know the new stack is fresh.
//   - shrink-wrap under --scfi=experimental (2.44, 2.47.50; x86-64,
//     AArch64): "Error: SCFI: forward pass failed for func
//     'f7_shrink_wrap'". SCFI takes every call to return, so the
//     noreturn call falls through, framed, into the fast path, which the
//     entry branch reaches unframed: two states at one instruction.
//     Compilers place a noreturn call's fall-through this way (GCC's
//     shrink-wrapping); SCFI cannot be told the call does not return.
func init() {
	for _, tg := range target.All {
		for _, tc := range []string{"gas-2.40", "gas-2.44"} {
			gasCannot[gasCase{tc, tg, "new-stack", false}] = "GNU as before 2.47 ignores .cfi_undefined of the RA column in the middle of a function"
		}
		for _, tc := range []string{"gas-2.44", "gas-2.47"} {
			gasCannot[gasCase{tc, tg, "new-stack", true}] = "SCFI: usage of REG_FP as scratch not supported (the frame pointer cleared on the new stack)"
			gasCannot[gasCase{tc, tg, "shrink-wrap", true}] = "SCFI takes the noreturn call to fall through into the fast path, reached unframed from the entry: forward pass failed"
		}
	}
}
