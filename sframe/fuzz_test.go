package sframe

// Fuzz targets for Decode, the lookups and the Unwinder built on them. Seeds: the hand-written
// sections of decode_test.go in both byte orders, testdata/handmade/*.hex
// and every .sframe file under testdata/gas-*. Crashers found by the fuzzer
// are kept under testdata/fuzz/<target>/ and replay in every go test run.
//
//	go test ./sframe -run '^$' -fuzz FuzzDecode -fuzztime 10m -parallel 1

import (
	"errors"
	"testing"
)

// fuzzSeeds returns the seed sections with the base each one decodes at.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, o := range bothOrders {
		seeds = append(seeds, secV2AMD64(o, false), secV2AMD64(o, true), secV1AMD64(o),
			secV2AArch64(o), secV2S390X(o), secV3(o), secV3S390XFlex(o), secNoRows(o))
		seeds = append(seeds, append(append(secV2AMD64(o, false), secV1AMD64(o)...), 0, 0, 0, 0, 0, 0))
	}
	for _, p := range fixtureFiles(f, handmadeFixtures) {
		seeds = append(seeds, readHexFile(f, p))
	}
	for _, p := range fixtureFiles(f, gasFixtures) {
		seeds = append(seeds, readFixtureFile(f, p))
	}
	return seeds
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint64(testBase))
	}
	f.Fuzz(func(t *testing.T, buf []byte, base uint64) {
		tab, err := Decode(buf, base)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Off < 0 || fe.Off > len(buf) || fe.Err == nil {
				t.Fatalf("error %v (%T) is not a FormatError with an offset in [0, %d]", err, err, len(buf))
			}
			return
		}
		checkInvariants(t, tab, buf)
	})
}

// checkInvariants asserts what every successfully decoded table must
// satisfy: sane sections, a sorted index over every FDE, rows that decode
// (or a malformed FRE that Check reports at the same offset), lazy
// lookups that agree with the materialised rows, and Check findings that
// are *FormatErrors inside the buffer.
func checkInvariants(t *testing.T, tab *Table, buf []byte) {
	t.Helper()
	if len(tab.Sections) == 0 {
		t.Fatal("no sections")
	}
	checkErrs := map[bool][]error{false: tab.Check(false), true: tab.Check(true)}
	for _, strict := range []bool{false, true} {
		for _, e := range checkErrs[strict] {
			var fe *FormatError
			if !errors.As(e, &fe) || fe.Off < 0 || fe.Off > len(buf) || fe.Err == nil {
				t.Fatalf("Check: %v is not a FormatError with an offset in [0, %d]", e, len(buf))
			}
		}
	}
	nFDEs, nRows := 0, 0
	prevEnd := 0
	for si, s := range tab.Sections {
		if s.Offset < prevEnd || s.Size < HeaderSize || s.Offset+s.Size > len(buf) {
			t.Fatalf("section %d at %d, %d bytes, in a %d-byte buffer after %d", si, s.Offset, s.Size, len(buf), prevEnd)
		}
		prevEnd = s.Offset + s.Size
		nFDEs += int(s.Header.NumFDEs)
		fdes, err := s.FDEs()
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Off < 0 || fe.Off > len(buf) {
				t.Fatalf("section %d: FDEs: %v is not a FormatError inside the buffer", si, err)
			}
			if !hasErr(checkErrs[false], fe.Err, fe.Off) {
				t.Fatalf("section %d: FDEs fails with %v, which Check does not report (%v)", si, err, checkErrs[false])
			}
			continue
		}
		for i := range fdes {
			fde := &fdes[i]
			nRows += len(fde.Rows)
			for j, r := range fde.Rows {
				if r.Start > fde.Size || (j > 0 && r.Start <= fde.Rows[j-1].Start) {
					t.Fatalf("section %d FDE %d row %d starts at %#x (size %#x)", si, i, j, r.Start, fde.Size)
				}
				if (r.CFA.Kind == RuleUndefined) != (r.RA.Kind == RuleUndefined) || (r.CFA.Kind != RuleUndefined && (r.CFA.Kind != RuleExpr || r.CFA.Reg < 0)) {
					t.Fatalf("section %d FDE %d row %d: CFA %+v RA %+v", si, i, j, r.CFA, r.RA)
				}
			}
			checkFDELookups(t, tab, s.Func(i), fde)
		}
	}
	if nRows > len(buf)/2 {
		t.Fatalf("%d rows from %d bytes", nRows, len(buf))
	}
	if len(tab.starts) != nFDEs {
		t.Fatalf("index has %d FDEs, sections %d", len(tab.starts), nFDEs)
	}
	for i := 1; i < len(tab.starts); i++ {
		if tab.starts[i] < tab.starts[i-1] {
			t.Fatalf("index not sorted at %d", i)
		}
	}
}

