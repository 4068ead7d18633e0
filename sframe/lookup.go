package sframe

import "math"

// satEnd is start+size, or 2^64-1 for a function that ends at the top of
// the address space (Decode refuses functions that would wrap around it).
func satEnd(start uint64, size uint32) uint64 {
	e := start + uint64(size)
	if e < start {
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
// function's end) yields ErrNoFDE and the zero Func.
//
// Where functions overlap (Check reports it), the covering function with
// the greatest start wins: the innermost of nested ranges; among equal
// starts, the FDE stored last (the index sort is stable, sections in
// buffer order).
//
// FindFDE does not allocate.
func (t *Table) FindFDE(pc uint64) (Func, error) {
	var f Func
	err := t.findFDE(pc, &f)
	return f, err
}

// findFDE is FindFDE filling *f, which it leaves alone on error.
func (t *Table) findFDE(pc uint64, f *Func) error {
	starts := t.starts
	// Last entry with start <= pc: among the starts of pc's bucket, or
	// the one before them.
	lo, n := 0, len(starts)
	if t.buckets != nil && n > 0 && pc >= starts[0] {
		if b := (pc - starts[0]) >> t.shift; b < uint64(len(t.buckets)-1) {
			first, next := int(t.buckets[b]), int(t.buckets[b+1])
			if first == next || starts[first] > pc {
				lo, n = max(first-1, 0), 1
			} else {
				lo, n = first, next-first
			}
		} else {
			lo, n = n-1, 1
		}
	}
	for n > 1 {
		half := n >> 1
		if starts[lo+half] <= pc {
			lo += half
		}
		n -= half
	}
	if n == 0 || starts[lo] > pc {
		return ErrNoFDE
	}
	i := lo
	if pc-starts[i] < uint64(t.sizeAt(i)) {
		t.fillFunc(f, t.stored(i), starts[i])
		return nil
	}
	if t.ends != nil {
		// An earlier, longer function may enclose pc; ends[j] bounds what
		// any of the functions at sorted positions 0..j can cover.
		for j := i - 1; j >= 0 && (t.ends[j] > pc || t.ends[j] == math.MaxUint64); j-- {
			if pc >= starts[j] && pc-starts[j] < uint64(t.sizeAt(j)) {
				t.fillFunc(f, t.stored(j), starts[j])
				return nil
			}
		}
	}
	return ErrNoFDE
}

// funcAtSorted builds the Func at sorted position i.
func (t *Table) funcAtSorted(i int) Func {
	return t.funcAt(t.stored(i), t.starts[i])
}

// FindRow looks up the function covering pc and its row there (see
// FindFDE and Func.FindRow).
func (t *Table) FindRow(pc uint64) (Func, Row, error) {
	var f Func
	var r Row
	err := t.findRow(pc, &f, &r)
	return f, r, err
}

// findRow is FindRow filling *f and *r.
func (t *Table) findRow(pc uint64, f *Func, r *Row) error {
	if err := t.findFDE(pc, f); err != nil {
		*f = Func{}
		return err
	}
	return f.findRow(pc-f.Start, r)
}

// FindRow returns the row that holds at pc, which must lie in the
// function, from the FDE's Rows (Func.FindRow does the same from the
// decoded buffer).
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
