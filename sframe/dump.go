package sframe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
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
	bw := bufio.NewWriter(w)
	for _, s := range t.Sections {
		fdes, err := s.FDEs()
		if err != nil {
			bw.Flush()
			return err
		}
		dumpSection(bw, &s.Header, fdes, name)
	}
	return bw.Flush()
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

func dumpSection(w *bufio.Writer, h *Header, fdes []FDE, name string) {
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
	for i := range fdes {
		dumpFunction(w, h, i, &fdes[i], st)
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

func isAArch64(a ABI) bool { return a == ABIAArch64LE || a == ABIAArch64BE }

func dumpFunction(w *bufio.Writer, h *Header, idx int, fde *FDE, st dumpStyle) {
	abi := h.ABI
	fmt.Fprintf(w, "\n    func idx [%d]: pc = %#x, size = %d bytes", idx, fde.Start, fde.Size)
	if st == styleV3 {
		attrs := ""
		if fde.Signal {
			attrs += "S"
		}
		if fde.Type == FDETypeFlex {
			attrs += "F"
		}
		if attrs != "" {
			fmt.Fprintf(w, ", attr = %q", attrs)
		}
	}
	if isAArch64(abi) && fde.PAuthKey == PAuthKeyB {
		w.WriteString(", pauth = B key")
	}
	mask := fde.PCType == PCMask
	marker := "   "
	if mask {
		marker = "[m]"
	}
	fmt.Fprintf(w, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", marker, "CFA", "FP", "RA")
	for i := range fde.Rows {
		r := &fde.Rows[i]
		pc := fde.Start + uint64(r.Start)
		if mask {
			pc = uint64(r.Start)
		}
		fmt.Fprintf(w, "\n    %016x", pc)
		if r.RA.Kind == RuleUndefined && st == styleV3 {
			w.WriteString("  RA undefined")
			continue
		}
		cfa, fp, ra := rowNotation(h, fde, r, st)
		if r.MangledRA {
			ra += "[s]"
		} else {
			ra += "   "
		}
		fmt.Fprintf(w, "  %-10s%-10s%-13s", cfa, fp, ra)
	}
}

// rowNotation gives the CFA, FP and RA columns of a row (RA without its
// mangled marker).
func rowNotation(h *Header, fde *FDE, r *Row, st dumpStyle) (cfa, fp, ra string) {
	abi := h.ABI
	fpTracked := r.FP.Kind == RuleExpr
	if fde.Type == FDETypeFlex && st == styleV3 {
		cfa = flexNotation(abi, r.CFA)
		fp = "u"
		if fpTracked {
			fp = flexNotation(abi, r.FP)
		}
		switch {
		case raAtDefault(h, r.RA):
			switch {
			case fpTracked && !fpAtDefault(h, r.FP):
				ra = "U"
			case h.CFAFixedRA != 0:
				ra = "f"
			default:
				ra = "u"
			}
		case r.RA.Kind == RuleExpr:
			ra = flexNotation(abi, r.RA)
		default:
			ra = "u"
		}
		return cfa, fp, ra
	}

	if r.RA.Kind == RuleUndefined {
		// The pre-v3 tools know no outermost FREs: an FRE without data
		// words reads as base register id 0 (fp), and its missing CFA
		// offset prints as -1 (objdump 2.40 and 2.44, measured).
		cfa = "fp+-1"
	} else {
		base := "sp"
		if r.CFA.Reg == abi.FPRegister() {
			base = "fp"
		}
		cfa = fmt.Sprintf("%s+%d", base, r.CFA.Offset)
	}
	fp = defaultNotation(r.FP)

	switch {
	case h.CFAFixedRA != 0 && st == style240:
		ra = "u"
	case h.CFAFixedRA != 0:
		ra = "f"
	case r.RA.Kind == RuleSame && fpTracked && h.CFAFixedFP == 0 && st == styleV3:
		ra = "U" // the RA padding word: the FP has a word of its own after it
	default:
		ra = defaultNotation(r.RA)
	}
	return cfa, fp, ra
}

// raAtDefault and fpAtDefault report whether an RA or FP rule is what
// holds when no data word is stored for it: the header's fixed slot, or
// still where it was (RuleSame).
func raAtDefault(h *Header, ra Rule) bool { return atDefault(ra, h.CFAFixedRA) }
func fpAtDefault(h *Header, fp Rule) bool { return atDefault(fp, h.CFAFixedFP) }

// defaultNotation prints an FP or RA rule of a default FDE.
func defaultNotation(r Rule) string {
	if r.Kind != RuleExpr {
		return "u"
	}
	if r.Reg == RegCFA && r.Deref {
		return fmt.Sprintf("c%+d", r.Offset)
	}
	if r.Offset == 0 && !r.Deref {
		return fmt.Sprintf("r%d", r.Reg) // s390x v2: saved in a register
	}
	return flexNotation(0, r)
}

// flexNotation prints a rule as reg+off or (reg+off).
func flexNotation(abi ABI, r Rule) string {
	var name string
	switch {
	case r.Reg == RegCFA:
		name = "c"
	case abi != 0 && r.Reg == abi.SPRegister():
		name = "sp"
	case abi != 0 && r.Reg == abi.FPRegister():
		name = "fp"
	default:
		name = fmt.Sprintf("r%d", r.Reg)
	}
	// objdump reads the deref bit only when the rule names a register.
	if r.Deref && r.Reg != RegCFA {
		return fmt.Sprintf("(%s%+d)", name, r.Offset)
	}
	return fmt.Sprintf("%s%+d", name, r.Offset)
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
func DumpJSON(w io.Writer, t *Table) error {
	out := jsonDump{Sections: []jsonSection{}}
	for _, s := range t.Sections {
		fdes, err := s.FDEs()
		if err != nil {
			return err
		}
		out.Sections = append(out.Sections, jsonOfSection(s, fdes))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
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

func jsonOfSection(s *Section, fdes []FDE) jsonSection {
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
	for i := range fdes {
		fde := &fdes[i]
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
		if isAArch64(h.ABI) {
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
		js.Functions = append(js.Functions, jf)
	}
	return js
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
