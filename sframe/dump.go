package sframe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Dump prints t in the layout of GNU objdump --sframe, from the line
// "Contents of the SFrame section NAME:" on (objdump prints the file name
// and format before it). Each section is printed as the objdump of the
// binutils release that produced that version prints it, so that a dump
// compares byte for byte with the tool's:
//
//   - version 1: binutils 2.40 (gas 2.40 emits v1). No fixed-offset
//     header lines; an RA that is not tracked prints "u", on x86-64 too.
//   - version 2: binutils 2.41-2.44. Fixed CFA offsets in the header; an
//     ABI with a fixed RA offset (x86-64) prints "f". A version 2 section
//     with FlagFuncStartPCRel (binutils 2.45, LLVM) gets the layout below,
//     as the old objdump misreads its function starts.
//   - version 3: binutils 2.46 and later. One header line per flag, "RA
//     undefined" rows, function attributes ("S" signal, "F" flexible),
//     "U" for RA padding, and the flexible notation: "reg+off" for a
//     value, "(reg+off)" for a load from a register-based address, and
//     "c+off" for a CFA-based rule, loaded or not (objdump reads the load
//     bit only when the rule names a register).
//
// The per-row notation: CFA as "sp+N" or "fp+N"; FP and RA as "c+N" /
// "c-N" (saved at CFA+N), "u" (not saved), "rN" (in register N, s390x v2),
// "f" (at the header's fixed offset); "[s]" marks a signed (mangled) RA,
// "[m]" in the column header a PCMASK function, whose STARTPC column holds
// the raw offsets.
//
// Rows carry rules rather than encodings, so where several encodings
// print differently Dump prints the one GNU as writes: an RA that is not
// tracked while the FP is prints "U" (the padding word), otherwise "u"
// (or "f" with a fixed RA offset).
//
// Two quirks of the old tools are reproduced on purpose: in the 2.40 and
// 2.44 layouts a section with both the sorted and frame-pointer flags
// prints only SFRAME_F_FRAME_POINTER, and a flag those releases do not
// know prints as nothing.
//
// The rows are decoded as Section.FDEs does; a section whose FREs are
// malformed ends the dump with that *FormatError, after the sections
// before it.
func Dump(w io.Writer, t *Table, name string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var d dumper
	for _, s := range t.Sections {
		// A malformed FRE ends the dump before the section's first line:
		// every row is checked first, then the section is printed one
		// function at a time (memory bounded by the largest function).
		if err := d.checkRows(s); err != nil {
			bw.Flush()
			return err
		}
		d.section(bw, s, name)
	}
	return bw.Flush()
}

// dumper holds the buffers a dump reuses from one function and row to the
// next, so that printing allocates nothing per row.
type dumper struct {
	rows        []Row
	line        []byte
	cfa, fp, ra []byte
}

// funcRows decodes the rows of f into the dumper's buffer.
func (d *dumper) funcRows(f *Func) (FDE, error) {
	var err error
	d.rows, err = f.appendRows(d.rows[:0])
	if err != nil {
		return FDE{}, err
	}
	return f.fde(d.rows), nil
}

// checkRows reads every row of s, as Section.FDEs would, keeping none.
func (d *dumper) checkRows(s *Section) error {
	for i := 0; i < int(s.Header.NumFDEs); i++ {
		f := s.Func(i)
		if _, err := d.funcRows(&f); err != nil {
			return err
		}
	}
	return nil
}

type dumpStyle int

const (
	style240 dumpStyle = iota // binutils 2.40, SFrame v1
	style244                  // binutils 2.41-2.44, SFrame v2
	styleV3                   // binutils 2.45+: SFrame v3, and v2 with PC-relative starts
)

// styleFor picks the objdump whose layout a section gets: the one of the
// binutils release that produces it. A version 2 section with PC-relative
// starts (erratum 1) comes from binutils 2.45 or LLVM, and only objdump
// 2.45 and later read those starts right; their layout is the version 3
// one.
func styleFor(h *Header) dumpStyle {
	switch {
	case h.Version == Version1:
		return style240
	case h.Version == Version2 && h.Flags&FlagFuncStartPCRel == 0:
		return style244
	}
	return styleV3
}

