package campaign

import (
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/internal/testenv"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/repro"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// TestNoInfoCarriesTheWarning: GNU as 2.44 skips the FDE of a DRAP
// function (a version 3 pattern it is given anyway) with a warning; a
// step in that function is NOINFO, and the failure and its reproducer
// carry the warning.
func TestNoInfoCarriesTheWarning(t *testing.T) {
	t.Parallel()
	prod, err := producer.New("gas-2.44")
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.44: %v", err)
	}
	// Every failure kept: before SFrame v3 gas leaves the entry stub
	// without its outermost row, so the first failure of a run is WRONG
	// at the stub; the NOINFO of a DRAP function comes later.
	c, err := harness.New(target.X86_64, harness.Options{MaxFailures: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	found := 0
	for _, p := range ProduceBatch(prod, target.X86_64, []int64{1, 2, 3, 4}, gen.Options{SFrameVersion: 3, Patterns: []string{"drap", "fp-frame"}}) {
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		ref, err := harness.Reference(p.Img, p.Prog)
		if err != nil {
			t.Fatal(err)
		}
		res := c.CheckAgainst(p.Img, ref, consumer.NewBuiltin())
		if res.Counts[verdict.NoInfo] == 0 || res.Differs == 0 {
			t.Errorf("seed %d: %d NOINFO, %d rows differ; want some of both", p.Seed, res.Counts[verdict.NoInfo], res.Differs)
		}
		if res.WrongFields["outermost"] == 0 || sumValues(res.WrongFields) != res.Counts[verdict.Wrong] ||
			res.AtOutermost[verdict.Wrong] != res.WrongFields["outermost"] || res.AtOutermost[verdict.NoInfo] != 0 {
			t.Errorf("seed %d: WRONG %d by field %v, at the outermost frame %v; gas 2.44 never marks the stub outermost, and a DRAP function has no FDE",
				p.Seed, res.Counts[verdict.Wrong], res.WrongFields, res.AtOutermost)
		}
		k := slices.IndexFunc(res.Failures, func(f harness.Failure) bool { return f.Judgement.Verdict == verdict.NoInfo })
		if k < 0 {
			continue
		}
		f := res.Failures[k]
		found++
		if len(f.Warnings) == 0 || !strings.Contains(f.Warnings[0].Text, "skipping SFrame FDE") || !strings.Contains(f.Warnings[0].Function, "drap") {
			t.Errorf("seed %d: NOINFO at %s with warnings %v", p.Seed, f.Function, f.Warnings)
		}
		res.Failures = res.Failures[k:]
		cs := repro.NewCase(repro.CaseInput{Img: p.Img, Prog: p.Prog, Seed: p.Seed, ConsumerName: "builtin", Res: res})
		if !strings.Contains(cs.Detail, "the producer warned: as in f") || cs.Record == nil || cs.ReferenceRow == "" {
			t.Errorf("seed %d: case detail %q, record %v, reference row %q", p.Seed, cs.Detail, cs.Record, cs.ReferenceRow)
		}
	}
	if found == 0 {
		t.Fatal("no program failed NOINFO first: the warning's attachment went unchecked")
	}
}

func sumValues(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestToolchainPlanModules: a cell of a toolchain that links modules says
// "modules: produced and judged" when its consumers read them, and its
// producer then builds the programs the layout picks (seed%8 == 4) one
// ELF per module; with a consumer that does not declare modules the cell
// says so and every image is one ELF. Every other shape stays the
// toolchain's.
func TestToolchainPlanModules(t *testing.T) {
	t.Parallel()
	prod, err := producer.New("gas-2.47")
	if err != nil {
		testenv.Missing(t, testenv.Binutils, "producer gas-2.47: %v", err)
	}
	seeds := []int64{1, 4, 12, 20}
	modules := func(p *Plan) (n int) {
		for _, b := range ProduceBatch(p.Producer, p.Target, seeds, p.Mix.Options(1)) {
			if b.Err != nil {
				t.Fatal(b.Err)
			}
			if len(b.Img.Modules) > 0 {
				if b.Seed%8 != 4 {
					t.Errorf("seed %d: %d modules, outside the layout's seeds", b.Seed, len(b.Img.Modules))
				}
				n++
			}
		}
		return n
	}
	p, err := NewPlan(prod, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Mix.Layouts {
		if l.Produced != (l.Name == producer.LayoutModules) || !l.Produced && l.Why == "" {
			t.Errorf("gas-2.47 x builtin: %s", l)
		}
	}
	if n := modules(p); n < 2 {
		t.Errorf("gas-2.47 x builtin: %d of the programs of seeds %v made of modules", n, seeds)
	}
	// The same plan set again for a consumer that reads no layout.
	p.setLayouts([]consumer.Consumer{named("no-layouts")})
	for _, l := range p.Mix.Layouts {
		if l.Name == producer.LayoutModules && (l.Produced || !strings.Contains(l.Why, "no-layouts")) {
			t.Errorf("gas-2.47 x a consumer reading no layouts: %s", l)
		}
	}
	if n := modules(p); n != 0 {
		t.Errorf("gas-2.47 x a consumer reading no layouts: %d programs made of modules", n)
	}
}
