package harness

import (
	"fmt"
	"sort"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/gen"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/oracle"
	"github.com/sfconform/sfconform/verdict"
)

// Attribution: every failing step of a checked program is charged to the
// generator's pattern of the function whose row was in force for the
// first frame that went wrong. Expected deviations (package deviation)
// are keyed by it: a known toolchain bug in one pattern must not hide an
// unknown one in another. It happens here, from the judgement the oracle
// made and the program the image was made from; the oracle knows neither
// rows nor patterns.

// PatternSection is the pattern of a failure that belongs to no function:
// the consumer refused the whole section (every step ERROR or NOINFO, Field
// "load").
const PatternSection = "section"

// PatternUnknown is the pattern of a frame whose PC lies in no function of
// the program.
const PatternUnknown = "?"

// Blame is what a failing step is charged to.
type Blame struct {
	// Pattern is gen.Func.Pattern of the function whose row decided the
	// first wrong frame ("entry" for the entry stub), PatternSection or
	// PatternUnknown.
	Pattern string
	Verdict verdict.Verdict
	// Field is, for WRONG, the value that first differed ("pc", "cfa",
	// "outermost", ...); "load" for a refused section; else empty.
	Field string
}

func (b Blame) String() string {
	v := b.Verdict.String()
	if b.Field != "" {
		v += ":" + b.Field
	}
	return b.Pattern + " " + v
}

// Blamed is the steps charged to one Blame, and the first of them.
type Blamed struct {
	Steps int
	First Failure
}

// CulpritFrame returns the index of the frame whose row decided the
// judgement j of a backtrace whose expected frames are expected, or -1
// for an OK step. A frame's CFA and its outermost mark come from its own
// row; its PC, SP and FP from its callee's (the frame before it). A
// consumer that found no row, or failed to apply one, failed at the frame
// the judgement names; one that stopped early or went on past the
// outermost frame did so by the row of the last frame it got right.
func CulpritFrame(j oracle.Judgement, expected []frame.Frame) int {
	if j.Verdict == verdict.OK || len(expected) == 0 {
		return -1
	}
	k := j.Frame
	if j.Verdict == verdict.Wrong {
		switch j.Field {
		case "pc", "sp", "fp", "depth":
			k--
		}
	}
	return max(0, min(k, len(expected)-1))
}

// RowPC is the address at which an unwinder looks up frame k's row: frame
// 0's PC, the PC a signal interrupted (the frame after a signal frame),
// or else the return address minus one, inside the call (a call may be
// its function's last instruction).
func RowPC(expected []frame.Frame, k int) uint64 {
	pc := expected[k].PC
	if k > 0 && !expected[k-1].Signal {
		pc--
	}
	return pc
}

// attribution is a program's functions by address, with their patterns.
type attribution struct {
	funcs []attrFunc
	last  int // index of the function of the last lookup
	// steps counts the steps whose PC (frame 0) lay in each pattern's
	// functions: how often a pattern ran.
	steps  map[string]int
	blames map[Blame]*Blamed
}

type attrFunc struct {
	lo, hi  uint64
	pattern string
}

func newAttribution(img *image.Image, prog *gen.Program) *attribution {
	a := &attribution{steps: map[string]int{}, blames: map[Blame]*Blamed{}}
	byName := map[string]string{}
	for _, f := range prog.Funcs {
		byName[f.Name] = funcPattern(f)
	}
	for _, s := range img.Symbols {
		if p, ok := byName[s.Name]; ok && !s.IsStack() {
			a.funcs = append(a.funcs, attrFunc{lo: s.Addr, hi: s.End(), pattern: p})
		}
	}
	sort.Slice(a.funcs, func(i, j int) bool { return a.funcs[i].lo < a.funcs[j].lo })
	return a
}

// funcPattern is the pattern a function's failures are charged to: its
// own (gen.Func.Pattern), but for the entry stub and the signal
// trampoline when a pattern made their FDE one without rows, that
// pattern (gen.Func.EmptyFDEPattern): what a toolchain does with such a
// function is that pattern's result, not the stub's.
func funcPattern(f *gen.Func) string {
	if f.EmptyFDE && f.EmptyFDEPattern != "" {
		return f.EmptyFDEPattern
	}
	return f.Pattern
}

// patternAt names the pattern of the function holding pc.
func (a *attribution) patternAt(pc uint64) string {
	if a.last < len(a.funcs) && pc >= a.funcs[a.last].lo && pc < a.funcs[a.last].hi {
		return a.funcs[a.last].pattern
	}
	i := sort.Search(len(a.funcs), func(i int) bool { return a.funcs[i].lo > pc }) - 1
	if i >= 0 && pc < a.funcs[i].hi {
		a.last = i
		return a.funcs[i].pattern
	}
	return PatternUnknown
}

// blame charges a failing step.
func (a *attribution) blame(j oracle.Judgement, expected []frame.Frame, refused bool, f func() Failure) {
	b := Blame{Verdict: j.Verdict, Field: j.Field}
	switch {
	case refused:
		b.Pattern, b.Field = PatternSection, "load"
	case len(expected) == 0:
		b.Pattern = PatternUnknown
	default:
		b.Pattern = a.patternAt(RowPC(expected, CulpritFrame(j, expected)))
	}
	if n := a.blames[b]; n != nil {
		n.Steps++
		return
	}
	a.blames[b] = &Blamed{Steps: 1, First: f()}
}

// CheckProgram is Check, or CheckAgainst when ref is not nil, of img, the
// image made from prog, with attribution: Result.Blames charges every
// failing step to a pattern (see Blame), and Result.PatternSteps counts
// the steps executed in each pattern's functions.
func (c *Checker) CheckProgram(img, ref *image.Image, prog *gen.Program, cons consumer.Consumer) *Result {
	c.attr = newAttribution(img, prog)
	defer func() { c.attr = nil }()
	if ref != nil {
		c.diff = newDiffer(img, ref)
		defer func() { c.diff = nil }()
	}
	res := c.check(img, cons, false)
	res.PatternSteps, res.Blames = c.attr.steps, c.attr.blames
	return res
}

// BlameSummary sums up a result's blames, for messages.
func (r *Result) BlameSummary() string {
	keys := make([]Blame, 0, len(r.Blames))
	for b := range r.Blames {
		keys = append(keys, b)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	s := ""
	for _, b := range keys {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d steps", b, r.Blames[b].Steps)
	}
	return s
}
