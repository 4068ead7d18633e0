package sframe

import (
	"errors"
	"testing"
)

// handSection returns the hand-written bytes of the encode case whose name
// is given.
func handSection(t *testing.T, name string) []byte {
	t.Helper()
	for _, c := range encodeCases {
		if c.name == name {
			return hexBytes(t, c.want)
		}
	}
	t.Fatalf("no encode case %q", name)
	return nil
}

// v1LE and v1BE are one version 1 AMD64 section in both byte orders,
// written by hand: 17-byte FDEs without rep_size or padding.
const (
	v1LE = `
	e2de 01 01 03 00 f8 00
	01000000 02000000 07000000 00000000 11000000
	00100000 20000000 00000000 02000000 00   # start, size, FRE offset, 2 FREs, info
	00 03 08
	01 05 10 f0`
	v1BE = `
	dee2 01 01 03 00 f8 00
	00000001 00000002 00000007 00000000 00000011
	00001000 00000020 00000000 00000002 00
	00 03 08
	01 05 10 f0`
)

// swapPairs are the same section in both byte orders, each side written
// by hand.
var swapPairs = []struct {
	name  string
	case_ string // encode case holding one order
	other string // the other order, by hand
}{
	{name: "amd64 v2", case_: "amd64 v2 LE with PCREL (binutils 2.45)", other: `
		dee2 02 05 03 00 f8 00
		00000001 00000001 00000003 00000000 00000014
		00000fe4 00000010 00000000 00000001 00 00 0000
		00 03 08`},
	{name: "amd64 v2 ADDR4, 2- and 4-byte words", case_: "amd64 v2 ADDR4 and 1/2/4-byte data words", other: `
		dee2 02 01 03 00 f8 00
		00000001 00000004 00000021 00000000 00000014
		00001000 00010000 00000000 00000004 02 00 0000
		00000000 03 08
		00000100 24 0010 ff80
		00000200 24 0010 0080
		00008000 43 00012345`},
	{name: "aarch64 v3 ADDR2", case_: "aarch64 v3 BE, ADDR2, mangled RA, key B", other: `
		e2de 03 05 01 00 00 00
		01000000 04000000 1d000000 00000000 10000000
		e4fffeffffffffff 00030000 00000000
		0400 21 00 00
		0000 03 00
		0400 87 20 e8 e0
		0401 26 0002 e8ff e0ff
		fc02 05 10 f8`},
	{name: "s390x v2", case_: "s390x v2 BE: CFA scaling, RA padding, register words, outermost", other: `
		e2de 02 05 04 00 00 00
		01000000 06000000 18000000 00000000 14000000
		e4efffff 40000000 00000000 06000000 00 00 0000
		00 03 00
		06 07 00 d0 b8
		0a 07 14 d0 b8
		10 05 00 23
		20 06 14 00 b8
		30 00`},
	{name: "amd64 v3 flex", case_: "amd64 v3 LE flex: DRAP, RA off its slot, registers", other: `
		dee2 03 05 03 00 f8 00
		00000001 00000005 0000002b 00000000 00000010
		0000000000000fe4 00000100 00000000
		0005 01 01 00
		0000 04 39 08
		0010 0a 33 f8 00 02 f0
		0020 04 51 00
		0080 28 0039 1000 0002 fff0
		0090 0c 69 08 59 00 61 00`},
	{name: "amd64 v3 aux header, FREs out of index order", case_: "amd64 v3 aux header, PCMASK, FRE data in given order", other: `
		dee2 03 05 03 00 f8 03
		00000002 00000003 00000013 00000000 00000020
		aabbcc
		0000000000000fe1 00000010 00000008
		0000000000000fe1 00000030 00000000
		0001 00 00 00  00 03 08
		0002 10 00 10  00 03 08  0b 03 10`},
}

func TestSwapByteOrderHandWritten(t *testing.T) {
	t.Parallel()
	for _, p := range swapPairs {
		t.Run(p.name, func(t *testing.T) {
			a, b := handSection(t, p.case_), hexBytes(t, p.other)
			got, err := SwapByteOrder(a)
			if err != nil {
				t.Fatalf("swap: %v", err)
			}
			diffBytes(t, got, b)
			back, err := SwapByteOrder(b)
			if err != nil {
				t.Fatalf("swap back: %v", err)
			}
			diffBytes(t, back, a)
		})
	}
	t.Run("v1", func(t *testing.T) {
		got, err := SwapByteOrder(hexBytes(t, v1LE))
		if err != nil {
			t.Fatal(err)
		}
		diffBytes(t, got, hexBytes(t, v1BE))
	})
}

