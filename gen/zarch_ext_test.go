package gen

import (
	"testing"

	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/toolchain"
)

// TestZarchPatternsMatchGasSFrame is TestGasSFrameMatchesRows for each
// s390x pattern alone, so that every one of them, however rare in the
// default mix, goes through GNU as: the rendered .cfi_* directives
// (.cfi_register to an FPR, .cfi_def_cfa on %r11 with a negative offset,
// CFA offsets of 256 KiB) must give gen's rows. Only gas 2.47 emits
// SFrame for s390x; the older ones say why not, which the log shows.
func TestZarchPatternsMatchGasSFrame(t *testing.T) {
	t.Parallel()
	all, err := toolchain.All()
	if len(all) == 0 {
		testenv.Missing(t, testenv.Binutils, "no provisioned GNU toolchain to compare SFrame rows with: %v", err)
	}
	seeds := int64(6)
	if testing.Short() {
		seeds = 2
	}
	for _, tc := range all {
		if tc.Target != target.S390X {
			continue
		}
		if tc.SFrameVersion == 0 {
			t.Logf("%s: no SFrame for s390x: %s", tc.Name, tc.SFrameUnsupportedReason())
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, pat := range isaFor(target.S390X).own {
				for seed := int64(1); seed <= seeds; seed++ {
					p, err := Generate(target.S390X, seed, Options{Patterns: []string{pat.name}})
					if err != nil {
						t.Fatal(err)
					}
					compareFDEs(t, tc.Name+" "+pat.name, p, gasSFrame(t, tc, dir, p, p.Assembly()), tc.SFrameVersion >= 3)
				}
			}
		})
	}
}
