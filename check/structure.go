package check

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/validate"
)

// checker carries one file through the checks.
type checker struct {
	l    *loaded
	r    *Report
	opts Options
	t    *sframe.Table
	cfi  *cfi.Table
	// fdes: every SFrame function sorted by start (all sections).
	fdes  []sframe.Func
	funcs []symbol // function starts with ends filled in
	fr    []FuncReport
	// uncovered holds each function's uncovered-bytes finding until the
	// static check knows whether its CFI is expressible; cause why its
	// bytes have no SFrame (gaps.go), gapBytes how many.
	uncovered []*Finding
	cause     []string
	gapBytes  []uint64
	gaps      *gapEvidence
	gapIdx    map[string]int
	// The dynamic check's failure groups (groups.go).
	cfiRows    map[*cfi.FDE][]cfi.Row
	groups     map[groupKey]*failGroup
	groupOrder []*failGroup
	ungrouped  int
	// The dynamic check's executed PCs (moved), over all functions and
	// runs; the functions whose failure was saved as a reproducer.
	executedPCs map[uint64]bool
	savedCase   map[int]bool
}

func (c *checker) sframeOffset(off int) (int, int64) {
	if off < 0 {
		return -1, -1
	}
	return off, int64(c.l.SFrameOff) + int64(off)
}

func (c *checker) finding(kind string, sev Severity, off int, msg string) Finding {
	o, fo := c.sframeOffset(off)
	return Finding{Kind: kind, Severity: sev, Offset: o, FileOffset: fo, Message: msg}
}

// structure decodes and validates the section and checks which executable
// bytes its FDEs cover. A section that does not decode is a finding, not
// an unusable file; the error is for what stops every check.
func (c *checker) structure() error {
	l, r := c.l, c.r
	t, err := sframe.Decode(l.SFrame, l.SFrameAddr)
	if err != nil {
		off := -1
		var fe *sframe.FormatError
		if errors.As(err, &fe) {
			off = fe.Off
		}
		r.add(c.finding(KindDecode, SevError, off, err.Error()))
		return nil
	}
	c.t = t
	for _, s := range t.Sections {
		r.Sections = append(r.Sections, SectionInfo{Offset: s.Offset, Version: int(s.Header.Version),
			Flags: flagNames(s.Header.Flags), ABI: s.Header.ABI.Name(),
			NumFDEs: int(s.Header.NumFDEs), NumFREs: int(s.Header.NumFREs), Size: s.Size})
	}
	if len(t.Sections) > 1 {
		offs := make([]string, len(t.Sections))
		for i, s := range t.Sections {
			offs[i] = fmt.Sprint(s.Offset)
		}
		r.add(c.finding(KindConcatenated, SevWarning, t.Sections[1].Offset,
			fmt.Sprintf("%d SFrame headers in one section (at byte offsets %s), as a linker that does not merge .sframe leaves them; libsframe and the Linux unwinder read only the first",
				len(t.Sections), strings.Join(offs, ", "))))
	}

	// The strict rules, as every produced section passes them.
	img := &image.Image{Target: l.Target, SFrame: l.SFrame, SFrameAddr: l.SFrameAddr}
	for _, v := range validate.Section(img) {
		kind, sev := KindInvalid, SevError
		switch v.Rule {
		case ruleName(sframe.ErrOverlappingFDEs):
			kind = KindOverlap
		case ruleName(sframe.ErrDuplicateFDE):
			kind = KindDuplicate
		}
		if v.Warning {
			sev = SevWarning
		}
		msg := v.Rule
		if l.Kind == "REL" && v.Rule == ruleName(sframe.ErrNotSorted) {
			// GNU as leaves an object's FDEs unsorted; ld sorts them.
			sev, msg = SevNote, msg+" (a relocatable object: the linker sorts them)"
		}
		if v.Detail != "" {
			msg += ": " + v.Detail
		}
		r.add(c.finding(kind, sev, v.Offset, msg))
	}

	for _, s := range t.Sections {
		for i := 0; i < int(s.Header.NumFDEs); i++ {
			c.fdes = append(c.fdes, s.Func(i))
		}
	}
	sort.SliceStable(c.fdes, func(i, j int) bool { return c.fdes[i].Start < c.fdes[j].Start })
	r.Summary.FDEs = len(c.fdes)
	for _, f := range c.fdes {
		reg, ok := l.regionOf(f.Start)
		if !ok || f.End() > reg.end() {
			where := "no executable segment"
			if l.Relocated {
				where = "no executable section"
			}
			if ok {
				where = fmt.Sprintf("%s ends at 0x%x", reg.Name, reg.end())
			}
			r.add(c.finding(KindOutside, SevError, f.Offset,
				fmt.Sprintf("FDE %d covers [0x%x, 0x%x), outside the executable bytes (%s)", f.Index, f.Start, f.End(), where)))
		}
	}
	for _, reg := range l.Regions {
		r.Summary.ExecBytes += reg.Size
	}
	r.Summary.CoveredBytes = c.covered(0, ^uint64(0), true)
	return nil
}