func TestSwapByteOrderTwiceIsIdentity(t *testing.T) {
	t.Parallel()
	inputs := map[string][]byte{"v1 LE": hexBytes(t, v1LE), "v1 BE": hexBytes(t, v1BE)}
	for _, c := range encodeCases {
		inputs[c.name] = hexBytes(t, c.want)
	}
	for name, in := range inputs {
		once, err := SwapByteOrder(in)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(in) > HeaderSize && string(once) == string(in) {
			t.Errorf("%s: swapping changed nothing", name)
		}
		twice, err := SwapByteOrder(once)
		if err != nil {
			t.Errorf("%s: second swap: %v", name, err)
			continue
		}
		if string(twice) != string(in) {
			t.Errorf("%s: swapping twice is not the identity:\n got % x\nwant % x", name, twice, in)
		}
	}
}

func TestSwapByteOrderConcatenated(t *testing.T) {
	t.Parallel()
	// A little-endian v3 section, 4 zero bytes of alignment padding, a
	// big-endian v1 section, 3 trailing zero bytes: each section flips by
	// its own magic, the padding stays.
	le := handSection(t, "amd64 v3 LE default")
	in := append(append(append(append([]byte{}, le...), 0, 0, 0, 0), hexBytes(t, v1BE)...), 0, 0, 0)
	got, err := SwapByteOrder(in)
	if err != nil {
		t.Fatal(err)
	}
	leSwapped, err := SwapByteOrder(le)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append(append([]byte{}, leSwapped...), 0, 0, 0, 0), hexBytes(t, v1LE)...), 0, 0, 0)
	diffBytes(t, got, want)
}

func TestSwapByteOrderDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	in := hexBytes(t, v1LE)
	keep := string(in)
	if _, err := SwapByteOrder(in); err != nil {
		t.Fatal(err)
	}
	if string(in) != keep {
		t.Error("SwapByteOrder changed its input")
	}
}

func TestSwapByteOrderMalformed(t *testing.T) {
	t.Parallel()
	base := func() []byte { return hexBytes(t, v1LE) }
	v3 := func() []byte { return handSection(t, "amd64 v3 LE default") }
	cases := []struct {
		name string
		in   []byte
		err  error
		off  int
	}{
		{"empty", nil, ErrTruncated, 0},
		{"short header", base()[:20], ErrTruncated, 0},
		{"bad magic", append([]byte{0x12, 0x34}, base()[2:]...), ErrBadMagic, 0},
		{"version 4", func() []byte { b := base(); b[2] = 4; return b }(), ErrBadVersion, 2},
		{"FDEs overlap FREs", func() []byte { b := base(); b[24] = 10; return b }(), ErrBadSubsection, 20},
		{"FREs past the end", func() []byte { b := base(); b[16] = 8; return b }(), ErrTruncated, 16},
		{"FDE's FREs outside", func() []byte { b := base(); b[28+8] = 9; return b }(), ErrFDEOutOfBounds, 36},
		{"v3 attribute outside", func() []byte { b := v3(); b[28+12] = 12; return b }(), ErrFDEOutOfBounds, 40},
		{"FRE type 3", func() []byte { b := base(); b[28+16] = 3; return b }(), ErrBadFREType, 45},
		{"data word size code 3", func() []byte { b := base(); b[46] = 0x63; return b }(), ErrBadDataWordSize, 46},
		{"data words past the end", func() []byte { b := base(); b[49] = 0x07; return b }(), ErrFREOutOfBounds, 48},
		{"count mismatch", func() []byte { b := base(); b[12] = 3; return b }(), ErrCountMismatch, 12},
		{"FDE claims more FREs than fit", func() []byte { b := base(); b[12] = 200; b[28+12] = 200; return b }(), ErrCountMismatch, 28},
		{"attributes overlap", func() []byte {
			b := handSection(t, "amd64 v3 aux header, PCMASK, FRE data in given order")
			b[31+12] = 1 // first index entry's attribute one byte into the other's
			return b
		}(), ErrFREOutOfBounds, 64},
		{"junk after padding", append(append(base(), 0, 0), 0x55, 0x66), ErrBadMagic, 54},
		{"junk right after", append(base(), 0x55, 0x66), ErrBadMagic, 52},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := SwapByteOrder(c.in)
			if err == nil {
				t.Fatalf("accepted, wrote % x", out)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError", err, err)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("error %v does not wrap %v", err, c.err)
			}
			if fe.Off != c.off {
				t.Errorf("error at offset %d, want %d (%v)", fe.Off, c.off, err)
			}
		})
	}
}

