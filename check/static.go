package check

import (
	"fmt"
	"strings"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/disasm"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// expected is the SFrame form of a CFI row, or why it has none.
type expected struct {
	CFA, RA, FP sframe.Rule
	Signed      bool
	// Inexpressible names what the version cannot say ("" when it can);
	// NotCompared what this check does not evaluate.
	Inexpressible string
	NotCompared   string
	Text          string
}

// static compares SFrame rows with CFI rows at every instruction boundary
// of every function.
func (c *checker) static() {
	if !c.opts.Static || c.t == nil || c.cfi == nil {
		if c.opts.Static && c.t != nil && len(c.funcs) > 0 {
			c.r.add(Finding{Kind: KindNotCompared, Severity: SevNote, Offset: -1, FileOffset: -1,
				Message: "no .eh_frame or .debug_frame: no static differential"})
		}
		// Boundaries are still counted for the report.
		for i := range c.funcs {
			c.walk(i, nil)
		}
		return
	}
	var cache struct {
		fde  *cfi.FDE
		rows []cfi.Row
		err  error
	}
	rowsOf := func(f *cfi.FDE) ([]cfi.Row, error) {
		if cache.fde != f {
			cache.fde = f
			cache.rows, cache.err = f.Rows(c.track(), c.l.Target.IsAArch64(), c.l.File.ByteOrder)
		}
		return cache.rows, cache.err
	}
	for i := range c.funcs {
		c.walk(i, rowsOf)
	}
}

// track is the CFI columns compared: FP and RA.
func (c *checker) track() []uint64 {
	return []uint64{uint64(c.l.Target.FP()), uint64(c.l.Target.RA())}
}

type diffKey struct{ sf, cf string }

// walk visits every instruction boundary of function i.
func (c *checker) walk(i int, rowsOf func(*cfi.FDE) ([]cfi.Row, error)) {
	f, fr := c.funcs[i], &c.fr[i]
	code := c.l.code(f.Addr, f.Addr+f.Size)
	version := 0
	if c.t != nil && len(c.t.Sections) > 0 {
		version = int(c.t.Sections[0].Header.Version)
	}
	diffs := map[diffKey]*Finding{}
	inexpr := map[string]*Finding{}
	var noSFrame, noCFI, cfiErr *Finding
	for off := 0; off < len(code); {
		pc := f.Addr + uint64(off)
		n, err := disasm.Length(c.l.Target, code[off:])
		if err != nil {
			c.add(i, Finding{Kind: KindNotCompared, Severity: SevNote, PC: hex(pc),
				Message: fmt.Sprintf("instruction boundaries end here (%v); the rest of the function is not compared", err)})
			break
		}
		off += n
		fr.Instructions++
		if rowsOf == nil {
			continue
		}
		var (
			row   sframe.Row
			hasSF bool
			sfFn  sframe.Func
		)
		if fn, err := c.t.FindFDE(pc); err == nil {
			sfFn = fn
			if r, err := fn.FindRow(pc); err == nil {
				row, hasSF = r, true
				version = int(fn.Section().Header.Version)
			}
		}
		cf := c.cfi.Find(pc)
		if cf == nil {
			if hasSF && noCFI == nil {
				noCFI = &Finding{Kind: KindMissing, Severity: SevWarning, PC: hex(pc),
					Message: "SFrame has rows where the CFI has no FDE"}
			}
			continue
		}
		rows, err := rowsOf(cf)
		if err != nil && cfiErr == nil {
			cfiErr = &Finding{Kind: KindNotCompared, Severity: SevWarning, PC: hex(pc),
				Message: fmt.Sprintf("the CFI of this function does not interpret: %v", err)}
		}
		crow, ok := cfi.At(rows, pc)
		if !ok {
			continue
		}
		want := c.expect(crow, cf, version)
		if want.NotCompared != "" {
			fr.NotCompared++
			if inexpr["nc:"+want.NotCompared] == nil {
				inexpr["nc:"+want.NotCompared] = &Finding{Kind: KindNotCompared, Severity: SevNote, PC: hex(pc),
					Message: want.NotCompared, CFI: want.Text}
			}
			continue
		}
		if want.Inexpressible != "" {
			fr.Inexpressible++
			if inexpr[want.Inexpressible] == nil {
				msg := fmt.Sprintf("inexpressible in v%d: %s", version, want.Inexpressible)
				if !hasSF {
					msg += "; the section has no row here"
				}
				fi := &Finding{Kind: KindInexpressible, Severity: SevNote, PC: hex(pc), Message: msg, CFI: want.Text}
				if hasSF {
					fi.SFrame = ruleText(c.l.Target, row)
				}
				inexpr[want.Inexpressible] = fi
			}
			continue
		}
		if !hasSF {
			if noSFrame == nil {
				msg := "the CFI describes this PC, the SFrame section does not"
				if sfFn.Size > 0 {
					msg = fmt.Sprintf("SFrame FDE at 0x%x has no row for this PC", sfFn.Start)
				}
				noSFrame = &Finding{Kind: KindMissing, Severity: SevError, PC: hex(pc), Message: msg, CFI: want.Text}
			}
			continue
		}
		fr.Compared++
		if same(c.l.Target, row, want) {
			continue
		}
		fr.Differ++
		got := ruleText(c.l.Target, row)
		k := diffKey{got, want.Text}
		if d := diffs[k]; d != nil {
			d.Message = fmt.Sprintf("%s; %s", strings.SplitN(d.Message, ";", 2)[0], plural(d, pc))
			continue
		}
		d := &Finding{Kind: KindStatic, Severity: SevError, PC: hex(pc), SFrame: got, CFI: want.Text,
			Offset: sfFn.Offset,
			Message: fmt.Sprintf("SFrame row (FDE at 0x%x, row at +%d) differs from the CFI row (FDE at %s+%d, row at +%d)",
				sfFn.Start, row.Start, c.l.CFIName, cf.Offset, crow.Loc-cf.Start)}
		diffs[k] = d
	}
	if len(inexpr) > 0 && !fr.HasFDE {
		// A producer leaves out a function whose CFI its version cannot
		// express (GNU as warns, or not): not a defect of the section.
		for _, p := range []*Finding{noSFrame, c.uncovered[i]} {
			if p != nil {
				p.Severity = SevNote
				p.Message += fmt.Sprintf(" (its CFI is inexpressible in v%d)", version)
			}
		}
	}
	for _, p := range []*Finding{c.uncovered[i], noSFrame, noCFI, cfiErr} {
		if p != nil {
			c.add(i, *p)
		}
	}
	for _, m := range []map[string]*Finding{inexpr} {
		for _, fi := range m {
			c.add(i, *fi)
		}
	}
	for _, d := range diffs {
		off, fo := c.sframeOffset(d.Offset)
		d.Offset, d.FileOffset = off, fo
		c.add(i, *d)
	}
}

func plural(d *Finding, pc uint64) string {
	n := 2
	if i := strings.Index(d.Message, "; at "); i >= 0 {
		fmt.Sscanf(d.Message[i+5:], "%d", &n)
		n++
	}
	return fmt.Sprintf("at %d instructions, first %s", n, d.PC)
}

// expect translates a CFI row into the rules an SFrame row of version v
// must have.
func (c *checker) expect(row cfi.Row, f *cfi.FDE, v int) (e expected) {
	t := c.l.Target
	bo := c.l.File.ByteOrder
	e.Signed = row.RASigned
	defer func() { e.Text = cfiText(t, row, f) }()

	if f.CIE.RAReg != uint64(t.RA()) {
		e.NotCompared = fmt.Sprintf("the CIE's return address column is %d, not the ABI's %d", f.CIE.RAReg, t.RA())
		return e
	}
	fp, ra := row.Regs[0], row.Regs[1]
	if ra.Kind == cfi.Undefined {
		e.RA = sframe.Rule{Kind: sframe.RuleUndefined}
		e.CFA = sframe.Rule{Kind: sframe.RuleUndefined}
		e.FP = sframe.Rule{Kind: sframe.RuleSame}
		return e
	}
	// CFA
	switch row.CFA.Kind {
	case cfi.RegOffset:
		e.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: int(row.CFA.Reg), Offset: row.CFA.Offset}
		if int(row.CFA.Reg) != t.SP() && int(row.CFA.Reg) != t.FP() && v < 3 {
			e.Inexpressible = fmt.Sprintf("CFA based on r%d (only the SP and FP can base a CFA before v3)", row.CFA.Reg)
		}
	case cfi.CFAExpression:
		reg, off, deref, ok := cfi.Simple(row.CFA.Expr, false, bo)
		if !ok || reg < 0 {
			e.NotCompared = "CFA given by a DWARF expression (DW_CFA_def_cfa_expression) that is not register+offset; not evaluated"
			return e
		}
		e.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: int(reg), Offset: off, Deref: deref}
		if v < 3 {
			e.Inexpressible = "CFA given by a DWARF expression (DRAP)"
		}
	default:
		e.NotCompared = "no CFA rule"
		return e
	}
	var why string
	e.RA, why = c.regRule(ra, v, true)
	if why != "" && e.Inexpressible == "" {
		e.Inexpressible = "RA " + why
	}
	if e.RA.Kind == sframe.RuleSame && !t.HasLinkRegister() && e.Inexpressible == "" {
		e.Inexpressible = "RA not saved on a target without a link register"
	}
	e.FP, why = c.regRule(fp, v, false)
	if why != "" && e.Inexpressible == "" {
		e.Inexpressible = "FP " + why
	}
	return e
}