// checkFDELookups: lookups at the function's start and at each row's
// start, lazily (fn) and on the materialised rows (fde), which must agree.
func checkFDELookups(t *testing.T, tab *Table, fn Func, fde *FDE) {
	t.Helper()
	if fn.Start != fde.Start || fn.Size != fde.Size || fn.NumFREs != len(fde.Rows) {
		t.Fatalf("Func %+v and FDE %+v differ", fn, fde)
	}
	if fde.Size == 0 {
		return
	}
	g, err := tab.FindFDE(fde.Start)
	if err != nil || fde.Start < g.Start || fde.Start-g.Start >= uint64(g.Size) || g.Start < fde.Start {
		t.Fatalf("FindFDE(%#x) of the FDE at offset %d = %+v, %v", fde.Start, fde.Offset, g, err)
	}
	row, err := fde.FindRow(fde.Start)
	if lrow, lerr := fn.FindRow(fde.Start); lrow != row || lerr != err {
		t.Fatalf("FindRow(%#x): lazily %+v, %v; on the rows %+v, %v", fde.Start, lrow, lerr, row, err)
	}
	switch {
	case len(fde.Rows) == 0:
		outermost := fde.version == Version3 && fde.Type == FDETypeDefault
		if outermost != (err == nil) || (err == nil && row.RA.Kind != RuleUndefined) {
			t.Fatalf("FindRow at the start of an FDE without rows: %+v, %v", row, err)
		}
	case fde.Rows[0].Start == 0:
		if err != nil || row != fde.Rows[0] {
			t.Fatalf("FindRow(%#x) = %+v, %v; want the first row %+v", fde.Start, row, err, fde.Rows[0])
		}
	case fde.PCType == PCMask && fde.version == Version1:
	default:
		if err != ErrNoRow {
			t.Fatalf("FindRow(%#x) before the first row (at %#x) = %+v, %v", fde.Start, fde.Rows[0].Start, row, err)
		}
	}
	for _, r := range fde.Rows {
		pc := fde.Start + uint64(r.Start)
		if r.Start >= fde.Size {
			continue // a row at the function's end covers no PC
		}
		got, err := fde.FindRow(pc)
		if lgot, lerr := fn.FindRow(pc); lgot != got || lerr != err {
			t.Fatalf("FindRow(%#x): lazily %+v, %v; on the rows %+v, %v", pc, lgot, lerr, got, err)
		}
		if fde.PCType == PCMask && (fde.version == Version1 || uint32(r.Start) >= uint32(fde.RepSize)) {
			continue // the version 1 rule, or never reached: offsets are reduced below RepSize
		}
		if err != nil || got != r {
			t.Fatalf("FindRow at row start %#x = %+v, %v; want %+v", r.Start, got, err, r)
		}
	}
}

func FuzzLookup(f *testing.F) {
	for i, s := range fuzzSeeds(f) {
		f.Add(s, uint64(testBase), uint64(i)*0x9e3779b97f4a7c15)
	}
	f.Fuzz(func(t *testing.T, buf []byte, base, pc uint64) {
		tab, err := Decode(buf, base)
		if err != nil {
			return
		}
		pcs := []uint64{pc, base + pc%uint64(len(buf)+1)}
		if n := len(tab.starts); n > 0 {
			f := tab.funcAtSorted(int(pc % uint64(n)))
			pcs = append(pcs, f.Start+(pc>>16)%(uint64(f.Size)+2), f.Start-1, f.Start+uint64(f.Size))
		}
		for _, pc := range pcs {
			checkLookupAgainstScan(t, tab, pc)
		}
		top := pcs[0]
		if len(pcs) > 2 {
			top = pcs[2] // inside (or at the edge of) a function
		}
		checkBacktrace(t, tab, top, pc)
	})
}

// fuzzMem is a fake address space: every word is readable except one in
// eight, and holds a value mixed from its address and a seed, so that
// unwinds read arbitrary but repeatable stack contents.
type fuzzMem struct{ seed uint64 }

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

