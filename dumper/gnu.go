package dumper

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sfconform/sfconform/sframe"
)

// ParseGNU reads what GNU objdump --sframe or readelf --sframe printed
// for one SFrame section (both print the same text), in the layout of
// any binutils release from 2.40 to 2.47, and reads each row's columns as
// rules for abi (the notation names no registers by number for the stack
// and frame pointers: "sp" and "fp" are abi's).
//
// Lines before "Contents of the SFrame section" (objdump's file name and
// format) are skipped. Every line after it must be one the layouts print;
// anything else is an error naming the line, as are listings whose
// function and row counts differ from the header's. A release that
// prints only the header of a section it does not know ("No further
// information can be displayed") gives an error wrapping ErrNoListing.
//
// The notation, as the releases print it:
//
//	sp+N fp+N     CFA column: the stack or frame pointer plus N (an s390x
//	              CFA offset already decoded); N may print as "+-8"
//	c+N c-N       FP and RA columns: saved at CFA+N
//	u             not saved: still in its register; or at the header's
//	              fixed offset when there is one (the x86-64 RA)
//	U             RA padding (an FP saved without the RA): as u
//	f             RA at the header's fixed offset
//	rN            held in DWARF register N (s390x, version 2)
//	rN+M sp+M ... flexible FDEs (attribute F): register N plus M;
//	(rN+M)        the same, loaded from that address. "c+N" in a flexible
//	              row is read as saved at CFA+N: objdump prints the load
//	              bit of CFA-based rules nowhere
//	[s]           after the RA column: the saved RA is signed (AArch64)
//	RA undefined  the outermost frame (version 3 layout)
//	STARTPC[m]    a PCMASK function: the STARTPC column holds offsets into
//	              the repeated block, whose size is not printed
//
// Releases before 2.44 print no fixed offsets in the header; their
// listings are read with the offsets GNU as writes for abi (x86-64's RA
// at CFA-8), which is what their "u" stands for.
func ParseGNU(text string, abi sframe.ABI) (*Listing, error) {
	p := gnuParser{l: &Listing{ABI: abi}}
	if err := p.parse(text); err != nil {
		return nil, err
	}
	l := p.l
	if !p.fixedLines && l.Version == sframe.Version1 {
		l.CFAFixedFP, l.CFAFixedRA = sframe.DefaultFixedOffsets(abi)
	} else {
		l.FixedPrinted = true
	}
	if err := l.checkCounts(); err != nil {
		return nil, err
	}
	for i := range l.Funcs {
		f := &l.Funcs[i]
		for j := range f.Rows {
			if err := gnuRules(l, f, &f.Rows[j]); err != nil {
				return nil, fmt.Errorf("%w: func idx [%d] row %d (STARTPC %016x): %v", ErrSyntax, f.Index, j, f.Rows[j].StartPC, err)
			}
		}
	}
	return l, nil
}

type gnuParser struct {
	l          *Listing
	fixedLines bool // a "CFA fixed ... offset" line was printed
	started    bool // "Contents of the SFrame section" seen
	inFlags    bool // continuation lines of a version 3 flags list
	cur        *Func
}

var (
	reGNUContents = regexp.MustCompile(`^Contents of the SFrame section (.*):$`)
	reGNUFunc     = regexp.MustCompile(`^    func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes(.*)$`)
	reGNURow      = regexp.MustCompile(`^    ([0-9a-f]{16})  (.*)$`)
	reGNUColHdr   = regexp.MustCompile(`^    STARTPC(\[m\])? +CFA +FP +RA *$`)
	reGNUFlagName = regexp.MustCompile(`^(SFRAME_F_[A-Z_]+|\d+),?$`)
	// One column value. Values wider than their column run into the next
	// one ("sp+1048584u"), so columns are read as tokens, not by position.
	reGNUColumn = regexp.MustCompile(`\(?(?:sp|fp|c|r\d+)(?:\+-?\d+|-\d+)\)?|r\d+|[uUf]`)
	reGNUValue  = regexp.MustCompile(`^(\()?(sp|fp|c|r\d+)(\+-?\d+|-\d+)(\))?$`)
)