// regRule translates the CFI rule of the RA or FP.
func (c *checker) regRule(r cfi.Rule, v int, isRA bool) (sframe.Rule, string) {
	t := c.l.Target
	flex := v >= 3
	switch r.Kind {
	case cfi.Unspecified, cfi.SameValue:
		return sframe.Rule{Kind: sframe.RuleSame}, ""
	case cfi.Undefined:
		if isRA {
			return sframe.Rule{Kind: sframe.RuleUndefined}, ""
		}
		return sframe.Rule{Kind: sframe.RuleSame}, "undefined (SFrame has no undefined FP)"
	case cfi.Offset:
		return sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: r.Offset, Deref: true}, ""
	case cfi.ValOffset:
		rule := sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: r.Offset}
		if !flex {
			return rule, "is CFA+offset (DW_CFA_val_offset)"
		}
		return rule, ""
	case cfi.Register:
		rule := sframe.Rule{Kind: sframe.RuleExpr, Reg: int(r.Reg)}
		if !flex && !(t == target.S390X && v == 2) {
			return rule, fmt.Sprintf("in register r%d", r.Reg)
		}
		return rule, ""
	case cfi.Expression, cfi.ValExpression:
		reg, off, deref, ok := cfi.Simple(r.Expr, true, c.l.File.ByteOrder)
		if r.Kind == cfi.Expression {
			if !ok || deref {
				return sframe.Rule{}, "saved at an address a DWARF expression computes (not register+offset)"
			}
			deref = true
		} else if !ok {
			return sframe.Rule{}, "given by a DWARF expression (not register+offset)"
		}
		rule := sframe.Rule{Kind: sframe.RuleExpr, Reg: int(reg), Offset: off, Deref: deref}
		if reg == -1 {
			rule.Reg = sframe.RegCFA
			if deref {
				return rule, ""
			}
		}
		if !flex {
			return rule, "given by a DWARF expression over a register"
		}
		return rule, ""
	}
	return sframe.Rule{}, "rule kind unknown"
}