func (d *dumper) section(w *bufio.Writer, s *Section, name string) {
	h := &s.Header
	st := styleFor(h)
	fmt.Fprintf(w, "Contents of the SFrame section %s:", name)
	w.WriteString("\n  Header :\n\n")
	fmt.Fprintf(w, "    Version: %s\n", versionName(h.Version, st))
	dumpFlags(w, h, st)
	if st != style240 {
		if h.CFAFixedFP != 0 {
			fmt.Fprintf(w, "    CFA fixed FP offset: %d\n", h.CFAFixedFP)
		}
		if h.CFAFixedRA != 0 {
			fmt.Fprintf(w, "    CFA fixed RA offset: %d\n", h.CFAFixedRA)
		}
	}
	fmt.Fprintf(w, "    Num FDEs: %d\n", h.NumFDEs)
	fmt.Fprintf(w, "    Num FREs: %d\n", h.NumFREs)
	w.WriteString("\n  Function Index :\n")
	for i := 0; i < int(h.NumFDEs); i++ {
		f := s.Func(i)
		fde, _ := d.funcRows(&f) // checked by checkRows
		d.function(w, h, i, &fde, st)
		w.WriteString("\n")
	}
}

func versionName(v Version, st dumpStyle) string {
	known := Version1
	switch st {
	case style244:
		known = Version2
	case styleV3:
		known = Version3
	}
	if v < 1 || v > known {
		return "(null)" // what glibc prints for the tools' NULL name
	}
	return fmt.Sprintf("SFRAME_VERSION_%d", v)
}

func dumpFlags(w *bufio.Writer, h *Header, st dumpStyle) {
	f := h.Flags
	if f == 0 {
		w.WriteString("    Flags: NONE\n")
		return
	}
	if st != styleV3 {
		// The old tools overwrite the buffer instead of appending.
		s := ""
		if f&FlagFDESorted != 0 {
			s = "SFRAME_F_FDE_SORTED"
		}
		if f&FlagFramePointer != 0 {
			s = "SFRAME_F_FRAME_POINTER"
		}
		fmt.Fprintf(w, "    Flags: %s\n", s)
		return
	}
	prefix := "Flags: "
	emit := func(bit Flags, name string) {
		if f&bit == 0 {
			return
		}
		f &^= bit
		comma := ""
		if f != 0 {
			comma = ","
		}
		fmt.Fprintf(w, "%11s%s%s\n", prefix, name, comma)
		prefix = " "
	}
	emit(FlagFDESorted, "SFRAME_F_FDE_SORTED")
	if h.Version == Version2 {
		emit(FlagFramePointer, "SFRAME_F_FRAME_POINTER")
	}
	emit(FlagFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL")
	if f != 0 {
		fmt.Fprintf(w, "%11s%d\n", prefix, f)
	}
}

// Column headers of a function, as objdump pads them.
var (
	colsInc  = fmt.Sprintf("\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", "   ", "CFA", "FP", "RA")
	colsMask = fmt.Sprintf("\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", "[m]", "CFA", "FP", "RA")
)

func (d *dumper) function(w *bufio.Writer, h *Header, idx int, fde *FDE, st dumpStyle) {
	abi := h.ABI
	b := append(d.line[:0], "\n    func idx ["...)
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, "]: pc = 0x"...)
	b = strconv.AppendUint(b, fde.Start, 16)
	b = append(b, ", size = "...)
	b = strconv.AppendUint(b, uint64(fde.Size), 10)
	b = append(b, " bytes"...)
	if st == styleV3 {
		attrs := ""
		if fde.Signal {
			attrs += "S"
		}
		if fde.Type == FDETypeFlex {
			attrs += "F"
		}
		if attrs != "" {
			b = append(b, ", attr = "...)
			b = strconv.AppendQuote(b, attrs)
		}
	}
	if abi.IsAArch64() && fde.PAuthKey == PAuthKeyB {
		b = append(b, ", pauth = B key"...)
	}
	mask := fde.PCType == PCMask
	if mask {
		b = append(b, colsMask...)
	} else {
		b = append(b, colsInc...)
	}
	for i := range fde.Rows {
		r := &fde.Rows[i]
		pc := fde.Start + uint64(r.Start)
		if mask {
			pc = uint64(r.Start)
		}
		b = append(b, "\n    "...)
		b = appendHex16(b, pc)
		if r.RA.Kind == RuleUndefined && st == styleV3 {
			b = append(b, "  RA undefined"...)
			continue
		}
		d.notation(h, fde, r, st)
		if r.MangledRA {
			d.ra = append(d.ra, "[s]"...)
		} else {
			d.ra = append(d.ra, "   "...)
		}
		b = append(b, "  "...)
		b = appendPadded(b, d.cfa, 10)
		b = appendPadded(b, d.fp, 10)
		b = appendPadded(b, d.ra, 13)
		if len(b) > 32<<10 {
			w.Write(b)
			b = b[:0]
		}
	}
	w.Write(b)
	d.line = b
}

