package sframe

import "math"

// satEnd is f.End(), or 2^64-1 for a function that ends at the top of the
// address space (Decode refuses functions that would wrap around it).
func satEnd(f *FDE) uint64 {
	e := f.Start + uint64(f.Size)
	if e < f.Start {
		return math.MaxUint64
	}
	return e
}

// covers reports start <= pc < start+size without overflow.
func covers(f *FDE, pc uint64) bool { return pc >= f.Start && pc-f.Start < uint64(f.Size) }

// FindFDE returns the function covering pc: start <= pc < start+size. The
// index is sorted at decode time, whatever order the sections stored
// their FDEs in, so the binary search is valid even when FlagFDESorted is
// clear. A pc in no function (before the first, in a gap, at or past a
// function's end) yields ErrNoFDE.
//
// Where functions overlap (Check reports it), the covering function with
// the greatest start wins: the innermost of nested ranges; among equal
// starts, the FDE stored last (the index sort is stable, sections in
// buffer order).
//
// FindFDE does not allocate.
func (t *Table) FindFDE(pc uint64) (*FDE, error) {
	idx := t.index
	// Last entry with Start <= pc. Tables built in memory rather than by
	// Decode have no starts array.
	lo, hi := 0, len(idx)
	if starts := t.starts; len(starts) == len(idx) {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if starts[m] <= pc {
				lo = m + 1
			} else {
				hi = m
			}
		}
	} else {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if idx[m].Start <= pc {
				lo = m + 1
			} else {
				hi = m
			}
		}
	}
	i := lo - 1
	if i < 0 {
		return nil, ErrNoFDE
	}
	if covers(idx[i], pc) {
		return idx[i], nil
	}
	if t.ends != nil {
		// An earlier, longer function may enclose pc; ends[j] bounds what
		// any of index[0..j] can cover.
		for j := i - 1; j >= 0 && (t.ends[j] > pc || t.ends[j] == math.MaxUint64); j-- {
			if covers(idx[j], pc) {
				return idx[j], nil
			}
		}
	}
	return nil, ErrNoFDE
}

// FindRow returns the row that holds at pc, which must lie in the
// function.
//
//   - PCINC: the last row whose Start <= pc - f.Start.
//   - PCMASK, versions 2 and 3 (and FDEs built in memory): the offset is
//     first reduced modulo RepSize; RepSize 0 matches nothing.
//   - PCMASK, version 1: the version 1 specification's rule, the last row
//     whose Start s has (pc - f.Start) & s >= s, i.e. every bit of s set in
//     the offset. The offset is taken from the function start (the same as
//     the absolute PC when the stubs are aligned to their size, as PLTs are).
//   - A pc before the first row, or an FDE without rows: ErrNoRow. Except
//     that a version 3 DEFAULT FDE without FREs marks an outermost frame
//     (SFrame v3 specification, "Changes from Version 2 to Version 3": "An
//     SFrame FDE of type SFRAME_FDE_TYPE_DEFAULT with no FREs is used to
//     indicate an outermost frame"): FindRow returns a row with CFA and RA
//     RuleUndefined and FP RuleSame, as for an FRE without data words.
//     libsframe and the Linux unwinder return an error there instead.
//
// FindRow does not allocate.
func (f *FDE) FindRow(pc uint64) (Row, error) {
	if !covers(f, pc) {
		return Row{}, ErrNoRow
	}
	off := pc - f.Start
	rows := f.Rows
	if len(rows) == 0 {
		if f.version == Version3 && f.Type == FDETypeDefault {
			return Row{
				CFA:      Rule{Kind: RuleUndefined},
				RA:       Rule{Kind: RuleUndefined},
				FP:       Rule{Kind: RuleSame},
				PAuthKey: f.PAuthKey,
				Signal:   f.Signal,
			}, nil
		}
		return Row{}, ErrNoRow
	}
	if f.PCType == PCMask {
		if f.version == Version1 {
			for i := len(rows) - 1; i >= 0; i-- {
				if s := uint64(rows[i].Start); off&s == s {
					return rows[i], nil
				}
			}
			return Row{}, ErrNoRow
		}
		if f.RepSize == 0 {
			return Row{}, ErrNoRow
		}
		off %= uint64(f.RepSize)
	}
	// Last row with Start <= off.
	lo, hi := 0, len(rows)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(rows[m].Start) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return Row{}, ErrNoRow
	}
	return rows[lo-1], nil
}

// FindRow looks up the function covering pc and its row there.
func (t *Table) FindRow(pc uint64) (*FDE, Row, error) {
	f, err := t.FindFDE(pc)
	if err != nil {
		return nil, Row{}, err
	}
	r, err := f.FindRow(pc)
	return f, r, err
}

// Check reports what a reference consumer would refuse in a decoded
// table, beyond what Decode itself refuses. Each problem is a
// *FormatError with the byte offset of the field concerned.
//
// Always (libsframe relies on these for its binary search):
//
//   - ErrNotSorted: FlagFDESorted is set but the stored FDEs are not in
//     non-decreasing start order.
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
		sorted := h.Flags&FlagFDESorted != 0
		if sorted {
			for i := 1; i < len(s.FDEs); i++ {
				cur, prev := s.FDEs[i].Start, s.FDEs[i-1].Start
				if cur < prev || (strict && cur == prev) {
					errs = append(errs, failAt(s.FDEs[i].Offset, ErrNotSorted, "FDE %d starts at %#x, FDE %d before it at %#x, in a section flagged sorted", i, cur, i-1, prev))
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
	var last *FDE // the function reaching furthest so far
	for _, f := range t.index {
		if f.Size == 0 {
			continue
		}
		if last != nil && f.Start < satEnd(last) {
			errs = append(errs, failAt(f.Offset, ErrOverlappingFDEs, "function [%#x, %#x) overlaps the function [%#x, %#x) of the FDE at offset %d", f.Start, satEnd(f), last.Start, satEnd(last), last.Offset))
		}
		if last == nil || satEnd(f) > satEnd(last) {
			last = f
		}
	}
	return errs
}