// same compares an SFrame row with the translated CFI row.
func same(t target.Target, row sframe.Row, e expected) bool {
	if row.RA.Kind == sframe.RuleUndefined || e.RA.Kind == sframe.RuleUndefined {
		return row.RA.Kind == e.RA.Kind
	}
	if t.IsAArch64() && row.MangledRA != e.Signed {
		return false
	}
	return row.CFA == e.CFA && row.RA == e.RA && row.FP == e.FP
}

func regName(t target.Target, r int) string {
	switch r {
	case sframe.RegCFA:
		return "c"
	case t.SP():
		return "sp"
	case t.FP():
		return "fp"
	}
	return fmt.Sprintf("r%d", r)
}

func signed(off int64) string {
	if off < 0 {
		return fmt.Sprint(off)
	}
	return fmt.Sprintf("+%d", off)
}

// sfRuleText prints a rule as objdump's v3 notation does: "sp+16",
// "c-8" (saved at CFA-8), "(fp-8)" (loaded from fp-8), "r14" (in a
// register), "same", "undef".
func sfRuleText(t target.Target, r sframe.Rule, cfa bool) string {
	switch r.Kind {
	case sframe.RuleUndefined:
		return "undef"
	case sframe.RuleSame:
		return "same"
	}
	base := regName(t, r.Reg)
	if r.Reg != sframe.RegCFA && !r.Deref && r.Offset == 0 && !cfa {
		return base
	}
	s := base + signed(r.Offset)
	switch {
	case r.Reg == sframe.RegCFA && r.Deref:
		return s
	case r.Reg == sframe.RegCFA:
		return "=" + s
	case r.Deref:
		return "(" + s + ")"
	}
	return s
}

func ruleText(t target.Target, row sframe.Row) string {
	s := fmt.Sprintf("cfa=%s ra=%s fp=%s", sfRuleText(t, row.CFA, true), sfRuleText(t, row.RA, false), sfRuleText(t, row.FP, false))
	if row.MangledRA {
		s += " [s]"
	}
	return s
}

func cfiRuleText(t target.Target, r cfi.Rule) string {
	switch r.Kind {
	case cfi.Unspecified:
		return "same"
	case cfi.Undefined:
		return "undef"
	case cfi.SameValue:
		return "same"
	case cfi.Offset:
		return "c" + signed(r.Offset)
	case cfi.ValOffset:
		return "=c" + signed(r.Offset)
	case cfi.Register:
		return regName(t, int(r.Reg))
	case cfi.RegOffset:
		return regName(t, int(r.Reg)) + signed(r.Offset)
	case cfi.Expression:
		return fmt.Sprintf("exp[% x]", r.Expr)
	case cfi.ValExpression:
		return fmt.Sprintf("vexp[% x]", r.Expr)
	case cfi.CFAExpression:
		return fmt.Sprintf("exp[% x]", r.Expr)
	}
	return "?"
}

func cfiText(t target.Target, row cfi.Row, f *cfi.FDE) string {
	s := fmt.Sprintf("cfa=%s ra=%s fp=%s", cfiRuleText(t, row.CFA), cfiRuleText(t, row.Regs[1]), cfiRuleText(t, row.Regs[0]))
	if row.RASigned {
		s += " [s]"
	}
	return s
}
