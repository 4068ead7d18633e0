package sframe

import (
	"cmp"
	"slices"
)

// Check reports what strict consumers would refuse in a decoded table,
// beyond what Decode itself refuses: it is the validation a producer's
// section must pass. Each problem is a *FormatError with the byte offset
// of the field concerned, wrapping the sentinel that names the rule
// (errors.Is). Check returns nil for a table that passes.
//
// Always (what the specification and libsframe require, in any version):
//
//   - Every FRE of every function is read as lookups read them; the first
//     problem ends the reading of that function: ErrFREOutOfBounds (FRE or
//     data word outside the FRE sub-section: spec 2.4, and what libsframe's
//     foreign-endian path and the Linux unwinder check), ErrBadDataWordSize
//     (size code 3: spec 2.4.1, libsframe), ErrBadDataWordCount (more words
//     than the header's fixed offsets leave room for, a FLEX FRE with
//     fewer than 2 words, a control word without its displacement or
//     words left over: spec 3.1, 3.2, Linux unwinder), ErrBadFlexRule (a
//     FLEX CFA control word without reg_p: spec 3.2, Appendix A),
//     ErrFREsNotIncreasing (spec 2.4; libsframe's and the Linux unwinder's
//     FRE search), ErrFREStartPastEnd (start > function size: libsframe
//     asserts, the Linux unwinder refuses).
//   - ErrFREStartAtEnd, a warning, for every FRE whose start equals the
//     function size: a row covering no PC. GNU as writes them and
//     libsframe accepts start <= size, but ld and objdump 2.40 and 2.44
//     abort on them (their libsframe asserted start < size).
//   - ErrBadMangledRA: the mangled-RA bit of an FRE info byte set outside
//     AArch64 (spec 2.4.1; return address signing is AArch64's, spec
//     2.3.3).
//   - ErrBadFixedOffset: cfa_fixed_fp_offset other than 0 (no ABI saves
//     the FP at a fixed offset from the CFA; spec 3.1, GNU as writes 0);
//     cfa_fixed_ra_offset other than -8 or 0 on AMD64 (spec 3.1.1: the RA
//     is at CFA-8; 0 means "not fixed"), other than 0 on AArch64 and s390x
//     (spec 3.1.2, 3.1.3: the RA is tracked per FRE).
//   - ErrBadByteOrder: a section stored in the byte order that is not its
//     ABI's (spec 1.1 and 2.1.1: sections are in the target's byte order;
//     2.2.1: AArch64 BE and s390x are big-endian, AMD64 and AArch64 LE
//     little-endian). Decode reads it, as libsframe's foreign-endian path
//     does; a consumer on the target would not find the magic.
//   - ErrNotSorted: FlagFDESorted set but the stored FDEs not in
//     non-decreasing start order (spec 2.1.3, 2.3.1; libsframe's binary
//     search relies on it).
//   - ErrDuplicateFDE: two FDEs with the same function start, in one
//     section or across sections. libsframe's binary search may then
//     stop at either and miss the PC (an empty function shares its start
//     with the next); the Linux unwinder requires increasing starts.
//   - ErrOverlappingFDEs: two functions of non-zero size share addresses
//     (libsframe's binary search finds at most one of them).
//   - ErrOverlappingFREs: two functions' FRE data (version 3: attribute and
//     FREs) share bytes. The FRE sub-section holds each function's FREs
//     (spec 2.2, 2.4); libsframe's foreign-endian path flips each
//     function's FREs in place, so shared bytes come out flipped twice.
//     The offsets are those of the section's own byte order.
//
// With strict, also what the Linux user-space unwinder refuses when a
// section is registered, which assumes version 3 (its check that functions
// lie inside the text segment needs the ELF file and is not made here):
//
//   - ErrBadVersion: version other than 3.
//   - ErrBadFlags: FlagFuncStartPCRel clear.
//   - ErrNotSorted: FlagFDESorted clear.
//   - ErrBadAuxHeader: an auxiliary header.
//   - ErrCountMismatch: no FDEs or no FREs.
//
// Its other rules (FDE and FRE types, attributes inside the FRE
// sub-section, FREs as above) are Decode's or the ones above.
func (t *Table) Check(strict bool) []error {
	var errs []error
	var runs []freRun
	for _, s := range t.Sections {
		h := &s.Header
		errs = s.checkHeader(errs, strict)
		n := int(h.NumFDEs)
		for i := 0; i < n; i++ {
			f := s.Func(i)
			var run freRun
			errs, run = f.checkFREs(errs)
			if run.end > run.start {
				runs = append(runs, run)
			}
		}
		if h.Flags&FlagFDESorted != 0 {
			for i := 1; i < n; i++ {
				cur, prev := s.startAt(i), s.startAt(i-1)
				if cur < prev {
					errs = append(errs, failAt(s.fdeBase+i*s.fdeSize, ErrNotSorted, "FDE %d starts at %#x, FDE %d before it at %#x, in a section flagged sorted", i, cur, i-1, prev))
					break
				}
			}
		}
	}
	errs = t.checkFunctions(errs)
	return checkRuns(errs, runs)
}

