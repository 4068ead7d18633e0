package gen

import (
	"fmt"
	"math"
	"sort"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// Coverage counts what executions of generated programs reached: the
// share of functions, instructions and distinct rows executed, and how
// often each kind of rule held at an executed instruction. It reports on
// the generator's mix; it judges nothing.
type Coverage struct {
	Programs        int
	Funcs, FuncsRun int            // functions generated / executed at least once (stubs excluded)
	Insns, InsnsRun int            // instructions generated / executed at least once
	Rows, RowsRun   int            // rows (rule changes) generated / covering an executed instruction
	Steps           int            // executed instructions, counted per execution
	Kinds           map[string]int // steps per rule kind (RuleKinds)
	Shapes          map[string]int // executed occurrences of program shapes (see Add)
	PatternsRun     map[string]int // functions executed per pattern
}

// NewCoverage returns an empty tally.
func NewCoverage() *Coverage {
	return &Coverage{Kinds: map[string]int{}, Shapes: map[string]int{}, PatternsRun: map[string]int{}}
}

// RuleKinds names the kinds of rule a row uses, for coverage reports:
// the CFA's base (sp, fp, another register) and dereference, where the RA
// and FP are (same register, saved on the stack, in another register,
// undefined), a signed RA, a signal frame, and the data-word width its
// offsets need (words:1-byte, 2-byte, 4-byte).
func (p *Program) RuleKinds(r sframe.Row) []string {
	t := p.t
	var out []string
	switch {
	case r.CFA.Kind != sframe.RuleExpr:
		out = append(out, "cfa:outermost")
	case r.CFA.Reg == t.sp:
		out = append(out, "cfa:sp")
	case r.CFA.Reg == t.fp:
		out = append(out, "cfa:fp")
	default:
		out = append(out, "cfa:other-register")
	}
	if r.CFA.Deref {
		out = append(out, "cfa:deref")
	}
	where := func(what string, x sframe.Rule) string {
		switch {
		case x.Kind == sframe.RuleUndefined:
			return what + ":undefined"
		case x.Kind == sframe.RuleSame:
			return what + ":same"
		case x.Reg == sframe.RegCFA && x.Deref:
			return what + ":saved"
		case x.Reg == sframe.RegCFA:
			return what + ":cfa-offset"
		case x.Deref:
			return what + ":register-deref"
		}
		return what + ":register"
	}
	out = append(out, where("ra", r.RA), where("fp", r.FP))
	if r.MangledRA {
		out = append(out, fmt.Sprintf("ra:signed-key-%c", 'a'+rune(r.PAuthKey)))
	}
	if r.CFA.Kind == sframe.RuleExpr {
		out = append(out, "words:"+t.offsetWidth(r))
	}
	if r.Signal {
		out = append(out, "signal")
	}
	return out
}

// offsetWidth names the narrowest data word (1, 2 or 4 bytes) that holds
// every offset of r: the CFA's as the target stores it (s390x: (off-160)/8)
// and those of an RA or FP saved at the CFA.
func (t *isa) offsetWidth(r sframe.Row) string {
	offs := []int64{r.CFA.Offset}
	if t.abi == target.S390X {
		offs[0] = (r.CFA.Offset - 160) / 8
	}
	for _, x := range []sframe.Rule{r.RA, r.FP} {
		if x.Kind == sframe.RuleExpr && x.Reg == sframe.RegCFA {
			offs = append(offs, x.Offset)
		}
	}
	w := "1-byte"
	for _, o := range offs {
		switch {
		case o < math.MinInt16 || o > math.MaxInt16:
			return "4-byte"
		case o < math.MinInt8 || o > math.MaxInt8:
			w = "2-byte"
		}
	}
	return w
}

// Add tallies one program and the PCs its runs executed (in order, all
// paths). Shapes counted: "call" (executed calls), "row-change-across-call"
// (the row at the return address differs from the call's), "call-last"
// (a call that is its function's last instruction).
func (c *Coverage) Add(p *Program, executed []uint64) {
	c.Programs++
	type loc struct{ f, i int }
	at := map[uint64]loc{}
	for fi, f := range p.Funcs {
		if fi > 0 {
			c.Funcs++
		}
		c.Insns += len(f.Insns)
		c.Rows += len(f.Rows)
		for ii, in := range f.Insns {
			at[f.Addr+uint64(in.Off)] = loc{fi, ii}
		}
	}
	funcRun := map[int]bool{}
	insnRun := map[loc]bool{}
	rowRun := map[[2]int]bool{}
	for _, pc := range executed {
		l, ok := at[pc]
		if !ok {
			continue
		}
		f := p.Funcs[l.f]
		in := f.Insns[l.i]
		c.Steps++
		for _, k := range p.RuleKinds(in.Row) {
			c.Kinds[k]++
		}
		insnRun[l] = true
		if l.f > 0 && !funcRun[l.f] {
			funcRun[l.f] = true
			c.PatternsRun[f.Pattern]++
		}
		r := sort.Search(len(f.Rows), func(k int) bool { return f.Rows[k].Start > in.Off }) - 1
		rowRun[[2]int{l.f, r}] = true
		if in.Call {
			c.Shapes["call"]++
			if l.i == len(f.Insns)-1 {
				c.Shapes["call-last"]++
			} else if !sameRule(in.Row, f.Insns[l.i+1].Row) {
				c.Shapes["row-change-across-call"]++
			}
		}
	}
	c.FuncsRun += len(funcRun)
	c.InsnsRun += len(insnRun)
	c.RowsRun += len(rowRun)
}