func ruleName(err error) string { return strings.TrimPrefix(err.Error(), "sframe: ") }

// covered counts the bytes of [lo, hi) that an FDE covers (restricted to
// executable regions when execOnly).
func (c *checker) covered(lo, hi uint64, execOnly bool) uint64 {
	var n uint64
	reach := lo
	i := sort.Search(len(c.fdes), func(i int) bool { return c.fdes[i].End() > lo })
	// An earlier FDE may reach past lo although a later one ends sooner.
	for i > 0 && c.fdes[i-1].End() > lo {
		i--
	}
	for ; i < len(c.fdes) && c.fdes[i].Start < hi; i++ {
		s, e := c.fdes[i].Start, c.fdes[i].End()
		if s < reach {
			s = reach
		}
		if e > hi {
			e = hi
		}
		if e <= s {
			continue
		}
		if execOnly {
			for _, reg := range c.l.Regions {
				a, b := max(s, reg.Addr), min(e, reg.end())
				if b > a {
					n += b - a
				}
			}
		} else {
			n += e - s
		}
		reach = e
	}
	return n
}

func flagNames(f sframe.Flags) []string {
	var out []string
	for _, x := range []struct {
		f sframe.Flags
		n string
	}{{sframe.FlagFDESorted, "SFRAME_F_FDE_SORTED"}, {sframe.FlagFramePointer, "SFRAME_F_FRAME_POINTER"},
		{sframe.FlagFuncStartPCRel, "SFRAME_F_FDE_FUNC_START_PCREL"}} {
		if f&x.f != 0 {
			out = append(out, x.n)
			f &^= x.f
		}
	}
	if f != 0 {
		out = append(out, fmt.Sprintf("0x%x", uint8(f)))
	}
	return out
}

// functions fixes the function list (symbols, else CFI FDE starts) and
// reports the bytes of each that no FDE covers.
func (c *checker) functions() {
	l, r := c.l, c.r
	if l.CFI != nil {
		t, err := cfi.Parse(l.CFI, l.CFIAddr, l.File.ByteOrder, l.CFIName == ".eh_frame")
		if err != nil {
			var fe *cfi.FormatError
			off := -1
			if errors.As(err, &fe) {
				off = fe.Off
			}
			r.add(Finding{Kind: KindNotCompared, Severity: SevWarning, Offset: -1, FileOffset: int64(l.CFIOff) + int64(off),
				Message: fmt.Sprintf("%s: %v; FDEs after it are not compared", l.CFIName, err)})
		}
		c.cfi = t
	}
	funcs := l.Funcs
	if len(funcs) == 0 && c.cfi != nil {
		plt := l.pltEntries()
		for _, f := range c.cfi.FDEs {
			if _, ok := l.regionOf(f.Start); !ok {
				continue
			}
			if sec := l.sectionOf(f.Start); sec != nil && slices.ContainsFunc(plt, func(p symbol) bool { return p.Addr >= sec.Addr && p.Addr < sec.Addr+sec.Size }) {
				continue // its entries are named below, as with symbols
			}
			funcs = append(funcs, fdeFunction(l, f))
		}
		funcs = dedupe(append(funcs, plt...))
		l.FuncSource = l.CFIName
	}
	r.FuncSource = l.FuncSource
	if len(funcs) == 0 {
		r.add(Finding{Kind: KindNotCompared, Severity: SevNote, Offset: -1, FileOffset: -1,
			Message: "no function starts: no function symbol in .symtab or .dynsym and no CFI FDE; only the section's structure is checked (function starts are never taken from .sframe)"})
	}
	for i := range funcs {
		f := &funcs[i]
		reg, _ := l.regionOf(f.Addr)
		end := f.Addr + f.Size
		if f.Size == 0 {
			// A symbol without a size (_init, _fini) ends at its
			// section's end or the next symbol, whichever comes first.
			end = reg.end()
			if s := l.sectionOf(f.Addr); s != nil && s.Addr+s.Size < end {
				end = s.Addr + s.Size
			}
			if i+1 < len(funcs) && funcs[i+1].Addr < end {
				end = funcs[i+1].Addr
			}
		}
		if end > reg.end() {
			end = reg.end()
		}
		f.Size = end - f.Addr
	}
	c.funcs = funcs
	c.fr = make([]FuncReport, len(funcs))
	c.uncovered = make([]*Finding, len(funcs))
	c.cause = make([]string, len(funcs))
	c.gapBytes = make([]uint64, len(funcs))
	if c.t != nil {
		c.gaps = c.evidence()
	}
	for i, f := range funcs {
		fr := &c.fr[i]
		fr.Name, fr.Start, fr.Size = f.Name, hex(f.Addr), f.Size
		if c.t != nil {
			_, err := c.t.FindFDE(f.Addr)
			fr.HasFDE = err == nil
		}
		if c.t == nil || f.Size == 0 {
			continue
		}
		cov := c.covered(f.Addr, f.Addr+f.Size, false)
		if cov < f.Size {
			first := c.firstUncovered(f.Addr, f.Addr+f.Size)
			cause := c.causeAt(first, f.Name, f.File)
			c.cause[i], c.gapBytes[i] = cause, f.Size-cov
			msg := fmt.Sprintf("%d of %d bytes have no SFrame FDE (first at 0x%x); %s", f.Size-cov, f.Size, first, gapMessage(cause, f.File))
			c.uncovered[i] = &Finding{Kind: KindUncovered, Severity: c.gapSeverity(cause), PC: hex(first), Message: msg, Cause: cause}
		}
	}
}

