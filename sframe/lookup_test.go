package sframe

// Lookup tests in the style of delve's dwarf/frame: a function's first
// byte, last byte, one past the end, gaps, and PCMASK repetition, on the
// hand-written sections of decode_test.go.

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

type lookupCase struct {
	pc       uint64
	fdeStart uint64 // 0: expect err
	rowStart uint32
	err      error
}

func checkLookups(t *testing.T, where string, tab *Table, cases []lookupCase) {
	t.Helper()
	for _, c := range cases {
		f, row, err := tab.FindRow(c.pc)
		if c.err != nil {
			if !errors.Is(err, c.err) {
				t.Errorf("%s: FindRow(%#x) = %v, %+v, %v; want %v", where, c.pc, f, row, err, c.err)
			}
			if c.err == ErrNoFDE {
				if g, err := tab.FindFDE(c.pc); err != ErrNoFDE || g != (Func{}) {
					t.Errorf("%s: FindFDE(%#x) = %+v, %v; want the zero Func, ErrNoFDE", where, c.pc, g, err)
				}
			}
			continue
		}
		if err != nil || f.Size == 0 || f.Start != c.fdeStart || row.Start != c.rowStart {
			t.Errorf("%s: FindRow(%#x) = FDE %+v, row at %#x, %v; want FDE at %#x, row at %#x", where, c.pc, f, row.Start, err, c.fdeStart, c.rowStart)
		}
	}
}

func TestFindRowBoundaries(t *testing.T) {
	t.Parallel()
	// secV2AMD64: f0 [0x11000, 0x11020) rows @0 @1; f1 [0x11100, 0x11110) row @0.
	cases := []lookupCase{
		{pc: 0, err: ErrNoFDE},
		{pc: 0x10fff, err: ErrNoFDE},     // before the first function
		{pc: 0x11000, fdeStart: 0x11000}, // first byte
		{pc: 0x11001, fdeStart: 0x11000, rowStart: 1},
		{pc: 0x1101f, fdeStart: 0x11000, rowStart: 1}, // end-1
		{pc: 0x11020, err: ErrNoFDE},                  // end: the gap begins
		{pc: 0x110ff, err: ErrNoFDE},                  // last gap byte
		{pc: 0x11100, fdeStart: 0x11100},
		{pc: 0x1110f, fdeStart: 0x11100},
		{pc: 0x11110, err: ErrNoFDE}, // one past the last function
		{pc: ^uint64(0), err: ErrNoFDE},
	}
	for _, o := range bothOrders {
		for _, pcrel := range []bool{false, true} {
			checkLookups(t, o.String(), decodeOK(t, o.String(), secV2AMD64(o, pcrel)), cases)
		}
	}
}

func TestFindRowPCMask(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// secV3 f3: [base+0x12300, +0x20), rep 8, rows @0 and @4: the PC
		// offset modulo 8 picks the row, in every repetition.
		tab := decodeOK(t, o.String(), secV3(o))
		start := uint64(testBase + 0x12300)
		var cases []lookupCase
		for k := uint64(0); k < 4; k++ {
			for off := uint64(0); off < 8; off++ {
				want := uint32(0)
				if off >= 4 {
					want = 4
				}
				cases = append(cases, lookupCase{pc: start + k*8 + off, fdeStart: start, rowStart: want})
			}
		}
		cases = append(cases, lookupCase{pc: start + 0x20, err: ErrNoFDE}, lookupCase{pc: start - 1, err: ErrNoFDE})
		checkLookups(t, o.String()+"/v3", tab, cases)

		// Version 1, secV1AMD64 f1: [0x10200, +0x20) rows @0 and @0xb.
		// The version 1 rule (off & s) >= s picks row 0xb only where all
		// of 0xb's bits are set in the offset: 0xb, 0xf, 0x1b, 0x1f.
		tab = decodeOK(t, o.String(), secV1AMD64(o))
		cases = cases[:0]
		for off := uint64(0); off < 0x20; off++ {
			want := uint32(0)
			switch off {
			case 0xb, 0xf, 0x1b, 0x1f:
				want = 0xb
			}
			cases = append(cases, lookupCase{pc: 0x10200 + off, fdeStart: 0x10200, rowStart: want})
		}
		checkLookups(t, o.String()+"/v1", tab, cases)
	}
}