// appendHex16 appends v as 16 zero-padded hex digits (%016x).
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	var buf [16]byte
	for i := 15; i >= 0; i-- {
		buf[i] = digits[v&0xf]
		v >>= 4
	}
	return append(b, buf[:]...)
}

// appendPadded appends s left-aligned in a field of width bytes (%-Ns).
func appendPadded(b, s []byte, width int) []byte {
	b = append(b, s...)
	for n := len(s); n < width; n++ {
		b = append(b, ' ')
	}
	return b
}

// rowNotation gives the CFA, FP and RA columns of a row (RA without its
// mangled marker).
func rowNotation(h *Header, fde *FDE, r *Row, st dumpStyle) (cfa, fp, ra string) {
	var d dumper
	d.notation(h, fde, r, st)
	return string(d.cfa), string(d.fp), string(d.ra)
}

// notation fills d.cfa, d.fp and d.ra with the columns of a row (RA
// without its mangled marker).
func (d *dumper) notation(h *Header, fde *FDE, r *Row, st dumpStyle) {
	abi := h.ABI
	cfa, fp, ra := d.cfa[:0], d.fp[:0], d.ra[:0]
	defer func() { d.cfa, d.fp, d.ra = cfa, fp, ra }()
	fpTracked := r.FP.Kind == RuleExpr
	if fde.Type == FDETypeFlex && st == styleV3 {
		cfa = appendFlexNotation(cfa, abi, r.CFA)
		if fpTracked {
			fp = appendFlexNotation(fp, abi, r.FP)
		} else {
			fp = append(fp, 'u')
		}
		switch {
		case raAtDefault(h, r.RA):
			switch {
			case fpTracked && !fpAtDefault(h, r.FP):
				ra = append(ra, 'U')
			case h.CFAFixedRA != 0:
				ra = append(ra, 'f')
			default:
				ra = append(ra, 'u')
			}
		case r.RA.Kind == RuleExpr:
			ra = appendFlexNotation(ra, abi, r.RA)
		default:
			ra = append(ra, 'u')
		}
		return
	}

	if r.RA.Kind == RuleUndefined {
		// The pre-v3 tools know no outermost FREs: an FRE without data
		// words reads as base register id 0 (fp), and its missing CFA
		// offset prints as -1 (objdump 2.40 and 2.44, measured).
		cfa = append(cfa, "fp+-1"...)
	} else {
		if r.CFA.Reg == abi.FPRegister() {
			cfa = append(cfa, "fp+"...)
		} else {
			cfa = append(cfa, "sp+"...)
		}
		cfa = strconv.AppendInt(cfa, r.CFA.Offset, 10)
	}
	fp = appendDefaultNotation(fp, r.FP)

	switch {
	case h.CFAFixedRA != 0 && st == style240:
		ra = append(ra, 'u')
	case h.CFAFixedRA != 0:
		ra = append(ra, 'f')
	case r.RA.Kind == RuleSame && fpTracked && h.CFAFixedFP == 0 && st == styleV3:
		ra = append(ra, 'U') // the RA padding word: the FP has a word of its own after it
	default:
		ra = appendDefaultNotation(ra, r.RA)
	}
}

// raAtDefault and fpAtDefault report whether an RA or FP rule is what
// holds when no data word is stored for it: the header's fixed slot, or
// still where it was (RuleSame).
func raAtDefault(h *Header, ra Rule) bool { return atDefault(ra, h.CFAFixedRA) }
func fpAtDefault(h *Header, fp Rule) bool { return atDefault(fp, h.CFAFixedFP) }

// appendDefaultNotation appends an FP or RA rule of a default FDE.
func appendDefaultNotation(b []byte, r Rule) []byte {
	if r.Kind != RuleExpr {
		return append(b, 'u')
	}
	if r.Reg == RegCFA && r.Deref {
		b = append(b, 'c')
		return appendSigned(b, r.Offset)
	}
	if r.Offset == 0 && !r.Deref {
		b = append(b, 'r') // s390x v2: saved in a register
		return strconv.AppendInt(b, int64(r.Reg), 10)
	}
	return appendFlexNotation(b, 0, r)
}

// appendSigned appends off with its sign (%+d).
func appendSigned(b []byte, off int64) []byte {
	if off >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, off, 10)
}

