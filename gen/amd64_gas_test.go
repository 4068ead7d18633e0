package gen

import "github.com/sfconform/sfconform/target"

// What the provisioned GNU assemblers cannot do with the amd64-64 patterns,
// measured on gen's programs (each pattern alone, seeds 1-20) and on the
// smallest sources that show it.
func init() {
	amd64 := target.X86_64
	// SFrame v1 and v2 cannot express a CFA on %r10/%r11 or loaded from
	// memory, nor an RA in a register. 2.44 leaves the function out with a
	// warning. 2.40 takes a CFA on %r10 for an SP-based one, and leaves
	// the function out without a word only when the CFI also has a
	// .cfi_escape or .cfi_register, as these patterns' always do
	// (docs/findings/001).
	for p, dir := range map[string]string{"drap": ".cfi_def_cfa %r10, 0", "cfa-other-reg-ra-in-reg": ".cfi_def_cfa_register %r10 or %r11"} {
		gasCannot[gasCase{"gas-2.40", amd64, p, false}] = "GNU as 2.40 (SFrame v1) silently writes no FDE for a function with " +
			dir + " and a .cfi_escape or .cfi_register (no message; objdump 2.40 --sframe counts no FDE for it); without them it writes the CFA as SP-based (docs/findings/001)"
		gasCannot[gasCase{"gas-2.44", amd64, p, false}] = "GNU as 2.44 (SFrame v2) writes no FDE for a function with " + dir +
			" and warns `Warning: skipping SFrame FDE; non-SP/FP register 10 in .cfi_def_cfa` (or 11, .cfi_def_cfa_register)"
	}
	for _, tc := range []string{"gas-2.44", "gas-2.47"} {
		// DRAP realigns SP while the CFA is on %r10.
		gasCannot[gasCase{tc, amd64, "drap", true}] = tc + " --scfi=experimental refuses `lea 0x8(%rsp),%r10; and $-32,%rsp`: " +
			"`Error: SCFI: unsupported stack manipulation pattern` at the and, then `Error: SCFI: forward pass failed`"
		// SCFI tracks a CFA on SP or FP only, and a return through a
		// register is no return to it.
		gasCannot[gasCase{tc, amd64, "cfa-other-reg-ra-in-reg", true}] = tc + " --scfi=experimental refuses `pop %r11; jmp *%r11` " +
			"(`Error: untraceable control flow for func`) and `sub $8,%rsp; and $-16,%rsp` (`Error: SCFI: unsupported stack " +
			"manipulation pattern`), and silently ignores `mov %r11,%rsp`: for `mov %rsp,%r11; sub $8,%rsp; mov %r11,%rsp; ret` " +
			"it writes CFA sp+16 for the ret, whose CFA is sp+8"
	}
}
