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
	Insns, InsnsRun int            // instructions generated / executed at least once (padding excluded)
	Padding         int            // instructions of padding that is never executed
	Idle            int            // idle functions (never executed, in large tables), not counted in Funcs
	Rows, RowsRun   int            // rows (rule changes) generated / covering an executed instruction
	Steps           int            // executed instructions, counted per execution
	Kinds           map[string]int // steps per rule kind (RuleKinds)
	Shapes          map[string]int // executed occurrences of program shapes (see Add)
	PatternsRun     map[string]int // functions executed per pattern
	// Version, when set, is the SFrame version whose data word sizes Add
	// also counts as kinds: "words:1B", "words:2B", "words:4B" (the size
	// sframe.Encode gives the executed row's FRE) and "words:none" (an
	// FRE without data words: the outermost frame).
	Version int
}

// NewCoverage returns an empty tally.
func NewCoverage() *Coverage {
	return &Coverage{Kinds: map[string]int{}, Shapes: map[string]int{}, PatternsRun: map[string]int{}}
}

// RuleKinds names the kinds of rule a row uses, for coverage reports:
// the CFA's base (sp, fp, another register) and dereference, where the RA
// and FP are (same register, saved on the stack, in another register,
// undefined), a signed RA, a signal frame. (Data-word sizes: Coverage.Add
// with Version set, as words:1B/2B/4B.)
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

// sizeKinds names the SFrame field sizes the row covering an instruction
// of f needs, for coverage reports: "fde:pcmask" in a PLT block's FDE,
// "fre-start:2"/":4" when the row starts at an offset that needs a 2- or
// 4-byte FRE start. (The data words' sizes are counted as words:1B/2B/4B,
// from the encoder, when Coverage.Version is set.)
func sizeKinds(f *Func, row sframe.Row) []string {
	var out []string
	if f.StubBlock != "" {
		out = append(out, "fde:pcmask")
	}
	switch {
	case row.Start >= 0x10000:
		out = append(out, "fre-start:4")
	case row.Start >= 0x100:
		out = append(out, "fre-start:2")
	}
	return out
}

