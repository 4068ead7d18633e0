package sframe

import (
	"fmt"
	"slices"
	"strconv"
)

// String writes the rule in the notation reports and error messages use:
// "undefined", "same", "CFA-8" or "r7+16" (an address, or a value held in
// a register), "[CFA-8]" (loaded from that address). Registers are named
// by DWARF number; Text names them.
func (r Rule) String() string { return r.Text(nil) }

// Text is String with registers named by name (for instance target's
// RegName: "[%rbp-16]"); a nil name writes r<number>.
func (r Rule) Text(name func(reg int) string) string {
	switch r.Kind {
	case RuleUndefined:
		return "undefined"
	case RuleSame:
		return "same"
	case RuleExpr:
	default:
		return fmt.Sprintf("RuleKind(%d)", r.Kind)
	}
	var base string
	switch {
	case r.Reg == RegCFA:
		base = "CFA"
	case name != nil:
		base = name(r.Reg)
	default:
		base = "r" + strconv.Itoa(r.Reg)
	}
	s := fmt.Sprintf("%s%+d", base, r.Offset)
	if r.Deref {
		s = "[" + s + "]"
	}
	return s
}

// RuleRegs adds to regs the DWARF registers that rows' rules name other
// than the ABI's stack pointer, frame pointer and return address (a CFA on
// %r10 after DRAP, an s390x FP or RA saved in an FPR): what an unwinder
// must be given beyond those three to apply the rules. It returns regs
// sorted, each register once.
func RuleRegs(a ABI, rows []Row, regs []int) []int {
	sp, fp, ra := a.SPRegister(), a.FPRegister(), a.RARegister()
	note := func(r Rule) {
		if r.Kind == RuleExpr && r.Reg != RegCFA && r.Reg != sp && r.Reg != fp && r.Reg != ra && !slices.Contains(regs, r.Reg) {
			regs = append(regs, r.Reg)
		}
	}
	for _, row := range rows {
		note(row.CFA)
		note(row.RA)
		note(row.FP)
	}
	slices.Sort(regs)
	return regs
}