// secNoRows is a version 2 AMD64 section: f0 at 0x10100 (0x10 bytes)
// whose first FRE starts at 4; f1 at 0x10200 (0x10 bytes) with no FREs.
// FDEs at 28 and 48, FREs at 68: (4, SP, 8). Size 71.
func secNoRows(o binary.ByteOrder) []byte {
	h := newHB(o).header(2, 0x1, 3, 0, -8, 0, 2, 1, 3, 0, 40)
	h.u32(0x100, 0x10, 0, 1).u8(0, 0).u16(0)
	h.u32(0x200, 0x10, 3, 0).u8(0, 0).u16(0)
	h.u8(4, 0x03, 8)
	return h.b
}

func TestFindRowNoRow(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secNoRows(o))
		checkLookups(t, o.String(), tab, []lookupCase{
			{pc: 0x10100, err: ErrNoRow}, // before the first FRE
			{pc: 0x10103, err: ErrNoRow},
			{pc: 0x10104, fdeStart: 0x10100, rowStart: 4},
			{pc: 0x1010f, fdeStart: 0x10100, rowStart: 4},
			{pc: 0x10200, err: ErrNoRow}, // version 2 FDE without FREs
		})
		// FindRow on a function for a PC outside it, lazily and on the
		// materialised rows.
		fn, fde := tab.Sections[0].Func(0), &fdesOf(t, tab.Sections[0])[0]
		for _, pc := range []uint64{0x100ff, 0x10110} {
			if _, err := fn.FindRow(pc); err != ErrNoRow {
				t.Errorf("%v: Func.FindRow(%#x) outside the function = %v, want ErrNoRow", o, pc, err)
			}
			if _, err := fde.FindRow(pc); err != ErrNoRow {
				t.Errorf("%v: FDE.FindRow(%#x) outside the function = %v, want ErrNoRow", o, pc, err)
			}
		}

		// Version 3: a DEFAULT FDE without FREs is an outermost frame; a
		// FLEX one without FREs has no row.
		tab = decodeOK(t, o.String(), secV3(o))
		f2 := uint64(testBase + 0x12200)
		f, row, err := tab.FindRow(f2 + 0xf)
		want := Row{CFA: dUndef, RA: dUndef, FP: dSame}
		if err != nil || f.Start != f2 || row != want {
			t.Errorf("%v: v3 DEFAULT FDE without FREs: %v, %+v, %v; want outermost %+v", o, f, row, err, want)
		}
		if _, _, err := tab.FindRow(testBase + 0x12400); err != ErrNoRow {
			t.Errorf("%v: v3 FLEX FDE without FREs: %v, want ErrNoRow", o, err)
		}
		// The signal FDE's rows carry the flag.
		if _, row, err := tab.FindRow(testBase + 0x12000); err != nil || !row.Signal {
			t.Errorf("%v: signal FDE row %+v, %v", o, row, err)
		}
	}
}

// TestFindRowTopOfAddressSpace: a function may end at 2^64 exactly;
// one that would wrap past it is refused.
func TestFindRowTopOfAddressSpace(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// Version 3, PCREL: start = base + 28 + value = 2^64 - 0x10.
		sec := func(size int64) []byte {
			h := newHB(o).header(3, 0x5, 3, 0, -8, 0, 1, 1, 8, 0, 16)
			h.u64(-0x10-testBase-28).u32(size, 0)
			h.u16(1).u8(0, 0, 0)
			h.u8(0, 0x03, 8)
			return h.b
		}
		tab := decodeOK(t, o.String(), sec(0x10))
		top := ^uint64(0)
		checkLookups(t, o.String(), tab, []lookupCase{
			{pc: top - 0x10, err: ErrNoFDE},
			{pc: top - 0xf, fdeStart: top - 0xf},
			{pc: top, fdeStart: top - 0xf},
			{pc: 0, err: ErrNoFDE},
		})
		_, err := Decode(sec(0x11), testBase)
		var fe *FormatError
		if !errors.Is(err, ErrFDEOutOfBounds) || !errors.As(err, &fe) || fe.Off != 28 {
			t.Errorf("%v: function wrapping past 2^64: %v; want ErrFDEOutOfBounds at 28", o, err)
		}
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run beside parallel tests.
	tab := decodeOK(t, "v3", secV3(binary.LittleEndian))
	pcs := []uint64{testBase + 0x12000, testBase + 0x12101, testBase + 0x12200, testBase + 0x1231f, 0x5}
	n := testing.AllocsPerRun(100, func() {
		for _, pc := range pcs {
			_, _, _ = tab.FindRow(pc)
			f, _ := tab.FindFDE(pc)
			_, _ = f.FindRow(pc)
		}
	})
	if n != 0 {
		t.Errorf("FindRow allocates %v times per run", n)
	}
}

