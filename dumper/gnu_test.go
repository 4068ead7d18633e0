package dumper

import (
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/sframe"
)

func expr(reg int, off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: reg, Offset: off}
}
func load(reg int, off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: reg, Offset: off, Deref: true}
}
func saved(off int64) sframe.Rule { return load(sframe.RegCFA, off) }

var same = sframe.Rule{Kind: sframe.RuleSame}

// gnuListing is a version 3 listing of one function at 0x1000 with the
// given attribute suffix and row lines, headed for the given fixed RA
// offset line (empty for none).
func gnuListing(fixedRA, attrs string, rows ...string) string {
	var b strings.Builder
	b.WriteString("\n/tmp/x.elf:     file format elf64-x86-64\n\nContents of the SFrame section .sframe:\n  Header :\n\n")
	b.WriteString("    Version: SFRAME_VERSION_3\n    Flags: SFRAME_F_FDE_SORTED,\n           SFRAME_F_FDE_FUNC_START_PCREL\n")
	if fixedRA != "" {
		b.WriteString("    CFA fixed RA offset: " + fixedRA + "\n")
	}
	b.WriteString("    Num FDEs: 1\n    Num FREs: " + string(rune('0'+len(rows))) + "\n\n  Function Index :\n\n")
	b.WriteString("    func idx [0]: pc = 0x1000, size = 64 bytes" + attrs + "\n")
	b.WriteString("    STARTPC         CFA       FP        RA           \n")
	for _, r := range rows {
		b.WriteString("    " + r + "\n")
	}
	return b.String()
}

// The notation of every column, read for x86-64 (SP 7, FP 6), AArch64
// (SP 31, FP 29) and s390x (SP 15, FP 11).
func TestParseGNUNotation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		abi         sframe.ABI
		fixedRA     string
		attrs       string
		row         string
		cfa, fp, ra sframe.Rule
		mangled     bool
	}{
		{sframe.ABIAMD64LE, "-8", "", "0000000000001000  sp+8      u         f            ", expr(7, 8), same, saved(-8), false},
		{sframe.ABIAMD64LE, "-8", "", "0000000000001000  fp+16     c-16      f            ", expr(6, 16), saved(-16), saved(-8), false},
		{sframe.ABIAMD64LE, "-8", "", "0000000000001000  sp+1048584u         f            ", expr(7, 1048584), same, saved(-8), false},
		// objdump prints a negative CFA offset as "+-N".
		{sframe.ABIAMD64LE, "-8", "", "0000000000001000  fp+-1     u         f            ", expr(6, -1), same, saved(-8), false},
		// Flexible rows: a register plus N, loaded in parentheses.
		{sframe.ABIAMD64LE, "-8", `, attr = "F"`, "0000000000001000  (fp-8)    c-16      U            ", load(6, -8), saved(-16), saved(-8), false},
		{sframe.ABIAMD64LE, "-8", `, attr = "F"`, "0000000000001000  r10+0     r3+0      c-24         ", expr(10, 0), expr(3, 0), saved(-24), false},
		{sframe.ABIAMD64LE, "-8", `, attr = "SF"`, "0000000000001000  sp+8      (r3+8)    u            ", expr(7, 8), load(3, 8), saved(-8), false},
		{sframe.ABIAArch64LE, "", "", "0000000000001000  sp+16     c-16      c-8[s]       ", expr(31, 16), saved(-16), saved(-8), true},
		{sframe.ABIAArch64LE, "", "", "0000000000001000  sp+0      u         u[s]         ", expr(31, 0), same, same, true},
		{sframe.ABIS390XBE, "", "", "0000000000001000  fp+320    c-72      U            ", expr(11, 320), saved(-72), same, false},
		// s390x version 2: RA and FP held in registers.
		{sframe.ABIS390XBE, "", "", "0000000000001000  sp+160    r17       r16          ", expr(15, 160), expr(17, 0), expr(16, 0), false},
		{sframe.ABIS390XBE, "", `, attr = "F"`, "0000000000001000  sp+160    r17+0     r16+0        ", expr(15, 160), expr(17, 0), expr(16, 0), false},
	} {
		l, err := ParseGNU(gnuListing(c.fixedRA, c.attrs, c.row), c.abi)
		if err != nil {
			t.Errorf("%v %q: %v", c.abi, c.row, err)
			continue
		}
		r := l.Funcs[0].Rows[0]
		if r.CFA != c.cfa || r.FP != c.fp || r.RA != c.ra || r.Mangled != c.mangled || r.Start != 0 || r.Outermost {
			t.Errorf("%v %q: CFA %+v FP %+v RA %+v signed %v; want %+v %+v %+v %v", c.abi, c.row, r.CFA, r.FP, r.RA, r.Mangled, c.cfa, c.fp, c.ra, c.mangled)
		}
	}
}

