package repro

import (
	"testing"

	"github.com/sfconform/sfconform/target"
)

// The names the testsuite export gives a target, as binutils' gas
// testsuite spells them (cfi-sframe-aarch64be-*.d, "aarch64_be-*-*").
func TestTestsuiteNames(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tg           target.Target
		arch, triple string
	}{
		{target.X86_64, "x86_64", "x86_64-*-*"},
		{target.AArch64, "aarch64", "aarch64-*-*"},
		{target.AArch64BE, "aarch64be", "aarch64_be-*-*"},
		{target.S390X, "s390x", "s390x-*-*"},
	}
	for _, c := range cases {
		t.Run(c.tg.Name(), func(t *testing.T) {
			t.Parallel()
			if got := archName(c.tg); got != c.arch {
				t.Errorf("archName = %q, want %q", got, c.arch)
			}
			if got := targetTriple(c.tg); got != c.triple {
				t.Errorf("targetTriple = %q, want %q", got, c.triple)
			}
		})
	}
}
