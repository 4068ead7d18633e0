package campaign

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/validate"
	"github.com/sfconform/sfconform/verdict"
)

// TestPlanLayouts checks that a cell says of every section layout shape
// what it does: the builtin producer's version 2 gives the builtin
// consumer every shape, version 3 only what its strict rules allow, and a
// shape a consumer does not declare is not produced, with the reason.
func TestPlanLayouts(t *testing.T) {
	t.Parallel()
	status := func(p *Plan) map[string]LayoutStatus {
		out := map[string]LayoutStatus{}
		for _, l := range p.Mix.Layouts {
			out[l.Name] = l
		}
		if len(out) != len(producer.LayoutNames) {
			t.Fatalf("%d layout statuses for %d shapes: %+v", len(out), len(producer.LayoutNames), p.Mix.Layouts)
		}
		return out
	}
	p, err := NewPlan(producer.Builtin{Version: 2}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	for n, l := range status(p) {
		if !l.Produced || !p.Producer.(producer.Builtin).Layouts.Has(n) {
			t.Errorf("v2 x builtin: %s", l)
		}
	}
	p, err = NewPlan(producer.Builtin{Version: 3}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	// Version 3: an auxiliary header and an unsorted table break its
	// strict rules, and are produced INVALID as expected; its starts are
	// always PC-relative.
	for n, l := range status(p) {
		forbidden := n == producer.LayoutAuxHeader || n == producer.LayoutUnsorted
		if l.Produced != (n != producer.LayoutSectionRelative) || !l.Produced && l.Why == "" || (l.Rule != "") != forbidden {
			t.Errorf("v3 x builtin: %s (rule %q)", l, l.Rule)
		}
	}
	if got, want := p.Mix.ExpectedRules(), []string{validate.Rule(sframe.ErrBadAuxHeader), validate.Rule(sframe.ErrNotSorted)}; !slices.Equal(got, want) {
		t.Errorf("v3 x builtin: expected rules %q, want %q", got, want)
	}
	if s := p.Mix.LayoutNote(); !strings.Contains(s, "aux-header: produced, judged and INVALID as expected (SFrame v3") {
		t.Errorf("note %q", s)
	}
	// Two consumers: what both read.
	p.Version = 2
	p.Producer = producer.Builtin{Version: 2}
	p.setLayouts([]consumer.Consumer{consumer.NewBuiltin(), named("libsframe")})
	got := p.Producer.(producer.Builtin).Layouts.Names()
	if want := consumer.LayoutsRead("libsframe"); !slices.Equal(got, want) {
		t.Errorf("builtin and libsframe: %v, libsframe declares %v", got, want)
	}
	if l := status(p)[producer.LayoutUnsorted]; l.Produced || !strings.Contains(l.Why, "libsframe") {
		t.Errorf("builtin and libsframe: %s", l)
	}
}

// TestConsumersDeclareKnownLayouts: every layout a consumer declares is a
// shape a producer knows.
func TestConsumersDeclareKnownLayouts(t *testing.T) {
	for _, a := range consumer.Describe() {
		if _, err := producer.LayoutSet(a.Layouts...); err != nil {
			t.Errorf("consumer %s: %v", a.Kind, err)
		}
	}
}

// named is a consumer that is only a name, for what the registry says of it.
type namedConsumer struct {
	consumer.Consumer
	name string
}

func (n namedConsumer) Name() string { return n.name }

func named(name string) consumer.Consumer { return namedConsumer{name: name} }

// TestDefaultCellsCoverSectionShapes checks that the default run's cells
// (builtin-v2 and builtin-v3 with the builtin consumer, every target) meet
// every section shape their version and consumer allow within the first
// seeds and one seed of 500 (a run of 500 programs has one): sections of
// every size bucket, 1- and 2-byte FRE starts, images of one, two and
// three or more modules, every layout the plan says it produces, and
// every function edge (gen.EdgeShapes). A zero fails.
func TestDefaultCellsCoverSectionShapes(t *testing.T) {
	t.Parallel()
	seeds := []int64{500}
	for s := int64(1); s <= 40; s++ {
		seeds = append(seeds, s)
	}
	for _, abi := range target.All {
		for _, v := range []sframe.Version{2, 3} {
			p, err := NewPlan(producer.Builtin{Version: v}, abi, nil, consumer.NewBuiltin())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"fdes:1-63", "fdes:64-999", "fdes:1000-9999", "fdes:10000+", "fre-start:1B", "fre-start:2B",
				"modules:1", "modules:2", "modules:3+"}
			for _, l := range p.Mix.Layouts {
				if l.Produced {
					want = append(want, l.Name)
				} else if l.Why == "" {
					t.Errorf("%s v%d: %s not produced, and no reason", abi.Name(), v, l.Name)
				}
			}
			// Function edges (gen.EdgeShapes): signals only where the
			// version has the signal flag.
			for _, n := range gen.EdgeShapeNames {
				if v >= 3 || !strings.HasPrefix(n, "signal:") {
					want = append(want, n)
				}
			}
			got := map[string]int{}
			for _, b := range ProduceBatch(p.Producer, abi, seeds, p.Mix.Options(1)) {
				if b.Err != nil {
					t.Fatal(b.Err)
				}
				names, err := producer.ImageShapes(b.Img)
				if err != nil {
					t.Fatalf("%s v%d seed %d: %v", abi.Name(), v, b.Seed, err)
				}
				for _, n := range append(names, b.Prog.EdgeShapes()...) {
					got[n]++
				}
			}
			for _, n := range want {
				if got[n] == 0 {
					t.Errorf("%s builtin-v%d: no section with shape %s in %d programs (%v)", abi.Name(), v, n, len(seeds), got)
				}
			}
		}
	}
}

// The summary says per cell what each layout shape did.
func TestCellJSONSaysTheLayouts(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(producer.Builtin{Version: 3}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	c := NewCell(target.X86_64, "builtin-v3", "builtin")
	c.setPlan(p)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Layouts []LayoutStatus `json:"layouts"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Layouts, p.Mix.Layouts) || len(back.Layouts) != len(producer.LayoutNames) {
		t.Errorf("the cell's JSON says the layouts %+v, its plan %+v", back.Layouts, p.Mix.Layouts)
	}
}

// A program whose section breaks only the rules its cell breaks on purpose
// is INVALID as expected, counted apart and no failure; one that breaks
// another rule too is INVALID.
func TestCellCountsExpectedInvalid(t *testing.T) {
	t.Parallel()
	p, err := NewPlan(producer.Builtin{Version: 3}, target.X86_64, nil, consumer.NewBuiltin())
	if err != nil {
		t.Fatal(err)
	}
	rules := p.Mix.ExpectedRules()
	aux := verdict.Violation{Rule: validate.Rule(sframe.ErrBadAuxHeader), Offset: 7}
	other := verdict.Violation{Rule: "FDEs overlap", Offset: 40}
	c := NewCell(target.X86_64, "builtin-v3", "builtin")
	c.setPlan(p)
	for _, vs := range [][]verdict.Violation{{aux}, {aux, other}} {
		res := &harness.Result{Steps: 10, Violations: slices.Clone(vs)}
		res.Counts[verdict.OK] = 10
		res.ExpectViolations(rules)
		c.Add(Produced{Seed: 1, Img: &image.Image{}}, res, "")
	}
	c.Finish()
	if c.ExpectedInvalid != 1 || c.Verdicts["INVALID"] != 1 || c.Failed != 1 {
		t.Errorf("INVALID as expected %d, INVALID %d, failed %d; want 1, 1, 1", c.ExpectedInvalid, c.Verdicts["INVALID"], c.Failed)
	}
}