func TestParseGNUFunctions(t *testing.T) {
	t.Parallel()
	text := gnuListing("-8", `, attr = "SF", pauth = B key`,
		"0000000000001000  sp+8      u         f            ",
		"0000000000001004  RA undefined")
	l, err := ParseGNU(text, sframe.ABIAArch64BE)
	if err != nil {
		t.Fatal(err)
	}
	f := l.Funcs[0]
	if f.Start != 0x1000 || f.Size != 64 || !f.Signal || f.Type != sframe.FDETypeFlex || f.PAuthKey != sframe.PAuthKeyB || f.Attrs != "SF" {
		t.Errorf("function %+v", f)
	}
	if r := f.Rows[1]; !r.Outermost || r.Start != 4 || r.RA.Kind != sframe.RuleUndefined || r.CFA.Kind != sframe.RuleUndefined {
		t.Errorf("RA undefined row %+v", r)
	}
	if strings.Join(l.Flags, " ") != "SFRAME_F_FDE_SORTED SFRAME_F_FDE_FUNC_START_PCREL" {
		t.Errorf("flags %q", l.Flags)
	}
	fdes := l.FDEs()
	if fdes[0].Rows[1].PAuthKey != sframe.PAuthKeyB || !fdes[0].Rows[0].Signal {
		t.Errorf("FDE rows do not carry the function's key and signal flag: %+v", fdes[0].Rows)
	}

	// PCMASK: STARTPC holds offsets into the block.
	mask := strings.Replace(gnuListing("-8", "", "0000000000000000  sp+8      u         f            ",
		"000000000000000b  sp+16     u         f            "), "STARTPC   ", "STARTPC[m]", 1)
	l, err = ParseGNU(mask, sframe.ABIAMD64LE)
	if err != nil {
		t.Fatal(err)
	}
	if f := l.Funcs[0]; f.PCType != sframe.PCMask || f.RepSizeKnown || f.Rows[1].Start != 0xb || f.Rows[1].StartPC != 0xb {
		t.Errorf("PCMASK function %+v", f)
	}
	if _, err := l.Table(0); !errors.Is(err, ErrNotRepresentable) {
		t.Errorf("Table of a PCMASK function of unknown repetition size: %v", err)
	}
	l.Funcs[0].RepSize = 16
	if tab, err := l.Table(0); err != nil {
		t.Error(err)
	} else if _, r, err := tab.FindRow(0x1000 + 16 + 0xc); err != nil || r.CFA.Offset != 16 {
		t.Errorf("second block, row at 0xb: %+v, %v", r, err)
	}
}

// A version 1 listing (binutils 2.40) prints no fixed offsets: "u" is
// the x86-64 RA at CFA-8 all the same.
func TestParseGNUVersion1FixedOffsets(t *testing.T) {
	t.Parallel()
	text := `Contents of the SFrame section .sframe:
  Header :

    Version: SFRAME_VERSION_1
    Flags: SFRAME_F_FDE_SORTED
    Num FDEs: 1
    Num FREs: 1

  Function Index :

    func idx [0]: pc = 0x401000, size = 25 bytes
    STARTPC         CFA       FP        RA           
    0000000000401000  sp+8      u         u            
`
	for _, c := range []struct {
		abi sframe.ABI
		ra  sframe.Rule
	}{{sframe.ABIAMD64LE, saved(-8)}, {sframe.ABIAArch64LE, same}} {
		l, err := ParseGNU(text, c.abi)
		if err != nil {
			t.Fatal(err)
		}
		if l.FixedPrinted || l.Funcs[0].Rows[0].RA != c.ra {
			t.Errorf("%v: fixed printed %v, RA %+v; want %+v", c.abi, l.FixedPrinted, l.Funcs[0].Rows[0].RA, c.ra)
		}
	}
}

// Anything the layouts do not print is an error naming the line; a
// listing cut short disagrees with the header's counts.
func TestParseGNURejects(t *testing.T) {
	t.Parallel()
	row := "0000000000001000  sp+8      u         f            "
	good := gnuListing("-8", "", row)
	for _, c := range []struct {
		name, text string
		want       error
		line       int
	}{
		{"empty", "", ErrNoListing, 0},
		{"objdump refused", "\n/tmp/x.elf:     file format elf64-x86-64\n\n", ErrNoListing, 0},
		{"header only", strings.Replace(good, "  Function Index :", " No further information can be displayed.  SFrame version not supported", 1), ErrNoListing, 14},
		{"unknown line", strings.Replace(good, "  Function Index :", "  Something else :", 1), ErrSyntax, 14},
		{"unknown version", strings.Replace(good, "SFRAME_VERSION_3", "(null)", 1), ErrSyntax, 7},
		{"unknown attribute", gnuListing("-8", `, attr = "X"`, row), ErrSyntax, 16},
		{"two columns", gnuListing("-8", "", "0000000000001000  sp+8      u"), ErrSyntax, 18},
		{"garbage column", gnuListing("-8", "", "0000000000001000  sp+8      u         q            "), ErrSyntax, 18},
		{"row before its function", gnuListing("-8", "", "0000000000000ff0  sp+8      u         f            "), ErrSyntax, 18},
		{"count", strings.Replace(good, "Num FREs: 1", "Num FREs: 2", 1), ErrSyntax, 0},
		{"two sections", good + "Contents of the SFrame section .sframe:\n", ErrSyntax, 19},
		{"f without a fixed offset", gnuListing("", "", row), ErrSyntax, 0},
		{"CFA on the CFA", gnuListing("-8", `, attr = "F"`, "0000000000001000  c+8       u         f            "), ErrSyntax, 0},
		{"register CFA in a default FDE", gnuListing("-8", "", "0000000000001000  r10+0     u         f            "), ErrSyntax, 0},
	} {
		_, err := ParseGNU(c.text, sframe.ABIAMD64LE)
		var le *LineError
		switch {
		case !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.line != 0 && (!errors.As(err, &le) || le.Line != c.line):
			t.Errorf("%s: %v, want it at line %d", c.name, err, c.line)
		}
	}
	if _, err := ParseGNU(good, sframe.ABIAMD64LE); err != nil {
		t.Errorf("the listing the cases break: %v", err)
	}
}