// Add tallies one program and the PCs its runs executed (in order, all
// paths). Shapes counted: "call" (executed calls), "row-change-across-call"
// (the row at the return address differs from the call's), "call-last"
// (a call that is its function's last instruction), "tail-call" (a
// function entered by a jump from another: tail calls and PLT stubs'
// jumps), "tail-call-chain" (a tail call from a function that was itself
// entered by one), "part-entry" (a jump into a cold part),
// "outermost-mid-function" (a step of a function other than the entry stub
// whose row is outermost: it switched to a fresh stack),
// "call-on-fresh-stack" (a call made from there, on the fresh stack); and
// for signals (the instruction after a trampoline's rt_sigreturn is the
// interrupted one): "signal" (a signal delivered and returned from), and
// what it interrupted: "signal-interrupted-ra-in-lr" (the RA still in the
// link register), "signal-interrupted-rule-edge" (an instruction where the
// rule changes: prologues, epilogues), "signal-interrupted-outermost" (the
// entry stub). Besides the rule kinds, Kinds counts steps in functions
// whose FDE has no rows ("fde:empty"; "fde:empty-signal" for a signal
// trampoline's) and in far functions ("fde:far", more than 4 GiB from the
// rest).
func (c *Coverage) Add(p *Program, executed []uint64) {
	c.Programs++
	type loc struct{ f, i int }
	at := map[uint64]loc{}
	returns := map[uint64]bool{} // return addresses
	for fi, f := range p.Funcs {
		if f.Idle {
			c.Idle++
			continue
		}
		if fi > 0 {
			c.Funcs++
		}
		c.Rows += len(f.Rows)
		for ii, in := range f.Insns {
			if in.Pad > 0 {
				c.Padding += in.Pad
				continue
			}
			c.Insns++
			at[f.Addr+uint64(in.Off)] = loc{fi, ii}
			if in.Call {
				returns[f.Addr+uint64(in.Off)+uint64(len(in.Bytes))] = true
			}
		}
	}
	owner := func(fi int) string {
		if f := p.Funcs[fi]; f.PartOf != "" {
			return f.PartOf
		}
		return p.Funcs[fi].Name
	}
	byTail := map[string]bool{} // entered by a tail call, per logical function
	funcRun := map[int]bool{}
	insnRun := map[loc]bool{}
	rowRun := map[[2]int]bool{}
	words := map[[2]int]string{}
	prev := loc{-1, -1}
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
		r := sort.Search(len(f.Rows), func(k int) bool { return f.Rows[k].Start > in.Off }) - 1
		for _, k := range sizeKinds(f, f.Rows[r]) {
			c.Kinds[k]++
		}
		if l.i == 0 && f.PartOf != "" && prev.f >= 0 && owner(prev.f) == f.PartOf && prev.f != l.f {
			c.Shapes["part-entry"]++
		}
		if l.i == 0 && l.f > 0 && f.PartOf == "" && prev.f >= 0 && owner(prev.f) != owner(l.f) {
			switch {
			case p.Funcs[prev.f].Insns[prev.i].Call:
				byTail[owner(l.f)] = false
			case !returns[pc]:
				c.Shapes["tail-call"]++
				if byTail[owner(prev.f)] {
					c.Shapes["tail-call-chain"]++
				}
				byTail[owner(l.f)] = true
			}
		}
		prev = l
		if f.EmptyFDE && f.Kind == image.KindSignalRestorer {
			c.Kinds["fde:empty-signal"]++
		} else if f.EmptyFDE {
			c.Kinds["fde:empty"]++
		}
		if f.Far {
			c.Kinds["fde:far"]++
		}
		if l.f > 0 && in.Row.RA.Kind == sframe.RuleUndefined {
			c.Shapes["outermost-mid-function"]++
			if in.Call {
				c.Shapes["call-on-fresh-stack"]++
			}
		}
		insnRun[l] = true
		if l.f > 0 && !funcRun[l.f] {
			funcRun[l.f] = true
			if f.PartOf == "" { // a cold part is its owner's
				c.PatternsRun[f.Pattern]++
			}
		}
		rowRun[[2]int{l.f, r}] = true
		if c.Version != 0 {
			k := [2]int{l.f, r}
			w, ok := words[k]
			if !ok {
				w = wordsKind(p.rowWordSize(f.Rows[r], c.Version))
				words[k] = w
			}
			c.Kinds[w]++
		}
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
	// PCMASK: a stub after the first of its block whose every instruction
	// ran, so that its FDE's rows were looked up at every offset modulo
	// the stub size.
	for fi, f := range p.Funcs {
		if f.StubBlock == "" || fi == 0 || p.Funcs[fi-1].StubBlock != f.StubBlock {
			continue
		}
		all := true
		for ii := range f.Insns {
			all = all && insnRun[loc{fi, ii}]
		}
		if all {
			c.Shapes["pcmask-later-stub-every-insn"]++
		}
	}
}

func wordsKind(size int, err error) string {
	switch {
	case err != nil:
		return "words:unencodable"
	case size == 0:
		return "words:none"
	}
	return fmt.Sprintf("words:%dB", size)
}

// rowWordSize is the size in bytes of the data words sframe.Encode writes
// for row r in SFrame version v, in an FDE of the type GNU as would give
// it; 0 when the FRE has no data words.
func (p *Program) rowWordSize(r sframe.Row, v int) (int, error) {
	abi := sframe.ABI(p.Target)
	fixedFP, fixedRA := sframe.DefaultFixedOffsets(abi)
	opt := sframe.EncodeOptions{Version: sframe.Version(v), ABI: abi, CFAFixedFP: fixedFP, CFAFixedRA: fixedRA}
	r.Start = 0
	fde := sframe.FDE{Start: 0x1000, Size: 1, Rows: []sframe.Row{r}}
	fde.Type = sframe.ChooseFDEType(&fde, opt)
	sec, err := sframe.Encode([]sframe.FDE{fde}, opt)
	if err != nil {
		return 0, err
	}
	// The only FRE starts the FRE sub-section (header field freoff, from
	// the header's end), after the function's attribute in version 3;
	// its info byte follows a 1-byte start offset.
	at := sframe.HeaderSize + int(abi.ByteOrder().Uint32(sec[24:])) + 1
	if v == 3 {
		at += 5
	}
	info := sec[at]
	if info>>1&0xf == 0 {
		return 0, nil
	}
	return 1 << (info >> 5 & 3), nil
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
