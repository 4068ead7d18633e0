package sframe

import (
	"fmt"
	"slices"
	"testing"
)

func TestRuleString(t *testing.T) {
	t.Parallel()
	name := func(r int) string { return fmt.Sprintf("%%x%d", r) }
	cases := []struct {
		r         Rule
		str, text string
	}{
		{Rule{Kind: RuleUndefined}, "undefined", "undefined"},
		{Rule{Kind: RuleSame}, "same", "same"},
		{Rule{Kind: RuleExpr, Reg: 7, Offset: 16}, "r7+16", "%x7+16"},
		{Rule{Kind: RuleExpr, Reg: 31}, "r31+0", "%x31+0"},
		{Rule{Kind: RuleExpr, Reg: RegCFA, Offset: -8}, "CFA-8", "CFA-8"},
		{Rule{Kind: RuleExpr, Reg: RegCFA, Offset: -8, Deref: true}, "[CFA-8]", "[CFA-8]"},
		{Rule{Kind: RuleExpr, Reg: 6, Offset: -16, Deref: true}, "[r6-16]", "[%x6-16]"},
		{Rule{Kind: 9}, "RuleKind(9)", "RuleKind(9)"},
	}
	for _, c := range cases {
		if got := c.r.String(); got != c.str {
			t.Errorf("%#v.String() = %q, want %q", c.r, got, c.str)
		}
		if got := c.r.Text(name); got != c.text {
			t.Errorf("%#v.Text = %q, want %q", c.r, got, c.text)
		}
	}
}

// RuleRegs names the registers beyond the ABI's SP, FP and RA, once each,
// sorted, after those it is given.
func TestRuleRegs(t *testing.T) {
	t.Parallel()
	in := func(r int) Rule { return Rule{Kind: RuleExpr, Reg: r} }
	saved := Rule{Kind: RuleExpr, Reg: RegCFA, Offset: -8, Deref: true}
	cases := []struct {
		abi  ABI
		rows []Row
		have []int
		want []int
	}{
		{ABIAMD64LE, []Row{{CFA: in(RegAMD64SP), RA: saved, FP: saved}}, nil, nil},
		{ABIAMD64LE, []Row{{CFA: in(10), RA: saved}, {CFA: in(RegAMD64FP), FP: in(3)}, {CFA: in(10), RA: in(RegAMD64RA)}}, nil, []int{3, 10}},
		{ABIAArch64LE, []Row{{CFA: in(RegAArch64SP), RA: in(RegAArch64LR), FP: in(RegAArch64FP)}}, nil, nil},
		{ABIAArch64BE, []Row{{CFA: in(RegAArch64FP), RA: in(9)}}, []int{12}, []int{9, 12}},
		{ABIS390XBE, []Row{{CFA: in(RegS390XSP), RA: in(17), FP: in(16)}, {CFA: in(RegS390XFP), RA: in(RegS390XRA), FP: in(16)}}, []int{16}, []int{16, 17}},
		{ABIS390XBE, []Row{{CFA: in(RegS390XSP), RA: Rule{Kind: RuleSame}, FP: Rule{Kind: RuleUndefined}}}, nil, nil},
	}
	for _, c := range cases {
		if got := RuleRegs(c.abi, c.rows, slices.Clone(c.have)); !slices.Equal(got, c.want) {
			t.Errorf("%v: RuleRegs = %v, want %v", c.abi, got, c.want)
		}
	}
}
