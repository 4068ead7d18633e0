package sframe

// Check reports what a reference consumer would refuse in a decoded
// table, beyond what Decode itself refuses. Each problem is a
// *FormatError with the byte offset of the field concerned.
//
// Always:
//
//   - Every FRE of every function, as Decode used to check them and
//     lookups check the ones they read (one problem per function, the
//     first): ErrFREOutOfBounds, ErrBadDataWordSize, ErrBadDataWordCount,
//     ErrBadFlexRule, ErrFREsNotIncreasing, ErrFREStartPastEnd.
//   - ErrFREStartAtEnd, every FRE whose start equals the function size (a
//     warning: such a row covers no PC).
//   - ErrNotSorted: FlagFDESorted is set but the stored FDEs are not in
//     non-decreasing start order (libsframe relies on it for its binary
//     search).
//   - ErrOverlappingFDEs: two functions (of non-zero size) share
//     addresses, in one section or across sections.
//
// With strict, also what the Linux user-space unwinder refuses when a
// section is registered (its check that functions lie inside the text
// segment needs the ELF file and is not made here):
//
//   - ErrNotSorted: two FDEs with the same start in a sorted section (the
//     kernel wants strictly increasing starts).
//   - ErrBadVersion: version other than 3.
//   - ErrBadFlags: FlagFuncStartPCRel clear.
//   - ErrNotSorted: FlagFDESorted clear.
//   - ErrBadAuxHeader: an auxiliary header.
//   - ErrCountMismatch: no FDEs or no FREs.
//
// Check returns nil for a table that passes.
func (t *Table) Check(strict bool) []error {
	var errs []error
	for _, s := range t.Sections {
		h := &s.Header
		n := int(h.NumFDEs)
		for i := 0; i < n; i++ {
			f := s.Func(i)
			errs = f.checkFREs(errs)
		}
		sorted := h.Flags&FlagFDESorted != 0
		if sorted {
			for i := 1; i < n; i++ {
				cur, prev := s.startAt(i), s.startAt(i-1)
				if cur < prev || (strict && cur == prev) {
					errs = append(errs, failAt(s.fdeBase+i*s.fdeSize, ErrNotSorted, "FDE %d starts at %#x, FDE %d before it at %#x, in a section flagged sorted", i, cur, i-1, prev))
					break
				}
			}
		}
		if !strict {
			continue
		}
		if h.Version != Version3 {
			errs = append(errs, failAt(s.Offset+2, ErrBadVersion, "version %d; the Linux unwinder reads version 3 only", h.Version))
		}
		if h.Flags&FlagFuncStartPCRel == 0 {
			errs = append(errs, failAt(s.Offset+3, ErrBadFlags, "FDE_FUNC_START_PCREL clear; the Linux unwinder requires PC-relative function starts"))
		}
		if !sorted {
			errs = append(errs, failAt(s.Offset+3, ErrNotSorted, "FDE_SORTED clear; the Linux unwinder requires sorted FDEs"))
		}
		if len(h.AuxHeader) != 0 {
			errs = append(errs, failAt(s.Offset+7, ErrBadAuxHeader, "auxiliary header of %d bytes; the Linux unwinder requires none", len(h.AuxHeader)))
		}
		if h.NumFDEs == 0 || h.NumFREs == 0 {
			errs = append(errs, failAt(s.Offset+8, ErrCountMismatch, "%d FDEs and %d FREs; the Linux unwinder requires both", h.NumFDEs, h.NumFREs))
		}
	}
	last := -1 // sorted position of the function reaching furthest so far
	var lastEnd uint64
	for i, start := range t.starts {
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

// checkFREs reads every FRE of f as Rows does and appends to errs the
// first problem that ends the reading, and every FRE that starts at the
// function's end.
func (f *Func) checkFREs(errs []error) []error {
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
			return append(errs, err)
		}
		if h.start == f.Size {
			errs = append(errs, failAt(h.at, ErrFREStartAtEnd, "FDE %d, FRE %d: start %#x is the function's size: the row covers no PC", f.Index, j, h.start))
		}
		prev, p = h.start, h.next
	}
	return errs
}
