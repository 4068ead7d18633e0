package gen_test

import (
	"testing"

	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// TestARM64PatternShapes checks that AArch64's own patterns make the rows
// they exist for, so that a change of sizes or forms cannot quietly take
// a case out of the mix: each shape must turn up within a few seeds.
func TestARM64PatternShapes(t *testing.T) {
	t.Parallel()
	const fp, sp = target.RegAArch64FP, target.RegAArch64SP
	savedAt := func(r sframe.Rule, off int64) bool {
		return r.Kind == sframe.RuleExpr && r.Reg == sframe.RegCFA && r.Deref && r.Offset == off
	}
	same := func(r sframe.Rule) bool { return r.Kind == sframe.RuleSame }
	cfa := func(r sframe.Row, reg int, lo, hi int64) bool {
		return r.CFA.Reg == reg && r.CFA.Offset >= lo && r.CFA.Offset <= hi
	}
	// A shape is a property of one function's rows; some asks for a row
	// with a property.
	type shape func(rows []sframe.Row) bool
	some := func(ok func(r sframe.Row) bool) shape {
		return func(rows []sframe.Row) bool {
			for _, r := range rows {
				if ok(r) {
					return true
				}
			}
			return false
		}
	}
	signed := func(key sframe.PAuthKey, inX30 bool) shape {
		return some(func(r sframe.Row) bool { return r.MangledRA && r.PAuthKey == key && same(r.RA) == inX30 })
	}
	// The RA never leaves x30, and is signed somewhere.
	frameless := func(rows []sframe.Row) bool {
		return !some(func(r sframe.Row) bool { return !same(r.RA) })(rows) && some(func(r sframe.Row) bool { return r.MangledRA })(rows)
	}
	shapes := map[string]map[string]shape{
		"record-bottom": {
			"a record at the bottom of a frame over 504 bytes, CFA = x29 + size": some(func(r sframe.Row) bool {
				return cfa(r, fp, 512, 4095) && savedAt(r.FP, -r.CFA.Offset) && savedAt(r.RA, 8-r.CFA.Offset)
			}),
			"a record at the bottom of a pre-indexed frame over 48 bytes": some(func(r sframe.Row) bool {
				return cfa(r, fp, 64, 504) && savedAt(r.FP, -r.CFA.Offset)
			}),
		},
		"record-top": {
			"CFA = x29 + 16, the record right below the CFA": some(func(r sframe.Row) bool {
				return cfa(r, fp, 16, 16) && savedAt(r.FP, -16) && savedAt(r.RA, -8)
			}),
			"a record at the top of an SP-based frame": some(func(r sframe.Row) bool {
				return cfa(r, sp, 32, 1<<20) && savedAt(r.FP, -16) && savedAt(r.RA, -8)
			}),
		},
		"lr-only": {
			"the RA saved, the FP the caller's": some(func(r sframe.Row) bool { return r.RA.Kind == sframe.RuleExpr && same(r.FP) }),
		},
		"big-frame": {
			"offsets over 4095 (2-byte data words)": some(func(r sframe.Row) bool { return r.CFA.Offset > 4095 && r.CFA.Offset <= 32767 }),
			"offsets over 32767 (4-byte data words)": some(func(r sframe.Row) bool {
				return r.CFA.Offset > 32767 && savedAt(r.RA, 8-r.CFA.Offset)
			}),
		},
		"pac-a": {
			"key A, a signed RA in x30": signed(sframe.PAuthKeyA, true),
			"key A, a signed RA saved":  signed(sframe.PAuthKeyA, false),
			"no frame":                  frameless,
		},
		"pac-b": {
			"key B, a signed RA in x30": signed(sframe.PAuthKeyB, true),
			"key B, a signed RA saved":  signed(sframe.PAuthKeyB, false),
			"no frame":                  frameless,
			"key B in every row": func(rows []sframe.Row) bool {
				return !some(func(r sframe.Row) bool { return r.PAuthKey != sframe.PAuthKeyB })(rows)
			},
		},
	}
	for _, abi := range []target.Target{target.AArch64, target.AArch64BE} {
		for name, want := range shapes {
			seen := map[string]int{}
			funcs := 0
			for seed := int64(1); seed <= 20; seed++ {
				p := mustGenerate(t, abi, seed, gen.Options{Patterns: []string{name}})
				for _, f := range p.Funcs {
					if f.Pattern != name {
						continue
					}
					funcs++
					for what, ok := range want {
						if ok(f.Rows) {
							seen[what]++
						}
					}
				}
			}
			for what := range want {
				if seen[what] == 0 {
					t.Errorf("%s %s: no function with %s in 20 seeds", abi.Name(), name, what)
				}
			}
			if name == "pac-b" && seen["key B in every row"] != funcs {
				t.Errorf("%s pac-b: %d of %d functions have key B in every row", abi.Name(), seen["key B in every row"], funcs)
			}
		}
	}
}