func (p *gnuParser) parse(text string) error {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if err := p.line(line); err != nil {
			return &LineError{Line: n, Text: line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if !p.started {
		return fmt.Errorf("%w: no \"Contents of the SFrame section\" line", ErrNoListing)
	}
	if p.l.Version == 0 {
		return fmt.Errorf("%w: no Version line", ErrSyntax)
	}
	return nil
}

func (p *gnuParser) line(line string) error {
	l := p.l
	if m := reGNUContents.FindStringSubmatch(line); m != nil {
		if p.started {
			return fmt.Errorf("a second SFrame section (%s) in one listing", m[1])
		}
		p.started = true
		return nil
	}
	if !p.started {
		return nil // objdump's "FILE:     file format ..." preamble
	}
	trimmed := strings.TrimSpace(line)
	if p.inFlags {
		if m := reGNUFlagName.FindStringSubmatch(trimmed); m != nil && strings.HasPrefix(line, "           ") {
			l.Flags = append(l.Flags, m[1])
			return nil
		}
		p.inFlags = false
	}
	number := func(prefix string, dst *int) error {
		v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(trimmed, prefix)))
		if err != nil {
			return err
		}
		*dst = v
		return nil
	}
	fixed := func(prefix string, dst *int8) error {
		v, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(trimmed, prefix)), 10, 8)
		if err != nil {
			return err
		}
		*dst, p.fixedLines = int8(v), true
		return nil
	}
	switch {
	case trimmed == "", trimmed == "Header :", trimmed == "Function Index :":
		return nil
	case strings.HasPrefix(trimmed, "No further information can be displayed."):
		return fmt.Errorf("%w: the dumper printed only the header: %s", ErrNoListing, trimmed)
	case strings.HasPrefix(trimmed, "Version: "):
		name := strings.TrimPrefix(trimmed, "Version: ")
		v, err := strconv.Atoi(strings.TrimPrefix(name, "SFRAME_VERSION_"))
		if !strings.HasPrefix(name, "SFRAME_VERSION_") || err != nil || v < 1 || v > 255 {
			return fmt.Errorf("a version the dumper has no name for (%q)", name)
		}
		l.Version = sframe.Version(v)
		return nil
	case strings.HasPrefix(trimmed, "Flags:"):
		name := strings.TrimSpace(strings.TrimPrefix(trimmed, "Flags:"))
		switch name {
		case "NONE":
		case "":
			// binutils 2.40-2.44 print a flag they do not know as nothing.
			l.Flags = append(l.Flags, "")
		default:
			m := reGNUFlagName.FindStringSubmatch(name)
			if m == nil {
				return fmt.Errorf("unknown flag %q", name)
			}
			l.Flags = append(l.Flags, m[1])
			p.inFlags = strings.HasSuffix(name, ",")
		}
		return nil
	case strings.HasPrefix(trimmed, "CFA fixed FP offset:"):
		return fixed("CFA fixed FP offset:", &l.CFAFixedFP)
	case strings.HasPrefix(trimmed, "CFA fixed RA offset:"):
		return fixed("CFA fixed RA offset:", &l.CFAFixedRA)
	case strings.HasPrefix(trimmed, "Num FDEs:"):
		return number("Num FDEs:", &l.NumFDEs)
	case strings.HasPrefix(trimmed, "Num FREs:"):
		return number("Num FREs:", &l.NumFREs)
	}
	if m := reGNUFunc.FindStringSubmatch(line); m != nil {
		return p.function(m)
	}
	if m := reGNUColHdr.FindStringSubmatch(line); m != nil {
		if p.cur == nil || p.cur.PCType == sframe.PCMask && m[1] == "" {
			return fmt.Errorf("column header without its function")
		}
		if m[1] != "" {
			p.cur.PCType = sframe.PCMask
		}
		return nil
	}
	if m := reGNURow.FindStringSubmatch(line); m != nil {
		return p.row(m)
	}
	return fmt.Errorf("not a line of a GNU SFrame listing")
}

func (p *gnuParser) function(m []string) error {
	l := p.l
	idx, _ := strconv.Atoi(m[1])
	if idx != len(l.Funcs) {
		return fmt.Errorf("function index %d out of sequence (want %d)", idx, len(l.Funcs))
	}
	start, err := strconv.ParseUint(m[2], 0, 64)
	if err != nil {
		return fmt.Errorf("pc: %v", err)
	}
	size, err := strconv.ParseUint(m[3], 10, 32)
	if err != nil {
		return fmt.Errorf("size: %v", err)
	}
	f := Func{Index: idx, Start: start, Size: uint32(size)}
	for _, part := range strings.Split(m[4], ",") {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case part == "pauth = B key":
			f.PAuthKey = sframe.PAuthKeyB
		case strings.HasPrefix(part, "attr = "):
			a, err := strconv.Unquote(strings.TrimPrefix(part, "attr = "))
			if err != nil {
				return fmt.Errorf("attributes %s: %v", part, err)
			}
			for _, c := range a {
				switch c {
				case 'S':
					f.Signal = true
				case 'F':
					f.Type = sframe.FDETypeFlex
				default:
					return fmt.Errorf("unknown function attribute %q", c)
				}
			}
			f.Attrs = a
		default:
			return fmt.Errorf("unknown function attribute %q", part)
		}
	}
	l.Funcs = append(l.Funcs, f)
	p.cur = &l.Funcs[len(l.Funcs)-1]
	return nil
}