// TestFindFDEBuckets checks FindFDE on tables large enough for the bucket
// index (minBuckets functions or more) against a scan of every function:
// random sizes and gaps, some functions of size 0, some that nest inside
// others, stored sorted or not, PCs at every start, end-1, end, in gaps,
// before the first and past the last function, in both byte orders.
func TestFindFDEBuckets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(randomSeed(t), 0))
	for round := 0; round < 20; round++ {
		n := minBuckets + r.IntN(400)
		var fdes []FDE
		addr := uint64(0x400000 + r.IntN(1<<20))
		for i := 0; i < n; i++ {
			size := uint32(r.IntN(200))
			if r.IntN(4) == 0 {
				size = uint32(r.IntN(1 << 16)) // a long one: sparse blocks
			}
			if r.IntN(10) == 0 {
				size = 0
			}
			f := FDE{Start: addr, Size: size}
			if size > 0 {
				f.Rows = []Row{{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same}}
			}
			fdes = append(fdes, f)
			if r.IntN(8) == 0 && size > 2 {
				// A function nested inside this one.
				fdes = append(fdes, FDE{Start: addr + 1, Size: size / 2, Rows: f.Rows})
			}
			addr += uint64(size) + uint64(r.IntN(3))*uint64(r.IntN(64))
		}
		// Every other round stored unsorted, in random order: the index
		// sorts a permutation.
		unsorted := round%2 == 1
		stored := fdes
		if unsorted {
			stored = append([]FDE(nil), fdes...)
			r.Shuffle(len(stored), func(i, j int) { stored[i], stored[j] = stored[j], stored[i] })
		}
		for _, o := range bothOrders {
			b, err := Encode(stored, EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Order: o, CFAFixedRA: -8, Base: 0x10000, Unsorted: unsorted})
			if err != nil {
				t.Fatal(err)
			}
			tab := decodeOK(t, o.String(), b)
			if tab.buckets == nil || (tab.perm != nil) != unsorted {
				t.Fatalf("%d functions, buckets %v, permutation %v (stored unsorted: %v)", len(fdes), tab.buckets != nil, tab.perm != nil, unsorted)
			}
			var pcs []uint64
			for _, f := range fdes {
				pcs = append(pcs, f.Start-1, f.Start, f.Start+uint64(f.Size)/2, f.End()-1, f.End(), f.End()+1)
			}
			pcs = append(pcs, 0, ^uint64(0))
			for _, pc := range pcs {
				var want *FDE // the covering function with the greatest start, stored last
				for i := range stored {
					if covers(&stored[i], pc) && (want == nil || stored[i].Start >= want.Start) {
						want = &stored[i]
					}
				}
				got, err := tab.FindFDE(pc)
				switch {
				case want == nil && err != ErrNoFDE:
					t.Fatalf("round %d %v: FindFDE(%#x) = %+v, %v; no function covers it", round, o, pc, got, err)
				case want != nil && (err != nil || got.Start != want.Start || got.Size != want.Size):
					t.Fatalf("round %d %v: FindFDE(%#x) = %+v, %v; want the function at %#x of %d bytes", round, o, pc, got, err, want.Start, want.Size)
				}
			}
		}
	}
}
