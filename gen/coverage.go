package gen

import (
	"fmt"
	"sort"

	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
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
// undefined), a signed RA, a signal frame.
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
	if r.Signal {
		out = append(out, "signal")
	}
	return out
}

// Add tallies one program and the PCs its runs executed (in order, all
// paths). Shapes counted: "call" (executed calls), "row-change-across-call"
// (the row at the return address differs from the call's), "call-last"
// (a call that is its function's last instruction), and for signals (the
// instruction after a trampoline's rt_sigreturn is the interrupted one):
// "signal" (a signal delivered and returned from), and what it
// interrupted: "signal-interrupted-ra-in-lr" (the RA still in the link
// register), "signal-interrupted-rule-edge" (an instruction where the
// rule changes: prologues, epilogues), "signal-interrupted-outermost" (the
// entry stub).
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
	afterSigreturn := false
	for _, pc := range executed {
		l, ok := at[pc]
		if !ok {
			continue
		}
		f := p.Funcs[l.f]
		in := f.Insns[l.i]
		if afterSigreturn {
			c.signalShapes(p, f, l.f, l.i)
		}
		afterSigreturn = f.Kind == image.KindSignalRestorer && l.i == len(f.Insns)-1
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

// signalShapes tallies the instruction f.Insns[i] a signal interrupted.
func (c *Coverage) signalShapes(p *Program, f *Func, fi, i int) {
	c.Shapes["signal"]++
	row := f.Insns[i].Row
	if p.t.abi.HasLinkRegister() && row.RA.Kind == sframe.RuleSame {
		c.Shapes["signal-interrupted-ra-in-lr"]++
	}
	if fi == 0 {
		c.Shapes["signal-interrupted-outermost"]++
	} else if i == 0 || !sameRule(f.Insns[i-1].Row, row) || i+1 < len(f.Insns) && !sameRule(f.Insns[i+1].Row, row) {
		c.Shapes["signal-interrupted-rule-edge"]++
	}
}
