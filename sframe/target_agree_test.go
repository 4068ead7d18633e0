package sframe

import (
	"testing"

	"github.com/sfconform/sfconform/target"
)

// The unexported half of sframe's copy of the target facts (see
// TestSFrameCopyAgrees): the s390x CFA bias and the link registers.
func TestSFrameUnexportedCopyAgrees(t *testing.T) {
	t.Parallel()
	if s390xCFAAboveSP != target.CallerSaveArea || s390xCFA(0) != target.S390X.CFAAtEntry() {
		t.Errorf("s390x CFA above SP: sframe %d (word 0 decodes to %d), target %d", s390xCFAAboveSP, s390xCFA(0), target.S390X.CFAAtEntry())
	}
	for _, tg := range target.All {
		want := -1
		if tg.HasLinkRegister() {
			want = tg.RA()
		}
		if got := linkRegister(ABI(tg)); got != want {
			t.Errorf("%v: link register: sframe %d, target %d", tg, got, want)
		}
	}
}
