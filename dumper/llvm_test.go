package dumper

import (
	"errors"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/sframe"
)

// llvmListing is llvm-readobj's listing of one x86-64 function at
// 0x1000 with the given FREs.
func llvmListing(fdeType string, fres ...string) string {
	var b strings.Builder
	b.WriteString(`
File: /tmp/x.elf
Format: elf64-x86-64
Arch: x86_64
AddressSize: 64bit
LoadName: <Not found>
SFrame section '.sframe' {
  Header {
    Magic: 0xDEE2
    Version: V2 (0x2)
    Flags [ (0x5)
      FDEFuncStartPCRel (0x4)
      FDESorted (0x1)
    ]
    ABI: AMD64EndianLittle (0x3)
    CFA fixed FP offset (unused): 0
    CFA fixed RA offset: -8
    Auxiliary header length: 0
    Num FDEs: 1
    Num FREs: ` + string(rune('0'+len(fres))) + `
    FRE subsection length: 8
    FDE subsection offset: 0
    FRE subsection offset: 20
    Auxiliary header: []
  }
  Function Index [
    FuncDescEntry [0] {
      PC: 0x1000
      Size: 0x20
      Start FRE Offset: 0x0
      Num FREs: ` + string(rune('0'+len(fres))) + `
      Info {
        FRE Type: Addr1 (0x0)
        FDE Type: ` + fdeType + `
        Raw: 0x0
      }
`)
	if strings.HasPrefix(fdeType, "PCMask") {
		b.WriteString("      Repetitive block size: 0x10\n")
	} else {
		b.WriteString("      Repetitive block size (unused): 0x0\n")
	}
	b.WriteString("      Padding2: 0x0\n      FREs [\n")
	for _, f := range fres {
		b.WriteString("        Frame Row Entry {\n")
		for _, l := range strings.Split(f, ";") {
			b.WriteString("          " + strings.TrimSpace(l) + "\n")
		}
		b.WriteString("        }\n")
	}
	b.WriteString("      ]\n    }\n  ]\n}\n")
	return b.String()
}

