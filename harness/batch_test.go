package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/emu"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// recorder is the builtin encoder behind the batch interface: it keeps
// the batches it was given.
type recorder struct {
	producer.Builtin
	batches [][]*gen.Program
	refuse  int64 // a seed it fails
}

func (r *recorder) ProduceBatch(progs []*gen.Program) ([]*image.Image, []error) {
	r.batches = append(r.batches, progs)
	imgs, errs := make([]*image.Image, len(progs)), make([]error, len(progs))
	for i, p := range progs {
		if p.Seed == r.refuse {
			errs[i] = errors.New("refused")
			continue
		}
		imgs[i], errs[i] = r.Builtin.Produce(p)
	}
	return imgs, errs
}

// TestProduceBatchLayout: a batch producer gets the programs one after the
// other inside the emulator's regions, far code included, each image runs
// alone and conforms, and one program's error is its own.
func TestProduceBatchLayout(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		r := &recorder{Builtin: producer.Builtin{Version: 3}, refuse: 104}
		seeds := []int64{100, 101, 102, 103, 104, 105, 106, 107}
		out := ProduceBatch(r, abi, seeds, gen.Options{Patterns: []string{"far-code", "fp-frame", "leaf"}})
		if len(r.batches) != 1 || len(r.batches[0]) != len(seeds) {
			t.Fatalf("%s: %d batches", abi.Name(), len(r.batches))
		}
		c := newChecker(t, abi)
		var nearEnd, farEnd uint64 = emu.CodeBase, emu.FarCodeBase
		for i, p := range out {
			if p.Seed != seeds[i] {
				t.Fatalf("result %d is seed %d", i, p.Seed)
			}
			if p.Seed == 104 {
				if p.Err == nil || !strings.Contains(p.Err.Error(), "refused") || p.Img != nil {
					t.Errorf("%s: the refused seed: %v", abi.Name(), p.Err)
				}
				continue
			}
			if p.Err != nil {
				t.Fatal(p.Err)
			}
			prog := p.Prog
			if prog.Base < nearEnd || prog.Base%batchAlign != 0 || len(prog.FarCode) > 0 && (prog.FarBase < farEnd || prog.FarBase%batchAlign != 0) {
				t.Errorf("%s seed %d at %#x (far %#x): overlaps the one before (ends %#x, far %#x) or is unaligned", abi.Name(), p.Seed, prog.Base, prog.FarBase, nearEnd, farEnd)
			}
			nearEnd = prog.Base + uint64(len(prog.Code))
			if len(prog.FarCode) > 0 {
				farEnd = prog.FarBase + uint64(len(prog.FarCode))
			}
			if res := c.Check(p.Img, consumer.NewBuiltin()); !res.Clean() {
				t.Errorf("%s seed %d at %#x does not conform alone", abi.Name(), p.Seed, prog.Base)
			}
		}
		if farEnd == emu.FarCodeBase {
			t.Errorf("%s: no program had far code: its layout went unchecked", abi.Name())
		}
	}
}

// TestProduceOneAtATime: a producer without the batch interface gets each
// program alone at CodeBase, as Produce lays it out.
func TestProduceOneAtATime(t *testing.T) {
	t.Parallel()
	out := ProduceBatch(producer.Builtin{Version: 2}, target.S390X, []int64{1, 2, 3}, gen.Options{})
	for _, p := range out {
		if p.Err != nil || p.Prog.Base != CodeBase || p.Img.CodeAddr != CodeBase {
			t.Errorf("seed %d: %v at %#x", p.Seed, p.Err, p.Img.CodeAddr)
		}
	}
}

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

// TestToolchainMix: a toolchain of SFrame version 2 gets the patterns
// version 2 cannot express too (DRAP: what it does with them is its
// result), but not far code, which no linker can write a version 2 table
// for; sfconform's own encoder gets only what its version expresses.
func TestToolchainMix(t *testing.T) {
	t.Parallel()
	r := &recorder{Builtin: producer.Builtin{Version: 2}} // not producer.Builtin itself: a toolchain to IsToolchain
	if !producer.IsToolchain(r) || producer.IsToolchain(producer.Builtin{Version: 2}) {
		t.Fatal("IsToolchain does not tell the encoder from the others")
	}
	seeds := make([]int64, 40)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	ProduceBatch(r, target.X86_64, seeds, gen.Options{})
	pats := map[string]bool{}
	for _, b := range r.batches {
		for _, p := range b {
			for _, f := range p.Funcs {
				pats[f.Pattern] = true
			}
		}
	}
	if !pats["drap"] || !pats["empty-fde"] || pats["far-code"] {
		t.Errorf("a version 2 toolchain's mix: %v; want drap and empty-fde, no far-code", pats)
	}
	if out := ProduceBatch(r, target.X86_64, []int64{1}, gen.Options{Patterns: []string{"far-code"}}); !errors.As(out[0].Err, new(*gen.CannotExpressError)) {
		t.Errorf("far-code for a version 2 toolchain: %v", out[0].Err)
	}
	for _, p := range ProduceBatch(producer.Builtin{Version: 2}, target.X86_64, seeds[:10], gen.Options{}) {
		for _, f := range p.Prog.Funcs {
			if f.Pattern == "drap" || f.Pattern == "far-code" {
				t.Errorf("the version 2 encoder got a %s function", f.Pattern)
			}
		}
	}
}
