package harness

import (
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// leafFPAsRegister returns prog's image with every row of its leaf
// functions saying "the caller's FP is in the FP register" as a register
// rule (FP + 0) instead of "same": another encoding of the same value.
func leafFPAsRegister(t *testing.T, prog *gen.Program) (*image.Image, int) {
	t.Helper()
	fdes := prog.FDEs()
	n := 0
	for _, f := range prog.Funcs {
		if f.Pattern != "leaf" {
			continue
		}
		for i := range fdes {
			if fdes[i].Start != f.Addr {
				continue
			}
			for r := range fdes[i].Rows {
				if fdes[i].Rows[r].FP.Kind == sframe.RuleSame {
					fdes[i].Rows[r].FP = sframe.Rule{Kind: sframe.RuleExpr, Reg: prog.Target.FP()}
					n++
				}
			}
		}
	}
	img, err := producer.BuiltinFrom(prog, 3, fdes)
	if err != nil {
		t.Fatal(err)
	}
	return img, n
}

// TestDifferential: the same table differs nowhere; a CFA off by a word
// differs where it is wrong; an FP rule written another way (a register
// rule for "same") differs at every step of the leaf and is equivalent
// there: the step stays OK.
func TestDifferential(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		c := newChecker(t, abi)
		img, prog, err := Produce(producer.Builtin{Version: 3}, abi, 5, gen.Options{Patterns: []string{"leaf", "fp-frame"}})
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Reference(img, prog)
		if err != nil {
			t.Fatal(err)
		}
		res := c.CheckAgainst(img, ref, consumer.NewBuiltin())
		if res.Differs != 0 || !res.Clean() {
			t.Errorf("%s: the reference against itself: %d steps differ", abi.Name(), res.Differs)
		}

		bad := shiftedCFA(t, prog, 3)
		res = c.CheckAgainst(bad, ref, consumer.NewBuiltin())
		if res.Differs == 0 || res.Equivalent == res.Differs || res.Counts[verdict.Wrong] == 0 {
			t.Errorf("%s: a CFA off by a word: %d differ, %d equivalent, %d WRONG", abi.Name(), res.Differs, res.Equivalent, res.Counts[verdict.Wrong])
		}
		if len(res.Failures) == 0 || res.Failures[0].ReferenceRow == "" || len(res.FirstDiffs) == 0 {
			t.Errorf("%s: the failure does not show the reference's row: %+v", abi.Name(), res.Failures)
		}

		same, n := leafFPAsRegister(t, prog)
		if n == 0 {
			t.Fatalf("%s: no leaf row to rewrite", abi.Name())
		}
		res = c.CheckAgainst(same, ref, consumer.NewBuiltin())
		if res.Differs == 0 || res.Equivalent != res.Differs || !res.Clean() {
			t.Errorf("%s: FP as a register rule in leaves: %d differ, %d equivalent, clean %v (%+v)", abi.Name(), res.Differs, res.Equivalent, res.Clean(), res.Failures)
		}
		if d := res.FirstDiffs[0]; d.Verdict != verdict.OK || !strings.Contains(d.Want, "FP same") || strings.Contains(d.Got, "FP same") {
			t.Errorf("%s: first difference %v", abi.Name(), d)
		}
	}
}

func TestRowHarmless(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		j    oracle.Judgement
		want bool
	}{
		{oracle.Judgement{Verdict: verdict.OK, Frame: -1}, true},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 0, Field: "cfa"}, false},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 0, Field: "outermost"}, false},
		{oracle.Judgement{Verdict: verdict.NoInfo, Frame: 0}, false},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "pc"}, false},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "fp"}, false},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "depth"}, false},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "cfa"}, true},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 1, Field: "outermost"}, true},
		{oracle.Judgement{Verdict: verdict.NoInfo, Frame: 1}, true},
		{oracle.Judgement{Verdict: verdict.Error, Frame: 1}, true},
		{oracle.Judgement{Verdict: verdict.Wrong, Frame: 3, Field: "pc"}, true},
	} {
		if got := rowHarmless(c.j); got != c.want {
			t.Errorf("rowHarmless(%+v) = %v, want %v", c.j, got, c.want)
		}
	}
}

// TestValidationFollowsTheSection: the checker remembers the last
// section's validation (a batch's images share one), but a section whose
// bytes changed in place is validated again.
func TestValidationFollowsTheSection(t *testing.T) {
	t.Parallel()
	c := newChecker(t, target.X86_64)
	img, _, err := Produce(producer.Builtin{Version: 3}, target.X86_64, 3, gen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.Check(img, consumer.NewBuiltin()); res.Invalid() {
		t.Fatalf("a valid section: %v", res.Violations)
	}
	img.SFrame[4] = byte(sframe.ABIAArch64LE) // in place: the header names another ABI
	if res := c.Check(img, consumer.NewBuiltin()); !res.Invalid() {
		t.Fatal("a section changed in place kept its earlier validation")
	}
}