func TestParseLLVM(t *testing.T) {
	t.Parallel()
	text := llvmListing("PCInc (0x0)",
		"Start Address: 0x1000; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: SP (0x1); CFA Offset: 8; RA Offset: -8",
		"Start Address: 0x1001; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: FP (0x0); CFA Offset: 16; RA Offset: -8; FP Offset: -16",
		// No data words: LLVM still prints the fixed RA offset.
		"Start Address: 0x1010; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: FP (0x0); RA Offset: -8")
	l, err := ParseLLVM(text, sframe.ABIAMD64LE)
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != 2 || l.CFAFixedRA != -8 || l.NumFDEs != 1 || l.NumFREs != 3 || strings.Join(l.Flags, ",") != "FDEFuncStartPCRel,FDESorted" {
		t.Errorf("header %+v", l)
	}
	f := l.Funcs[0]
	if f.Start != 0x1000 || f.Size != 0x20 || f.PCType != sframe.PCInc || !f.RepSizeKnown {
		t.Errorf("function %+v", f)
	}
	want := []Row{
		{StartPC: 0x1000, Start: 0, CFA: expr(7, 8), FP: same, RA: saved(-8)},
		{StartPC: 0x1001, Start: 1, CFA: expr(6, 16), FP: saved(-16), RA: saved(-8)},
		{StartPC: 0x1010, Start: 0x10, Outermost: true, CFA: sframe.Rule{}, RA: sframe.Rule{}, FP: same},
	}
	for i, w := range want {
		if g := f.Rows[i]; g != w {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}

	// An object's start is a relocation: LLVM prints it as a block.
	obj := strings.Replace(llvmListing("PCInc (0x0)", "Start Address: 0x1000; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: SP (0x1); CFA Offset: 8; RA Offset: -8"),
		"      PC: 0x1000\n", "      PC {\n        Relocation: R_X86_64_PC32\n        Symbol Name: .text\n        Start Address: 0x1000\n      }\n", 1)
	if !strings.Contains(obj, "Relocation:") {
		t.Fatal("the object listing was not made")
	}
	if lo, err := ParseLLVM(obj, sframe.ABIAMD64LE); err != nil || lo.Funcs[0].Start != 0x1000 {
		t.Errorf("an object's listing: %v", err)
	}

	text = llvmListing("PCMask (0x1)",
		"Start Address: 0x0; Return Address Signed: Yes; Offset Size: B1 (0x0); Base Register: SP (0x1); CFA Offset: 8; RA Offset: -8",
		"Start Address: 0xB; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: SP (0x1); CFA Offset: 16; RA Offset: -8")
	if l, err = ParseLLVM(text, sframe.ABIAMD64LE); err != nil {
		t.Fatal(err)
	}
	if f := l.Funcs[0]; f.PCType != sframe.PCMask || f.RepSize != 16 || f.Rows[1].Start != 0xb || !f.Rows[0].Mangled {
		t.Errorf("PCMASK function %+v", f)
	}
	// A signed RA on x86-64 is nothing a section can hold.
	if _, err := l.Table(0); !errors.Is(err, ErrNotRepresentable) {
		t.Errorf("Table of a signed x86-64 RA: %v", err)
	}
	l.Funcs[0].Rows[0].Mangled = false
	if tab, err := l.Table(0); err != nil {
		t.Errorf("Table: %v", err)
	} else if _, r, err := tab.FindRow(0x1000 + 0x1c); err != nil || r.CFA.Offset != 16 {
		t.Errorf("second block, row at 0xb: %+v, %v", r, err)
	}
}

func TestParseLLVMRejects(t *testing.T) {
	t.Parallel()
	fre := "Start Address: 0x1000; Return Address Signed: No; Offset Size: B1 (0x0); Base Register: SP (0x1); CFA Offset: 8; RA Offset: -8"
	good := llvmListing("PCInc (0x0)", fre)
	if _, err := ParseLLVM(good, sframe.ABIAMD64LE); err != nil {
		t.Fatalf("the listing the cases break: %v", err)
	}
	for _, c := range []struct {
		name, text string
		abi        sframe.ABI
		want       error
	}{
		{"no listing", "\nFile: x\n", sframe.ABIAMD64LE, ErrNoListing},
		{"warning", strings.Replace(good, "  Header {", "llvm-readobj: warning: 'x': invalid sframe section: invalid/unsupported version number (3)", 1), sframe.ABIAMD64LE, ErrSyntax},
		{"other ABI", good, sframe.ABIAArch64LE, ErrSyntax},
		{"unknown ABI", strings.Replace(good, "AMD64EndianLittle (0x3)", "0x3", 1), sframe.ABIAMD64LE, ErrSyntax},
		{"unknown field", strings.Replace(good, "Padding2: 0x0", "Padding3: 0x0", 1), sframe.ABIAMD64LE, ErrSyntax},
		{"unknown block", strings.Replace(good, "Info {", "Inf {", 1), sframe.ABIAMD64LE, ErrSyntax},
		{"cut short", good[:strings.Index(good, "      ]")], sframe.ABIAMD64LE, ErrSyntax},
		{"FRE count", strings.Replace(good, "      Num FREs: 1", "      Num FREs: 2", 1), sframe.ABIAMD64LE, ErrSyntax},
		{"RA without CFA", llvmListing("PCInc (0x0)", "Start Address: 0x1000; Base Register: SP (0x1); RA Offset: -16"), sframe.ABIAMD64LE, ErrSyntax},
		{"PC type", llvmListing("PCSomething (0x2)", fre), sframe.ABIAMD64LE, ErrSyntax},
	} {
		if _, err := ParseLLVM(c.text, c.abi); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}