func (p *gnuParser) row(m []string) error {
	f := p.cur
	if f == nil {
		return fmt.Errorf("row before any function")
	}
	pc, err := strconv.ParseUint(m[1], 16, 64)
	if err != nil {
		return fmt.Errorf("STARTPC: %v", err)
	}
	r := Row{StartPC: pc}
	off := pc
	if f.PCType == sframe.PCInc {
		if pc < f.Start {
			return fmt.Errorf("row starts at %#x, before its function at %#x", pc, f.Start)
		}
		off = pc - f.Start
	}
	if off > 0xffffffff {
		return fmt.Errorf("row starts %#x bytes into its function", off)
	}
	r.Start = uint32(off)
	rest := strings.TrimSpace(m[2])
	if rest == "RA undefined" {
		outermost(&r)
	} else {
		if s, ok := strings.CutSuffix(rest, "[s]"); ok {
			r.Mangled, rest = true, s
		}
		cols := reGNUColumn.FindAllString(rest, -1)
		if len(cols) != 3 || strings.Join(cols, "") != strings.Join(strings.Fields(rest), "") {
			return fmt.Errorf("want three columns CFA FP RA, read %q", cols)
		}
		r.Text = [3]string{cols[0], cols[1], cols[2]}
	}
	f.Rows = append(f.Rows, r)
	return nil
}

// gnuRules reads a row's columns as rules (see ParseGNU).
func gnuRules(l *Listing, f *Func, r *Row) error {
	if r.Outermost {
		return nil
	}
	var err error
	if r.CFA, err = gnuCFA(l.ABI, r.Text[0], f.Type == sframe.FDETypeFlex); err != nil {
		return fmt.Errorf("CFA column: %v", err)
	}
	if r.FP, err = gnuSlot(l.ABI, r.Text[1], l.CFAFixedFP, false); err != nil {
		return fmt.Errorf("FP column: %v", err)
	}
	if r.RA, err = gnuSlot(l.ABI, r.Text[2], l.CFAFixedRA, true); err != nil {
		return fmt.Errorf("RA column: %v", err)
	}
	return nil
}

// gnuValue reads "reg±N" or "(reg±N)"; reg "c" is the CFA.
func gnuValue(abi sframe.ABI, text string) (sframe.Rule, error) {
	m := reGNUValue.FindStringSubmatch(text)
	if m == nil || (m[1] == "") != (m[4] == "") {
		return sframe.Rule{}, fmt.Errorf("unknown notation %q", text)
	}
	off, err := strconv.ParseInt(strings.Replace(m[3], "+-", "-", 1), 10, 64)
	if err != nil {
		return sframe.Rule{}, fmt.Errorf("offset in %q: %v", text, err)
	}
	r := sframe.Rule{Kind: sframe.RuleExpr, Offset: off, Deref: m[1] != ""}
	switch m[2] {
	case "sp":
		r.Reg = abi.SPRegister()
	case "fp":
		r.Reg = abi.FPRegister()
	case "c":
		r.Reg, r.Deref = sframe.RegCFA, true
	default:
		r.Reg, err = strconv.Atoi(m[2][1:])
		if err != nil {
			return sframe.Rule{}, fmt.Errorf("register in %q: %v", text, err)
		}
	}
	return r, nil
}

func gnuCFA(abi sframe.ABI, text string, flex bool) (sframe.Rule, error) {
	r, err := gnuValue(abi, text)
	if err != nil {
		return r, err
	}
	switch {
	case r.Reg == sframe.RegCFA:
		return r, fmt.Errorf("a CFA based on the CFA (%q)", text)
	case !flex && (r.Deref || r.Reg != abi.SPRegister() && r.Reg != abi.FPRegister()):
		return r, fmt.Errorf("%q in a default FDE, which bases the CFA on sp or fp", text)
	}
	return r, nil
}

// gnuSlot reads an FP or RA column; fixed is the header's fixed offset.
func gnuSlot(abi sframe.ABI, text string, fixed int8, ra bool) (sframe.Rule, error) {
	atFixed := sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: int64(fixed), Deref: true}
	switch text {
	case "u":
		if fixed != 0 {
			return atFixed, nil
		}
		return sframe.Rule{Kind: sframe.RuleSame}, nil
	case "U", "f":
		if !ra {
			return sframe.Rule{}, fmt.Errorf("%q outside the RA column", text)
		}
		if fixed != 0 {
			return atFixed, nil
		}
		if text == "f" {
			return sframe.Rule{}, fmt.Errorf("\"f\" (the fixed RA offset) in a section without one")
		}
		return sframe.Rule{Kind: sframe.RuleSame}, nil
	}
	if n, ok := strings.CutPrefix(text, "r"); ok && !strings.ContainsAny(n, "+-") {
		reg, err := strconv.Atoi(n)
		if err != nil {
			return sframe.Rule{}, fmt.Errorf("register %q: %v", text, err)
		}
		return sframe.Rule{Kind: sframe.RuleExpr, Reg: reg}, nil
	}
	return gnuValue(abi, text)
}
