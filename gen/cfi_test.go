package gen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// Values from the DWARF 5 standard, section 7.6, figure 7.
func TestSLEB128(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    int64
		want []byte
	}{
		{2, []byte{2}}, {-2, []byte{0x7e}}, {127, []byte{0xff, 0}}, {-127, []byte{0x81, 0x7f}},
		{128, []byte{0x80, 1}}, {-128, []byte{0x80, 0x7f}}, {129, []byte{0x81, 1}}, {-129, []byte{0xff, 0x7e}},
		{-8, []byte{0x78}},
	} {
		if got := sleb128(c.v); !bytes.Equal(got, c.want) {
			t.Errorf("sleb128(%d) = % x, want % x", c.v, got, c.want)
		}
	}
}

// The directives for rules the simple patterns never use.
func TestCFIDirectives(t *testing.T) {
	t.Parallel()
	amd64 := isaFor(target.X86_64)
	base := amd64.initialRow()
	drap := base
	drap.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: target.RegX86FP, Offset: -8, Deref: true}
	inReg := base
	inReg.RA = sframe.Rule{Kind: sframe.RuleExpr, Reg: 11}
	r10 := base
	r10.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: 10, Offset: 0}
	fpAtFP := drap
	fpAtFP.FP = sframe.Rule{Kind: sframe.RuleExpr, Reg: target.RegX86FP, Offset: 0, Deref: true}
	arm64Insn := isaFor(target.AArch64)
	signed := arm64Insn.initialRow()
	signed.MangledRA = true
	z := isaFor(target.S390X)
	fpr := z.initialRow()
	fpr.RA = sframe.Rule{Kind: sframe.RuleExpr, Reg: 24} // %f8
	for _, c := range []struct {
		t          *isa
		prev, next sframe.Row
		want       string
	}{
		// What GCC writes for a DRAP frame: DW_OP_breg6 -8; DW_OP_deref.
		{amd64, base, drap, ".cfi_escape 0xf,0x3,0x76,0x78,0x6"},
		{amd64, drap, base, ".cfi_def_cfa %rsp, 8"},
		{amd64, base, r10, ".cfi_def_cfa %r10, 0"},
		// GCC's DRAP frame pointer, saved at %rbp+0: DW_CFA_expression %rbp, DW_OP_breg6 0.
		{amd64, drap, fpAtFP, ".cfi_escape 0x10,0x6,0x2,0x76,0x0"},
		{amd64, base, inReg, ".cfi_register %rip, %r11"},
		{arm64Insn, arm64Insn.initialRow(), signed, ".cfi_negate_ra_state"},
		{z, z.initialRow(), fpr, ".cfi_register %r14, %f8"},
	} {
		if got := strings.Join(c.t.cfiDiff(c.prev, c.next), "; "); got != c.want {
			t.Errorf("%s: %q, want %q", c.t.abi.Name(), got, c.want)
		}
	}
}
