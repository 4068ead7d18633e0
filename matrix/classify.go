package matrix

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/deviation"
	"github.com/sfconform/sfconform/harness"
)

// Outcome is a cell's tally judged against the expected deviations.
type Outcome struct {
	*Tally
	// Expected are the blames an entry matched, with the entry.
	Expected map[harness.Blame]*deviation.Entry
	// Hits are the entries of the cell that matched, in the list's order.
	Hits []Hit
	// Unexpected are the failures no entry matched, in SortedBlames order.
	Unexpected []harness.Blame
	// Stale are the entries of the cell that matched nothing although
	// their pattern ran in enough programs.
	Stale []Hit
	// Pending are the entries of the cell that matched nothing and whose
	// pattern ran in too few programs to say.
	Pending []Hit
}

// Hit is what an entry of the list matched in a cell.
type Hit struct {
	Entry    *deviation.Entry
	Ran      int // programs that ran its pattern (see Ran)
	Programs int // programs with a failure it matched
	Steps    int
	Blames   []harness.Blame // what it matched, in SortedBlames order
}

func (h Hit) String() string { return h.Entry.StaleMessage(h.Ran) }

// Ran is how many programs of t could show e: those that ran its
// pattern; every program for an entry about the whole section or every
// pattern; the programs generated from its pattern for a producer
// failure.
func Ran(t *Tally, e *deviation.Entry) int {
	switch {
	case e.Pattern == deviation.PatternSection || e.Pattern == deviation.AnyPattern:
		return t.Programs
	case e.HasField(deviation.FieldProducer):
		return t.Made[e.Pattern]
	}
	return t.Ran[e.Pattern]
}

// Classify judges t against l.
func Classify(t *Tally, l *deviation.List) *Outcome {
	o := &Outcome{Tally: t, Expected: map[harness.Blame]*deviation.Entry{}}
	hits := map[*deviation.Entry]*Hit{}
	for _, b := range t.SortedBlames() {
		e := l.Match(t.Key(b))
		if e == nil {
			o.Unexpected = append(o.Unexpected, b)
			continue
		}
		o.Expected[b] = e
		h := hits[e]
		if h == nil {
			h = &Hit{Entry: e, Ran: Ran(t, e)}
			hits[e] = h
		}
		h.Steps += t.Blames[b].Steps
		h.Blames = append(h.Blames, b)
	}
	for _, set := range t.failing {
		seen := map[*deviation.Entry]bool{}
		for b := range set {
			if e := o.Expected[b]; e != nil && !seen[e] {
				seen[e] = true
				hits[e].Programs++
			}
		}
	}
	for _, e := range l.For(t.Producer, t.Consumer, t.Target) {
		if h := hits[e]; h != nil {
			o.Hits = append(o.Hits, *h)
			continue
		}
		h := Hit{Entry: e, Ran: Ran(t, e)}
		if e.Stale(h.Ran, 0) {
			o.Stale = append(o.Stale, h)
		} else {
			o.Pending = append(o.Pending, h)
		}
	}
	return o
}

// OK reports whether nothing failed unexpectedly and no entry went stale.
func (o *Outcome) OK() bool { return len(o.Unexpected) == 0 && len(o.Stale) == 0 }

// Status is the cell's one word: clean (nothing failed), expected (every
// failure an expected deviation), failed.
func (o *Outcome) Status() string {
	switch {
	case !o.OK():
		return "failed"
	case len(o.Expected) > 0:
		return "expected"
	}
	return "clean"
}

// Problems describes what makes the outcome not OK, one line each.
func (o *Outcome) Problems() []string {
	var out []string
	for _, b := range o.Unexpected {
		n := o.Blames[b]
		out = append(out, fmt.Sprintf("%s: %s in %d programs (%d steps), no expected deviation matches; first: %s",
			o.Cell, b, n.Programs, n.Steps, n.Sample.Describe()))
	}
	for _, h := range o.Stale {
		out = append(out, fmt.Sprintf("%s: %s", o.Cell, h))
	}
	return out
}

// Describe says where a sample failed, in one line.
func (s *Sample) Describe() string {
	switch {
	case s.Failure != nil:
		f := s.Failure
		return fmt.Sprintf("seed %d (pattern %s), step %d at %s (%s): %s", s.Seed, s.Pattern, f.Step, f.Function, f.Insn, f.Judgement.Detail)
	case s.Err != nil:
		msg, _, _ := strings.Cut(s.Err.Error(), "\n")
		return fmt.Sprintf("seed %d (pattern %s): %s", s.Seed, s.Pattern, msg)
	}
	for _, v := range s.Violations {
		if !v.Warning {
			return fmt.Sprintf("seed %d (pattern %s): section %s", s.Seed, s.Pattern, v)
		}
	}
	return fmt.Sprintf("seed %d (pattern %s)", s.Seed, s.Pattern)
}