// checkHeader appends the header's findings.
func (s *Section) checkHeader(errs []error, strict bool) []error {
	h := &s.Header
	if want := h.ABI.ByteOrder(); s.Order != want {
		errs = append(errs, failAt(s.Offset, ErrBadByteOrder, "the magic says %v; %v sections are %v", s.Order, h.ABI, want))
	}
	if h.CFAFixedFP != 0 {
		errs = append(errs, failAt(s.Offset+5, ErrBadFixedOffset, "cfa_fixed_fp_offset %d; no ABI saves the FP at a fixed offset from the CFA (0: not fixed)", h.CFAFixedFP))
	}
	switch {
	case h.ABI == ABIAMD64LE && h.CFAFixedRA != -8 && h.CFAFixedRA != 0:
		errs = append(errs, failAt(s.Offset+6, ErrBadFixedOffset, "cfa_fixed_ra_offset %d; AMD64 keeps the RA at CFA-8 (-8, or 0: not fixed)", h.CFAFixedRA))
	case h.ABI != ABIAMD64LE && h.CFAFixedRA != 0:
		errs = append(errs, failAt(s.Offset+6, ErrBadFixedOffset, "cfa_fixed_ra_offset %d; %v tracks the RA in each FRE (0: not fixed)", h.CFAFixedRA, h.ABI))
	}
	if !strict {
		return errs
	}
	if h.Version != Version3 {
		errs = append(errs, failAt(s.Offset+2, ErrBadVersion, "version %d; the Linux unwinder reads version 3 only", h.Version))
	}
	if h.Flags&FlagFuncStartPCRel == 0 {
		errs = append(errs, failAt(s.Offset+3, ErrBadFlags, "FDE_FUNC_START_PCREL clear; the Linux unwinder requires PC-relative function starts"))
	}
	if h.Flags&FlagFDESorted == 0 {
		errs = append(errs, failAt(s.Offset+3, ErrNotSorted, "FDE_SORTED clear; the Linux unwinder requires sorted FDEs"))
	}
	if len(h.AuxHeader) != 0 {
		errs = append(errs, failAt(s.Offset+7, ErrBadAuxHeader, "auxiliary header of %d bytes; the Linux unwinder requires none", len(h.AuxHeader)))
	}
	if h.NumFDEs == 0 || h.NumFREs == 0 {
		errs = append(errs, failAt(s.Offset+8, ErrCountMismatch, "%d FDEs and %d FREs; the Linux unwinder requires both", h.NumFDEs, h.NumFREs))
	}
	return errs
}

// freRun is the byte range of one function's FRE data.
type freRun struct {
	start, end int
	fde        int // offset of the function's FDE
}

// checkFREs reads every FRE of f as Rows does and appends to errs the
// first problem that ends the reading, every FRE that starts at the
// function's end and every mangled-RA bit outside AArch64. It returns the
// bytes the function's FRE data occupies (empty when unreadable).
func (f *Func) checkFREs(errs []error) ([]error, freRun) {
	aarch64 := f.sec.Header.ABI.IsAArch64()
	run := freRun{start: f.fres, fde: f.Offset}
	if f.sec.Header.Version == Version3 {
		run.start -= fdeAttrSizeV3
	}
	p := f.fres
	var prev uint32
	for j := 0; j < f.NumFREs; j++ {
		h, err := f.readFRE(p, j)
		if err == nil {
			err = f.checkOrder(&h, j, prev)
		}
		if err == nil {
			var r Row
			err = f.row(&h, j, &r)
		}
		if err != nil {
			return append(errs, err), freRun{}
		}
		if h.start == f.Size {
			errs = append(errs, failAt(h.at, ErrFREStartAtEnd, "FDE %d, FRE %d: start %#x is the function's size: the row covers no PC", f.Index, j, h.start))
		}
		if h.mangled() && !aarch64 {
			errs = append(errs, failAt(h.at+freStartSize[f.FREType], ErrBadMangledRA, "FDE %d, FRE %d: info byte %#02x has the mangled-RA bit set on %v", f.Index, j, h.info, f.sec.Header.ABI))
		}
		prev, p = h.start, h.next
	}
	run.end = p
	return errs, run
}

// checkFunctions appends the findings about function starts and ranges
// across every section: duplicates and overlaps.
func (t *Table) checkFunctions(errs []error) []error {
	last := -1 // sorted position of the function reaching furthest so far
	var lastEnd uint64
	for i, start := range t.starts {
		if i > 0 && start == t.starts[i-1] {
			f, g := t.funcAtSorted(i), t.funcAtSorted(i-1)
			errs = append(errs, failAt(f.Offset, ErrDuplicateFDE, "function at %#x (%d bytes) has the start of the FDE at offset %d (%d bytes)", f.Start, f.Size, g.Offset, g.Size))
		}
		size := t.sizeAt(i)
		if size == 0 {
			continue
		}
		if last >= 0 && start < lastEnd {
			f, g := t.funcAtSorted(i), t.funcAtSorted(last)
			errs = append(errs, failAt(f.Offset, ErrOverlappingFDEs, "function [%#x, %#x) overlaps the function [%#x, %#x) of the FDE at offset %d", f.Start, satEnd(f.Start, f.Size), g.Start, lastEnd, g.Offset))
		}
		if end := satEnd(start, size); last < 0 || end > lastEnd {
			last, lastEnd = i, end
		}
	}
	return errs
}

// checkRuns appends a finding for every function whose FRE data shares
// bytes with the data of a function whose data starts earlier (or at the
// same byte, stored earlier).
func checkRuns(errs []error, runs []freRun) []error {
	slices.SortStableFunc(runs, func(a, b freRun) int { return cmp.Compare(a.start, b.start) })
	far := -1 // index of the run reaching furthest so far
	for i, r := range runs {
		if far >= 0 && r.start < runs[far].end {
			o := runs[far]
			errs = append(errs, failAt(r.start, ErrOverlappingFREs, "the FRE data [%d, %d) of the FDE at offset %d shares bytes with the FRE data [%d, %d) of the FDE at offset %d", r.start, r.end, r.fde, o.start, o.end, o.fde))
		}
		if far < 0 || r.end > runs[far].end {
			far = i
		}
	}
	return errs
}