// TestSwapByteOrderDecodesAlike checks that a swapped section decodes, in
// the other byte order, to the same functions and rows: the hand-written
// encode cases (TestFixturesSwapByteOrder does the fixtures).
func TestSwapByteOrderDecodesAlike(t *testing.T) {
	t.Parallel()
	type input struct {
		name string
		raw  []byte
		base uint64
	}
	var inputs []input
	for _, c := range encodeCases {
		inputs = append(inputs, input{"hand-written " + c.name, hexBytes(t, c.want), c.opt.Base})
	}
	inputs = append(inputs, input{"hand-written v1", hexBytes(t, v1LE), 0})
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			a, err := Decode(in.raw, in.base)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			swapped, err := SwapByteOrder(in.raw)
			if err != nil {
				t.Fatalf("SwapByteOrder: %v", err)
			}
			b, err := Decode(swapped, in.base)
			if err != nil {
				t.Fatalf("Decode of the swapped section: %v", err)
			}
			if len(a.Sections) != len(b.Sections) {
				t.Fatalf("%d sections, swapped %d", len(a.Sections), len(b.Sections))
			}
			for i := range a.Sections {
				sa, sb := a.Sections[i], b.Sections[i]
				if sa.Order == sb.Order {
					t.Errorf("section %d: both decode as %v", i, sa.Order)
				}
				ha, hb := sa.Header, sb.Header
				if ha.Version != hb.Version || ha.Flags != hb.Flags || ha.ABI != hb.ABI ||
					ha.CFAFixedFP != hb.CFAFixedFP || ha.CFAFixedRA != hb.CFAFixedRA ||
					string(ha.AuxHeader) != string(hb.AuxHeader) || ha.NumFDEs != hb.NumFDEs ||
					ha.NumFREs != hb.NumFREs || ha.FRELen != hb.FRELen || ha.FDEOff != hb.FDEOff || ha.FREOff != hb.FREOff {
					t.Errorf("section %d: header %+v, swapped %+v", i, ha, hb)
				}
				fa, fb := fdesOf(t, sa), fdesOf(t, sb)
				compareFDEs(t, "swapped", fb, fa)
				for j := range fa {
					if j < len(fb) && fa[j].Offset != fb[j].Offset {
						t.Errorf("FDE %d at offset %d, swapped at %d", j, fa[j].Offset, fb[j].Offset)
					}
				}
			}
		})
	}
}

// FuzzSwapByteOrder feeds arbitrary bytes: SwapByteOrder must not panic,
// a swap it accepts must undo itself, and a section Decode accepts must
// decode to the same rows after the swap, or fail to at the same offset.
func FuzzSwapByteOrder(f *testing.F) {
	for _, c := range encodeCases {
		f.Add(hexBytes(f, c.want))
	}
	f.Add(hexBytes(f, v1LE))
	f.Fuzz(func(t *testing.T, in []byte) {
		once, err := SwapByteOrder(in)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError", err, err)
			}
			return
		}
		twice, err := SwapByteOrder(once)
		if err != nil {
			t.Fatalf("the swapped bytes do not swap back: %v", err)
		}
		if string(twice) != string(in) {
			t.Fatalf("swapping twice is not the identity")
		}
		a, err := Decode(in, 0)
		if err != nil {
			return
		}
		b, err := Decode(once, 0)
		if err != nil {
			t.Fatalf("Decode accepts the section but not its swap: %v", err)
		}
		if len(a.Sections) != len(b.Sections) {
			t.Fatalf("%d sections, swapped %d", len(a.Sections), len(b.Sections))
		}
		for i := range a.Sections {
			// Decode reads no FRE: malformed FREs must be found at the same
			// place in both orders.
			fa, errA := a.Sections[i].FDEs()
			fb, errB := b.Sections[i].FDEs()
			var ea, eb *FormatError
			switch {
			case errA == nil && errB == nil:
				compareFDEs(t, "swapped", fb, fa)
			case !errors.As(errA, &ea) || !errors.As(errB, &eb) || ea.Err != eb.Err || ea.Off != eb.Off:
				t.Fatalf("section %d: rows fail with %v, swapped with %v", i, errA, errB)
			}
		}
	})
}
