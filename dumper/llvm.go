package dumper

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/sframe"
)

// ParseLLVM reads what llvm-readobj --sframe printed for one SFrame
// section (LLVM's ScopedPrinter layout, as LLVM 21-23 print it) and reads
// each row's fields as rules for abi, which must be the ABI the listing
// names.
//
// The fields, as LLVM prints them:
//
//	Base Register: SP|FP, CFA Offset: N   the CFA
//	RA Offset: N                          RA saved at CFA+N (LLVM prints the
//	                                      header's fixed offset for x86-64)
//	FP Offset: N                          FP saved at CFA+N
//	no RA/FP Offset line                  still in its register (or at the
//	                                      header's fixed offset)
//	no CFA Offset line                    an FRE without data words: the
//	                                      outermost frame (LLVM still prints
//	                                      a fixed RA offset there)
//	Return Address Signed: Yes            the saved RA is signed (AArch64)
//	FDE Type: PCMask                      Start Address holds offsets into
//	                                      the repeated block, whose size the
//	                                      "Repetitive block size" line gives
//
// The preamble (File, Format, Arch, AddressSize, LoadName) is skipped;
// every other line must be one of the layout's, and a warning line (LLVM
// prints "warning: ... invalid sframe section" and no listing when it
// cannot read a section) is an error.
func ParseLLVM(text string, abi sframe.ABI) (*Listing, error) {
	p := llvmParser{l: &Listing{ABI: abi, FixedPrinted: true}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if err := p.line(line); err != nil {
			return nil, &LineError{Line: n, Text: line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	l := p.l
	switch {
	case !p.started:
		return nil, fmt.Errorf("%w: no \"SFrame section\" block", ErrNoListing)
	case len(p.stack) != 0:
		return nil, fmt.Errorf("%w: the listing ends inside %s", ErrSyntax, strings.Join(p.stack, " > "))
	case l.Version == 0:
		return nil, fmt.Errorf("%w: no Version line (the dumper printed no header)", ErrNoListing)
	case !p.abiSeen:
		return nil, fmt.Errorf("%w: no ABI line", ErrSyntax)
	}
	if err := l.checkCounts(); err != nil {
		return nil, err
	}
	for i := range l.Funcs {
		f := &l.Funcs[i]
		if f.PCType == sframe.PCMask && !f.RepSizeKnown {
			return nil, fmt.Errorf("%w: FuncDescEntry [%d]: a PCMASK function without its repetitive block size", ErrSyntax, f.Index)
		}
		for j := range f.Rows {
			if err := llvmRules(l, f, &f.Rows[j], &p.rows[i][j]); err != nil {
				return nil, fmt.Errorf("%w: FuncDescEntry [%d] row %d (Start Address %#x): %v", ErrSyntax, f.Index, j, f.Rows[j].StartPC, err)
			}
		}
	}
	return l, nil
}

// llvmRow is what one "Frame Row Entry" printed, before it is read as
// rules.
type llvmRow struct {
	base                 string // "SP" or "FP"
	cfa, ra, fp          int64
	hasCFA, hasRA, hasFP bool
}

type llvmParser struct {
	l       *Listing
	started bool
	abiSeen bool
	stack   []string // open scopes, outermost first: "SFrame section", "Header", ...
	rows    [][]llvmRow
	fres    []int // "Num FREs" of each function
}

var (
	reLLVMSection = regexp.MustCompile(`^SFrame section '(.*)' \{$`)
	reLLVMOpen    = regexp.MustCompile(`^(.*?) (\{|\[)(?: \((0x[0-9A-Fa-f]+)\))?$`)
	reLLVMField   = regexp.MustCompile(`^([^:]+): (.*)$`)
	reLLVMEnum    = regexp.MustCompile(`^(\S+) \((0x[0-9A-Fa-f]+)\)$`)
	reLLVMEntry   = regexp.MustCompile(`^FuncDescEntry \[(\d+)\]$`)
)

func (p *llvmParser) scope() string {
	if len(p.stack) == 0 {
		return ""
	}
	return p.stack[len(p.stack)-1]
}

func (p *llvmParser) line(line string) error {
	t := strings.TrimSpace(line)
	if strings.Contains(t, "warning:") || strings.Contains(t, "error:") {
		return fmt.Errorf("the dumper complains")
	}
	if !p.started {
		if m := reLLVMSection.FindStringSubmatch(t); m != nil {
			p.started = true
			p.stack = append(p.stack, "SFrame section")
			return nil
		}
		return nil // File:, Format:, Arch:, AddressSize:, LoadName:
	}
	if len(p.stack) == 0 {
		if t == "" {
			return nil
		}
		return fmt.Errorf("text after the SFrame section block")
	}
	switch t {
	case "":
		return nil
	case "}", "]":
		return p.close()
	}
	if m := reLLVMOpen.FindStringSubmatch(t); m != nil && !strings.Contains(m[1], ":") {
		return p.open(m[1])
	}
	if p.scope() == "Flags" {
		m := reLLVMEnum.FindStringSubmatch(t)
		if m == nil {
			return fmt.Errorf("not a flag")
		}
		p.l.Flags = append(p.l.Flags, m[1])
		return nil
	}
	m := reLLVMField.FindStringSubmatch(t)
	if m == nil {
		return fmt.Errorf("not a line of an LLVM SFrame listing")
	}
	return p.field(m[1], m[2])
}

// open enters a block; only the blocks of the layout are known.
func (p *llvmParser) open(name string) error {
	l := p.l
	want := map[string]string{
		"Header": "SFrame section", "Flags": "Header", "Function Index": "SFrame section",
		"Info": "FuncDescEntry", "FREs": "FuncDescEntry", "Frame Row Entry": "FREs", "PC": "FuncDescEntry",
	}
	if m := reLLVMEntry.FindStringSubmatch(name); m != nil {
		if p.scope() != "Function Index" {
			return fmt.Errorf("a function outside the Function Index")
		}
		idx, _ := strconv.Atoi(m[1])
		if idx != len(l.Funcs) {
			return fmt.Errorf("function index %d out of sequence (want %d)", idx, len(l.Funcs))
		}
		l.Funcs = append(l.Funcs, Func{Index: idx})
		p.rows = append(p.rows, nil)
		p.fres = append(p.fres, -1)
		p.stack = append(p.stack, "FuncDescEntry")
		return nil
	}
	parent, ok := want[name]
	if !ok || p.scope() != parent {
		return fmt.Errorf("block %q inside %q", name, p.scope())
	}
	if name == "Frame Row Entry" {
		f := &l.Funcs[len(l.Funcs)-1]
		f.Rows = append(f.Rows, Row{})
		p.rows[len(p.rows)-1] = append(p.rows[len(p.rows)-1], llvmRow{})
	}
	p.stack = append(p.stack, name)
	return nil
}

func (p *llvmParser) close() error {
	if len(p.stack) == 0 {
		return fmt.Errorf("a closing bracket without its block")
	}
	if p.scope() == "FuncDescEntry" {
		i := len(p.l.Funcs) - 1
		if n := len(p.l.Funcs[i].Rows); p.fres[i] != n {
			return fmt.Errorf("FuncDescEntry [%d] says %d FREs, lists %d", i, p.fres[i], n)
		}
	}
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// field reads one "Key: Value" line of the current block.
func (p *llvmParser) field(key, value string) error {
	l := p.l
	num := func() (int64, error) {
		text := value
		if e := reLLVMEnum.FindStringSubmatch(value); e != nil {
			text = e[2] // "AMD64EndianLittle (0x3)": the number
		}
		v, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			if u, uerr := strconv.ParseUint(text, 0, 64); uerr == nil {
				return int64(u), nil
			}
			return 0, fmt.Errorf("%s: %v", key, err)
		}
		return v, nil
	}
	v, nerr := num()
	need := func() error { return nerr }
	switch p.scope() {
	case "Header":
		switch strings.TrimSuffix(key, " (unused)") {
		case "Magic", "Auxiliary header length", "FRE subsection length", "FDE subsection offset", "FRE subsection offset", "Auxiliary header":
			return nil
		case "Version":
			if nerr != nil || v < 1 || v > 255 {
				return fmt.Errorf("version %q", value)
			}
			l.Version = sframe.Version(v)
		case "ABI":
			if nerr != nil {
				return fmt.Errorf("ABI %q", value)
			}
			if sframe.ABI(v) != l.ABI {
				return fmt.Errorf("the section's ABI is %d, the listing was to be read for %v (%d)", v, l.ABI, l.ABI)
			}
			if reLLVMEnum.FindStringSubmatch(value) == nil {
				// A bare number: an ABI LLVM has no name for, whose
				// data words it then prints as stored (an s390x CFA
				// offset undecoded).
				return fmt.Errorf("llvm-readobj does not know ABI %d: it prints the data words undecoded", v)
			}
			p.abiSeen = true
		case "CFA fixed FP offset":
			if nerr != nil {
				return nerr
			}
			l.CFAFixedFP = int8(v)
		case "CFA fixed RA offset":
			if nerr != nil {
				return nerr
			}
			l.CFAFixedRA = int8(v)
		case "Num FDEs":
			l.NumFDEs = int(v)
			return need()
		case "Num FREs":
			l.NumFREs = int(v)
			return need()
		default:
			return fmt.Errorf("unknown header field")
		}
		return nil
	case "FuncDescEntry":
		f := &l.Funcs[len(l.Funcs)-1]
		switch key {
		case "PC":
			f.Start = uint64(v)
		case "Size":
			if nerr == nil && (v < 0 || v > 0xffffffff) {
				return fmt.Errorf("size %d", v)
			}
			f.Size = uint32(v)
		case "Num FREs":
			p.fres[len(p.fres)-1] = int(v)
		case "Start FRE Offset", "Padding2":
		case "Repetitive block size", "Repetitive block size (unused)":
			if nerr == nil && (v < 0 || v > 255) {
				return fmt.Errorf("repetitive block size %d", v)
			}
			f.RepSize, f.RepSizeKnown = uint8(v), true
		default:
			return fmt.Errorf("unknown function field")
		}
		return need()
	case "PC": // an object's relocated start: PC { Relocation, Symbol Name, Start Address }
		if key == "Start Address" {
			l.Funcs[len(l.Funcs)-1].Start = uint64(v)
			return need()
		}
		return nil
	case "Info":
		f := &l.Funcs[len(l.Funcs)-1]
		e := reLLVMEnum.FindStringSubmatch(value)
		switch key {
		case "FRE Type":
		case "Raw":
			return need()
		case "FDE Type", "PC Type":
			switch {
			case e != nil && e[1] == "PCInc":
				f.PCType = sframe.PCInc
			case e != nil && e[1] == "PCMask":
				f.PCType = sframe.PCMask
			default:
				return fmt.Errorf("unknown PC type %q", value)
			}
		case "PAuth Key":
			switch {
			case e != nil && e[1] == "A":
				f.PAuthKey = sframe.PAuthKeyA
			case e != nil && e[1] == "B":
				f.PAuthKey = sframe.PAuthKeyB
			default:
				return fmt.Errorf("unknown key %q", value)
			}
		default:
			return fmt.Errorf("unknown function info field")
		}
		return nil
	case "Frame Row Entry":
		f := &l.Funcs[len(l.Funcs)-1]
		r := &f.Rows[len(f.Rows)-1]
		lr := &p.rows[len(p.rows)-1][len(f.Rows)-1]
		switch key {
		case "Start Address":
			r.StartPC = uint64(v)
		case "Return Address Signed":
			switch value {
			case "Yes":
				r.Mangled = true
			case "No":
			default:
				return fmt.Errorf("want Yes or No")
			}
			return nil
		case "Offset Size":
		case "Base Register":
			e := reLLVMEnum.FindStringSubmatch(value)
			if e == nil || e[1] != "SP" && e[1] != "FP" {
				return fmt.Errorf("unknown base register %q", value)
			}
			lr.base = e[1]
			return nil
		case "CFA Offset":
			lr.cfa, lr.hasCFA = v, true
		case "RA Offset":
			lr.ra, lr.hasRA = v, true
		case "FP Offset":
			lr.fp, lr.hasFP = v, true
		default:
			return fmt.Errorf("unknown row field")
		}
		return need()
	}
	return fmt.Errorf("field outside the blocks that have fields")
}

// llvmRules reads one row's fields as rules, once the header is known.
func llvmRules(l *Listing, f *Func, r *Row, lr *llvmRow) error {
	off := r.StartPC
	if f.PCType == sframe.PCInc {
		if r.StartPC < f.Start {
			return fmt.Errorf("row starts at %#x, before its function at %#x", r.StartPC, f.Start)
		}
		off = r.StartPC - f.Start
	}
	if off > 0xffffffff {
		return fmt.Errorf("row starts %#x bytes into its function", off)
	}
	r.Start = uint32(off)
	if !lr.hasCFA {
		// An FRE without data words. LLVM still prints the header's fixed
		// offsets (x86-64: "RA Offset: -8"), which are no data words.
		if lr.hasRA && (l.CFAFixedRA == 0 || lr.ra != int64(l.CFAFixedRA)) ||
			lr.hasFP && (l.CFAFixedFP == 0 || lr.fp != int64(l.CFAFixedFP)) {
			return fmt.Errorf("an RA or FP offset other than the header's fixed one without a CFA offset")
		}
		outermost(r)
		return nil
	}
	reg := l.ABI.SPRegister()
	switch lr.base {
	case "FP":
		reg = l.ABI.FPRegister()
	case "SP":
	default:
		return fmt.Errorf("no base register")
	}
	r.CFA = sframe.Rule{Kind: sframe.RuleExpr, Reg: reg, Offset: lr.cfa}
	slot := func(has bool, off int64, fixed int8) sframe.Rule {
		switch {
		case has:
			return sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: off, Deref: true}
		case fixed != 0:
			return sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int64(fixed), Deref: true}
		}
		return sframe.Rule{Kind: sframe.RuleSame}
	}
	r.RA = slot(lr.hasRA, lr.ra, l.CFAFixedRA)
	r.FP = slot(lr.hasFP, lr.fp, l.CFAFixedFP)
	return nil
}