func (m fuzzMem) ReadWord(addr uint64) (uint64, bool) {
	v := mix64(addr ^ m.seed)
	return v, v&7 != 0
}

// checkBacktrace unwinds from pc with a register file and memory derived
// from seed. Whatever the rows say, the walk must end within MaxFrames,
// fail only with an *UnwindError wrapping a documented sentinel, and keep
// every caller's stack pointer above its callee's.
func checkBacktrace(t *testing.T, tab *Table, pc, seed uint64) {
	t.Helper()
	var regs RegisterFile
	regs.PC = pc
	for r := 0; r < 32; r++ {
		if mix64(seed+uint64(r))&3 != 0 {
			regs.Set(r, mix64(seed^uint64(r)<<40))
		}
	}
	u := Unwinder{Table: tab, MaxFrames: 16}
	frames, err := u.Backtrace(&regs, fuzzMem{seed}, nil)
	if len(frames) > 16 {
		t.Fatalf("%d frames, MaxFrames 16", len(frames))
	}
	if err != nil {
		var ue *UnwindError
		if !errors.As(err, &ue) {
			t.Fatalf("Backtrace error %v (%T) is not an *UnwindError", err, err)
		}
		var fe *FormatError
		known := errors.As(err, &fe) // the FREs of a function are malformed
		for _, s := range []error{ErrNoFDE, ErrNoRow, ErrUnreadable, ErrCFANotAbove, ErrBadRule, ErrSignalFrame} {
			known = known || errors.Is(err, s)
		}
		if !known {
			t.Fatalf("Backtrace error %v wraps no documented sentinel", err)
		}
	}
	for i := 1; i < len(frames); i++ {
		if frames[i].SP < frames[i-1].SP || (i > 1 && frames[i].SP == frames[i-1].SP) {
			t.Fatalf("frame %d SP %#x not above frame %d SP %#x", i, frames[i].SP, i-1, frames[i-1].SP)
		}
	}
}

// checkLookupAgainstScan compares FindRow with a linear scan over every
// FDE and row of the sections whose rows decode; in the others a failed
// lookup must be a *FormatError or a lookup sentinel.
func checkLookupAgainstScan(t *testing.T, tab *Table, pc uint64) {
	t.Helper()
	var want *FDE
	for _, s := range tab.Sections {
		fdes, err := s.FDEs()
		if err != nil {
			var fe *FormatError
			if _, _, err := tab.FindRow(pc); err != nil && err != ErrNoFDE && err != ErrNoRow && !errors.As(err, &fe) {
				t.Fatalf("FindRow(%#x): %v is neither a lookup sentinel nor a *FormatError", pc, err)
			}
			return
		}
		for i := range fdes {
			g := &fdes[i]
			if covers(g, pc) && (want == nil || g.Start > want.Start) {
				want = g
			}
		}
	}
	f, row, err := tab.FindRow(pc)
	if want == nil {
		if err != ErrNoFDE || f != (Func{}) {
			t.Fatalf("FindRow(%#x) = %+v, %v; no FDE covers it", pc, f, err)
		}
		return
	}
	if f.Size == 0 || f.Start != want.Start || pc-f.Start >= uint64(f.Size) {
		t.Fatalf("FindRow(%#x) found %+v, %v; the scan finds the FDE at %#x", pc, f, err, want.Start)
	}
	if f.PCType != PCInc {
		return
	}
	// Among equal starts the lookup may pick another FDE than the scan:
	// scan the rows of the one it found.
	found, ferr := f.FDE()
	if ferr != nil {
		t.Fatalf("FindRow(%#x) found the FDE at %d, whose rows do not decode: %v", pc, f.Offset, ferr)
	}
	want = &found
	off := uint32(pc - f.Start)
	var wantRow *Row
	for i := range want.Rows {
		if want.Rows[i].Start <= off {
			wantRow = &want.Rows[i]
		}
	}
	switch {
	case wantRow != nil:
		if err != nil || row != *wantRow {
			t.Fatalf("FindRow(%#x) row %+v, %v; the scan finds %+v", pc, row, err, *wantRow)
		}
	case len(want.Rows) == 0 && want.version == Version3 && want.Type == FDETypeDefault:
		if err != nil || row.RA.Kind != RuleUndefined {
			t.Fatalf("FindRow(%#x) in an outermost FDE: %+v, %v", pc, row, err)
		}
	default:
		if err != ErrNoRow {
			t.Fatalf("FindRow(%#x) before any row: %+v, %v", pc, row, err)
		}
	}
}