func (c *checker) firstUncovered(lo, hi uint64) uint64 {
	pc := lo
	for pc < hi {
		f, err := c.t.FindFDE(pc)
		if err != nil {
			return pc
		}
		pc = f.End()
	}
	return hi
}

// add records a finding about function i.
func (c *checker) add(i int, f Finding) {
	if f.Offset == 0 && f.FileOffset == 0 {
		f.Offset, f.FileOffset = -1, -1
	}
	f.Func = c.funcs[i].Name
	c.fr[i].Findings++
	c.r.add(f)
}

func (c *checker) totals() {
	s := &c.r.Summary
	s.Functions = len(c.fr)
	for _, f := range c.fr {
		if f.HasFDE {
			s.WithFDE++
		}
		s.Instructions += f.Instructions
		s.Compared += f.Compared
		s.Differ += f.Differ
		s.Inexpressible += f.Inexpressible
		s.NotCompared += f.NotCompared
		s.Executed += f.Executed
		s.Steps += f.Steps
		s.Clobbered += f.Clobbered
		for k, v := range f.Verdicts {
			if s.Verdicts == nil {
				s.Verdicts = map[string]int{}
			}
			s.Verdicts[k] += v
		}
		for k, v := range f.Aside {
			if s.Aside == nil {
				s.Aside = map[string]int{}
			}
			s.Aside[k] += v
		}
	}
	c.r.Functions = c.fr
}

// fdeFunction is the function an FDE describes in a file without function
// symbols (a stripped file). What a symbol would say is read from the
// file instead: code in a PLT section is a linker stub (named for its
// section, entered through the PLT, never run as a function), and an FDE
// whose first row is not the state at a call's arrival (CFA = SP plus
// the target's entry offset) describes code reached inside another
// function's frame, as GCC's f.cold parts are: a part, not an entry.
func fdeFunction(l *loaded, f *cfi.FDE) symbol {
	s := symbol{Name: fmt.Sprintf("fde@0x%x", f.Start), Addr: f.Start, Size: f.End - f.Start}
	if sec := l.sectionOf(f.Start); sec != nil && strings.HasPrefix(sec.Name, ".plt") {
		s.Name = fmt.Sprintf("%s@0x%x", sec.Name, f.Start)
		return s
	}
	rows, err := f.Rows(nil, l.Target.IsAArch64(), l.File.ByteOrder)
	if err != nil || len(rows) == 0 || rows[0].Loc != f.Start {
		return s
	}
	c := rows[0].CFA
	if c.Kind != cfi.RegOffset || c.Reg != uint64(l.Target.SP()) || c.Offset != l.Target.CFAAtEntry() {
		s.PartOf = "(a function whose frame this FDE's first row continues)"
	}
	return s
}
