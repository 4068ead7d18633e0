package matrix

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sfconform/sfconform/campaign"
	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/harness"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// Fields of the blames that concern a whole program rather than a step.
const (
	// FieldProducer: the producer made no image of the program (an
	// assembler's internal error); charged to the program's pattern.
	FieldProducer = deviation.FieldProducer
	// FieldRun: the emulation stopped early (a fault, the instruction
	// budget): always a failure of sfconform's own, never expected.
	FieldRun = "run"
)

// Cell is one target x producer x consumer.
type Cell struct {
	Target             target.Target
	Producer, Consumer string
}

func (c Cell) String() string {
	return fmt.Sprintf("%s %s x %s", c.Target.Name(), c.Producer, c.Consumer)
}

// Key is the deviation key of a blame in the cell.
func (c Cell) Key(b harness.Blame) deviation.Key {
	return deviation.Key{Producer: c.Producer, Consumer: c.Consumer, Target: c.Target, Pattern: b.Pattern, Verdict: b.Verdict, Field: b.Field}
}

// Tally is what the programs checked in one cell came to.
type Tally struct {
	Cell
	Programs     int
	Instructions int
	// Counts are steps per verdict; Counts[verdict.Invalid] counts the
	// programs whose section breaks a rule.
	Counts [verdict.Count]int
	// Blames are the failures by what they are charged to (harness.Blame;
	// for a whole program: FieldProducer, FieldRun, INVALID with its rule).
	Blames map[harness.Blame]*Blamed
	// Ran counts, per pattern, the checked programs that executed a
	// function of it; Made, per pattern, the programs generated from it
	// (those the producer made no image of included).
	Ran, Made map[string]int
	// Record is how a toolchain producer made the images (one of them:
	// the tools and their packages); nil for sfconform's own encoder.
	Record *image.Record
	// Warned counts the programs the producer's tools warned about.
	Warned int
	// failing holds, for each program that failed, what it was charged
	// to: an expected deviation counts programs, not blames.
	failing []map[harness.Blame]bool
	cur     map[harness.Blame]bool // the program being added: its set in failing
}

// NewTally makes an empty tally of c.
func NewTally(c Cell) *Tally {
	return &Tally{Cell: c, Blames: map[harness.Blame]*Blamed{}, Ran: map[string]int{}, Made: map[string]int{}}
}

// Blamed is the failures charged to one Blame in a cell.
type Blamed struct {
	Steps    int // failing steps (0 for a failure of a whole program)
	Programs int // programs with at least one
	Sample   *Sample
}

// Sample is the smallest program a blame showed in: what a stored case is
// made from.
type Sample struct {
	Pattern string // the pattern the program was generated from
	Seed    int64
	Size    int // bytes of code
	Img     *image.Image
	Prog    *gen.Program
	// Failure is the blame's first failing step; nil for a failure of a
	// whole program (Err, or Violations for INVALID).
	Failure    *harness.Failure
	Violations []verdict.Violation
	Err        error
}

// Failing is the steps not OK.
func (t *Tally) Failing() int {
	return t.Counts[verdict.Wrong] + t.Counts[verdict.NoInfo] + t.Counts[verdict.Error]
}

// Add adds one program of pattern, checked with attribution
// (harness.Checker.CheckProgram): res is its result, nil when the
// producer's tools made no image of it (p.Err, a producer.BatchError).
func (t *Tally) Add(p campaign.Produced, res *harness.Result, pattern string) {
	t.cur = nil
	t.Made[pattern]++
	if res == nil {
		t.Programs++
		t.blame(harness.Blame{Pattern: pattern, Verdict: verdict.Error, Field: FieldProducer}, 0,
			&Sample{Pattern: pattern, Seed: p.Seed, Size: len(p.Prog.Code), Prog: p.Prog, Err: p.Err})
		return
	}
	if t.Record == nil && p.Img.Record != nil {
		t.Record = p.Img.Record
	}
	if r := p.Img.Record; r != nil && slices.ContainsFunc(r.Warnings, func(w image.Warning) bool { return w.Tool != "ld" && w.Tool != "sfconform" }) {
		t.Warned++
	}
	t.Programs++
	t.Instructions += res.Steps
	for v, n := range res.Counts {
		t.Counts[v] += n
	}
	for pat, n := range res.PatternSteps {
		if n > 0 {
			t.Ran[pat]++
		}
	}
	size := len(p.Img.Code)
	for _, s := range p.Img.Segments {
		size += len(s.Code)
	}
	sample := func(f *harness.Failure) *Sample {
		return &Sample{Pattern: pattern, Seed: p.Seed, Size: size, Img: p.Img, Prog: p.Prog, Failure: f, Violations: res.Violations}
	}
	for b, n := range res.Blames {
		first := n.First
		t.blame(b, n.Steps, sample(&first))
	}
	if res.Invalid() {
		t.Counts[verdict.Invalid]++
		seen := map[string]bool{}
		for _, v := range res.Violations {
			if !v.Warning && !seen[v.Rule] {
				seen[v.Rule] = true
				t.blame(harness.Blame{Pattern: deviation.PatternSection, Verdict: verdict.Invalid, Field: v.Rule}, 0, sample(nil))
			}
		}
	}
	if res.RunErr != nil {
		s := sample(nil)
		s.Err = res.RunErr
		t.blame(harness.Blame{Pattern: pattern, Verdict: verdict.Error, Field: FieldRun}, 0, s)
	}
}

// blame counts one program's failures charged to b, keeping the smaller
// sample.
func (t *Tally) blame(b harness.Blame, steps int, s *Sample) {
	if t.cur == nil {
		t.cur = map[harness.Blame]bool{}
		t.failing = append(t.failing, t.cur)
	}
	t.cur[b] = true
	n := t.Blames[b]
	if n == nil {
		n = &Blamed{}
		t.Blames[b] = n
	}
	n.Steps += steps
	n.Programs++
	if n.Sample == nil || s.Size < n.Sample.Size {
		n.Sample = s
	}
}

// Merge adds o, a tally of the same cell, into t.
func (t *Tally) Merge(o *Tally) {
	t.Programs += o.Programs
	t.Instructions += o.Instructions
	for v := range t.Counts {
		t.Counts[v] += o.Counts[v]
	}
	for b, n := range o.Blames {
		m := t.Blames[b]
		if m == nil {
			t.Blames[b] = &Blamed{Steps: n.Steps, Programs: n.Programs, Sample: n.Sample}
			continue
		}
		m.Steps += n.Steps
		m.Programs += n.Programs
		if n.Sample != nil && (m.Sample == nil || n.Sample.Size < m.Sample.Size) {
			m.Sample = n.Sample
		}
	}
	for p, n := range o.Ran {
		t.Ran[p] += n
	}
	for p, n := range o.Made {
		t.Made[p] += n
	}
	if t.Record == nil {
		t.Record = o.Record
	}
	t.Warned += o.Warned
	t.failing = append(t.failing, o.failing...)
	t.cur = nil
}

// SortedBlames lists the tally's blames in a stable order: by pattern,
// verdict, field.
func (t *Tally) SortedBlames() []harness.Blame {
	out := make([]harness.Blame, 0, len(t.Blames))
	for b := range t.Blames {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Pattern != b.Pattern {
			return a.Pattern < b.Pattern
		}
		if a.Verdict != b.Verdict {
			return a.Verdict < b.Verdict
		}
		return a.Field < b.Field
	})
	return out
}
