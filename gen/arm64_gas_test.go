package gen

import "github.com/sfconform/sfconform/target"

// What GNU as --scfi=experimental (2.44 and 2.47.50, which behave alike)
// does with AArch64 patterns it cannot derive (see gasCannot):
func init() {
	cannot := map[string]string{
		"big-frame": "'sub sp, sp, x16' is refused (Error: SCFI: unsupported stack manipulation pattern); " +
			"'sub sp, sp, #0x8, lsl #12' is taken for a sub of 8, the shift dropped: silently wrong CFA offsets (sp+8 for sp+32768)",
		"record-top": "'add x29, sp, #N' does not make the CFA x29-based (SCFI keeps sp+N, true only while sp stays), and after " +
			"'sub sp, x29, #N' SCFI keeps the CFA offset sp had before: silently wrong rows, with 'Warning: SCFI: asymetrical register restore' at the ldp",
	}
	for _, tg := range []target.Target{target.AArch64, target.AArch64BE} {
		for _, tc := range []string{"gas-2.44", "gas-2.47"} {
			for pat, why := range cannot {
				gasCannot[gasCase{tc, tg, pat, true}] = why
			}
		}
	}
}