// appendFlexNotation appends a rule as reg+off or (reg+off).
func appendFlexNotation(b []byte, abi ABI, r Rule) []byte {
	// objdump reads the deref bit only when the rule names a register.
	paren := r.Deref && r.Reg != RegCFA
	if paren {
		b = append(b, '(')
	}
	switch {
	case r.Reg == RegCFA:
		b = append(b, 'c')
	case abi != 0 && r.Reg == abi.SPRegister():
		b = append(b, "sp"...)
	case abi != 0 && r.Reg == abi.FPRegister():
		b = append(b, "fp"...)
	default:
		b = append(b, 'r')
		b = strconv.AppendInt(b, int64(r.Reg), 10)
	}
	b = appendSigned(b, r.Offset)
	if paren {
		b = append(b, ')')
	}
	return b
}

// DumpJSON prints t as one JSON object with the content of Dump. Field
// names are stable:
//
//	{"sections": [{
//	   "offset": byte offset of the section in the decoded buffer,
//	   "base": "0x…" virtual address of the section,
//	   "version": 1|2|3, "flags": ["SFRAME_F_FDE_SORTED", …],
//	   "abi": "x86-64"|"aarch64"|"aarch64_be"|"s390x",
//	   "cfa_fixed_fp_offset": n, "cfa_fixed_ra_offset": n,
//	   "num_fdes": n, "num_fres": n,
//	   "functions": [{
//	     "index": n, "offset": byte offset of the FDE,
//	     "start": "0x…", "end": "0x…", "size": n,
//	     "pc_type": "inc"|"mask", "rep_size": n,
//	     "type": "default"|"flex", "pauth_key": "A"|"B", "signal": bool,
//	     "rows": [{
//	       "start_pc": "0x…" (as objdump's STARTPC column),
//	       "offset": n (from the function start),
//	       "cfa"|"fp"|"ra": {"rule": "undefined"|"same"|"expr",
//	                         "reg": DWARF number, -1 for the CFA,
//	                         "offset": n, "deref": bool,
//	                         "text": the column as objdump 2.46+ prints it},
//	       "ra_mangled": bool}]}]}]}
//
// "reg", "offset" and "deref" appear for "expr" rules only; "pauth_key"
// for AArch64 only. "text" uses the version 3 notation for every version
// ("f" for x86-64's fixed RA, "U" for RA padding, "(reg+off)" in flexible
// FDEs) and leaves the "[s]" marker to "ra_mangled"; the rows of an
// outermost frame read "u" in every column. Addresses are hex strings so
// that 64-bit values survive JSON readers that use doubles. Malformed FREs
// end it with a *FormatError, as for Dump; nothing is written then.
//
// The document is written as it is read, one function at a time, so that
// memory stays bounded by the largest function whatever the section's
// size; every row is checked first, so that a malformed section still
// writes nothing.
func DumpJSON(w io.Writer, t *Table) error {
	var d dumper
	for _, s := range t.Sections {
		if err := d.checkRows(s); err != nil {
			return err
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if len(t.Sections) == 0 {
		bw.WriteString("{\n  \"sections\": []\n}\n")
		return bw.Flush()
	}
	bw.WriteString("{\n  \"sections\": [")
	for si, s := range t.Sections {
		if si > 0 {
			bw.WriteByte(',')
		}
		h := &s.Header
		js := jsonSection{
			Offset:     s.Offset,
			Base:       hexAddr(s.Base),
			Version:    int(h.Version),
			Flags:      flagNames(h.Flags),
			ABI:        h.ABI.Name(),
			CFAFixedFP: int(h.CFAFixedFP),
			CFAFixedRA: int(h.CFAFixedRA),
			NumFDEs:    h.NumFDEs,
			NumFREs:    h.NumFREs,
			Functions:  []jsonFunction{},
		}
		head, err := json.MarshalIndent(js, "    ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString("\n    ")
		if h.NumFDEs == 0 {
			bw.Write(head)
			continue
		}
		// The functions are the last field: stream them into its "[]".
		i := bytes.LastIndex(head, []byte("[]"))
		bw.Write(head[:i+1])
		for fi := 0; fi < int(h.NumFDEs); fi++ {
			f := s.Func(fi)
			fde, _ := d.funcRows(&f) // checked above
			if fi > 0 {
				bw.WriteByte(',')
			}
			d.line = d.jsonFunction(d.line[:0], h, fi, &fde)
			bw.Write(d.line)
		}
		bw.WriteString("\n      ]\n    }")
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}

// jsonFunction appends one function as encoding/json would indent it at
// its depth in the document (jsonOfFunction gives the same as a value).
func (d *dumper) jsonFunction(b []byte, h *Header, idx int, fde *FDE) []byte {
	const in = "\n          " // the function's fields
	b = append(b, "\n        {"+in+"\"index\": "...)
	b = strconv.AppendInt(b, int64(idx), 10)
	b = append(b, ","+in+"\"offset\": "...)
	b = strconv.AppendInt(b, int64(fde.Offset), 10)
	b = append(b, ","+in+"\"start\": \"0x"...)
	b = strconv.AppendUint(b, fde.Start, 16)
	b = append(b, "\","+in+"\"end\": \"0x"...)
	b = strconv.AppendUint(b, fde.End(), 16)
	b = append(b, "\","+in+"\"size\": "...)
	b = strconv.AppendUint(b, uint64(fde.Size), 10)
	if fde.PCType == PCMask {
		b = append(b, ","+in+"\"pc_type\": \"mask\""...)
	} else {
		b = append(b, ","+in+"\"pc_type\": \"inc\""...)
	}
	b = append(b, ","+in+"\"rep_size\": "...)
	b = strconv.AppendInt(b, int64(fde.RepSize), 10)
	if fde.Type == FDETypeFlex {
		b = append(b, ","+in+"\"type\": \"flex\""...)
	} else {
		b = append(b, ","+in+"\"type\": \"default\""...)
	}
	if h.ABI.IsAArch64() {
		if fde.PAuthKey == PAuthKeyB {
			b = append(b, ","+in+"\"pauth_key\": \"B\""...)
		} else {
			b = append(b, ","+in+"\"pauth_key\": \"A\""...)
		}
	}
	b = append(b, ","+in+"\"signal\": "...)
	b = strconv.AppendBool(b, fde.Signal)
	if len(fde.Rows) == 0 {
		return append(b, ","+in+"\"rows\": []\n        }"...)
	}
	b = append(b, ","+in+"\"rows\": ["...)
	const rf = "\n              " // a row's fields
	for j := range fde.Rows {
		r := &fde.Rows[j]
		pc := fde.Start + uint64(r.Start)
		if fde.PCType == PCMask {
			pc = uint64(r.Start)
		}
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n            {"+rf+"\"start_pc\": \"0x"...)
		b = strconv.AppendUint(b, pc, 16)
		b = append(b, "\","+rf+"\"offset\": "...)
		b = strconv.AppendUint(b, uint64(r.Start), 10)
		if r.RA.Kind == RuleUndefined {
			d.cfa, d.fp, d.ra = append(d.cfa[:0], 'u'), append(d.fp[:0], 'u'), append(d.ra[:0], 'u')
		} else {
			d.notation(h, fde, r, styleV3)
		}
		b = append(b, ","+rf+"\"cfa\": "...)
		b = appendJSONRule(b, r.CFA, d.cfa)
		b = append(b, ","+rf+"\"fp\": "...)
		b = appendJSONRule(b, r.FP, d.fp)
		b = append(b, ","+rf+"\"ra\": "...)
		b = appendJSONRule(b, r.RA, d.ra)
		b = append(b, ","+rf+"\"ra_mangled\": "...)
		b = strconv.AppendBool(b, r.MangledRA)
		b = append(b, "\n            }"...)
	}
	return append(b, "\n          ]\n        }"...)
}

// appendJSONRule appends a rule object (jsonOfRule's, indented).
func appendJSONRule(b []byte, r Rule, text []byte) []byte {
	const f = "\n                "
	b = append(b, "{"+f+"\"rule\": "...)
	switch r.Kind {
	case RuleUndefined:
		b = append(b, "\"undefined\""...)
	case RuleSame:
		b = append(b, "\"same\""...)
	default:
		b = append(b, "\"expr\","+f+"\"reg\": "...)
		b = strconv.AppendInt(b, int64(r.Reg), 10)
		b = append(b, ","+f+"\"offset\": "...)
		b = strconv.AppendInt(b, r.Offset, 10)
		b = append(b, ","+f+"\"deref\": "...)
		b = strconv.AppendBool(b, r.Deref)
	}
	b = append(b, ","+f+"\"text\": \""...)
	b = append(b, text...) // ASCII letters, digits, signs and parentheses only
	return append(b, "\"\n              }"...)
}

type jsonDump struct {
	Sections []jsonSection `json:"sections"`
}

type jsonSection struct {
	Offset     int            `json:"offset"`
	Base       string         `json:"base"`
	Version    int            `json:"version"`
	Flags      []string       `json:"flags"`
	ABI        string         `json:"abi"`
	CFAFixedFP int            `json:"cfa_fixed_fp_offset"`
	CFAFixedRA int            `json:"cfa_fixed_ra_offset"`
	NumFDEs    uint32         `json:"num_fdes"`
	NumFREs    uint32         `json:"num_fres"`
	Functions  []jsonFunction `json:"functions"`
}

type jsonFunction struct {
	Index    int       `json:"index"`
	Offset   int       `json:"offset"`
	Start    string    `json:"start"`
	End      string    `json:"end"`
	Size     uint32    `json:"size"`
	PCType   string    `json:"pc_type"`
	RepSize  int       `json:"rep_size"`
	Type     string    `json:"type"`
	PAuthKey string    `json:"pauth_key,omitempty"`
	Signal   bool      `json:"signal"`
	Rows     []jsonRow `json:"rows"`
}

type jsonRow struct {
	StartPC   string   `json:"start_pc"`
	Offset    uint32   `json:"offset"`
	CFA       jsonRule `json:"cfa"`
	FP        jsonRule `json:"fp"`
	RA        jsonRule `json:"ra"`
	MangledRA bool     `json:"ra_mangled"`
}

type jsonRule struct {
	Rule   string `json:"rule"`
	Reg    *int   `json:"reg,omitempty"`
	Offset *int64 `json:"offset,omitempty"`
	Deref  *bool  `json:"deref,omitempty"`
	Text   string `json:"text"`
}

func hexAddr(v uint64) string { return fmt.Sprintf("%#x", v) }

func flagNames(f Flags) []string {
	names := []string{}
	for _, b := range []struct {
		bit  Flags
		name string
	}{
		{FlagFDESorted, "SFRAME_F_FDE_SORTED"},
		{FlagFramePointer, "SFRAME_F_FRAME_POINTER"},
		{FlagFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL"},
	} {
		if f&b.bit != 0 {
			names = append(names, b.name)
			f &^= b.bit
		}
	}
	if f != 0 {
		names = append(names, fmt.Sprintf("0x%x", uint8(f)))
	}
	return names
}

// jsonOfFunction is one function of DumpJSON's document as a value (the
// tests read the document back into these types).
func jsonOfFunction(h *Header, i int, fde *FDE) jsonFunction {
	jf := jsonFunction{
		Index:   i,
		Offset:  fde.Offset,
		Start:   hexAddr(fde.Start),
		End:     hexAddr(fde.End()),
		Size:    fde.Size,
		PCType:  "inc",
		RepSize: int(fde.RepSize),
		Type:    "default",
		Signal:  fde.Signal,
		Rows:    []jsonRow{},
	}
	if fde.PCType == PCMask {
		jf.PCType = "mask"
	}
	if fde.Type == FDETypeFlex {
		jf.Type = "flex"
	}
	if h.ABI.IsAArch64() {
		jf.PAuthKey = "A"
		if fde.PAuthKey == PAuthKeyB {
			jf.PAuthKey = "B"
		}
	}
	for j := range fde.Rows {
		r := &fde.Rows[j]
		pc := fde.Start + uint64(r.Start)
		if fde.PCType == PCMask {
			pc = uint64(r.Start)
		}
		cfa, fp, ra := rowNotation(h, fde, r, styleV3)
		if r.RA.Kind == RuleUndefined {
			cfa, fp, ra = "u", "u", "u"
		}
		jf.Rows = append(jf.Rows, jsonRow{
			StartPC:   hexAddr(pc),
			Offset:    r.Start,
			CFA:       jsonOfRule(r.CFA, cfa),
			FP:        jsonOfRule(r.FP, fp),
			RA:        jsonOfRule(r.RA, ra),
			MangledRA: r.MangledRA,
		})
	}
	return jf
}

func jsonOfRule(r Rule, text string) jsonRule {
	jr := jsonRule{Text: text}
	switch r.Kind {
	case RuleUndefined:
		jr.Rule = "undefined"
	case RuleSame:
		jr.Rule = "same"
	default:
		jr.Rule = "expr"
		reg, off, deref := r.Reg, r.Offset, r.Deref
		jr.Reg, jr.Offset, jr.Deref = &reg, &off, &deref
	}
	return jr
}
