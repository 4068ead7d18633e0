package sframe

// Decode tests on sections written by hand, field by field, from the
// SFrame specification (versions 1-3) with the hb builder below. The
// builder only appends the values it is given in the chosen byte order: it
// computes no offsets and knows nothing of Encode, so every count, offset
// and data word in these tests was worked out by hand.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// hb appends fixed-width fields in one byte order.
type hb struct {
	o binary.ByteOrder
	b []byte
}

func newHB(o binary.ByteOrder) *hb { return &hb{o: o} }

// u8 appends bytes (negative values as two's complement).
func (h *hb) u8(vs ...int) *hb {
	for _, v := range vs {
		h.b = append(h.b, byte(v))
	}
	return h
}

func (h *hb) u16(vs ...int) *hb {
	for _, v := range vs {
		h.b = h.o.(binary.AppendByteOrder).AppendUint16(h.b, uint16(v))
	}
	return h
}

func (h *hb) u32(vs ...int64) *hb {
	for _, v := range vs {
		h.b = h.o.(binary.AppendByteOrder).AppendUint32(h.b, uint32(v))
	}
	return h
}

func (h *hb) u64(v int64) *hb {
	h.b = h.o.(binary.AppendByteOrder).AppendUint64(h.b, uint64(v))
	return h
}

// header appends the 28-byte header: magic, version, flags, abi, fixed FP
// and RA offsets, auxhdr_len, then num_fdes, num_fres, fre_len, fdeoff,
// freoff.
func (h *hb) header(ver, flags, abi, fixedFP, fixedRA, auxLen int, nFDEs, nFREs, freLen, fdeOff, freOff int64) *hb {
	return h.u16(0xdee2).u8(ver, flags, abi, fixedFP, fixedRA, auxLen).u32(nFDEs, nFREs, freLen, fdeOff, freOff)
}

var bothOrders = []binary.ByteOrder{binary.LittleEndian, binary.BigEndian}

// Shorthand rules for expectations.
func dExpr(reg int, off int64) Rule { return Rule{Kind: RuleExpr, Reg: reg, Offset: off} }
func dSaved(off int64) Rule         { return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: off, Deref: true} }
func dInReg(reg int) Rule           { return Rule{Kind: RuleExpr, Reg: reg} }

var (
	dSame  = Rule{Kind: RuleSame}
	dUndef = Rule{Kind: RuleUndefined}
)

const testBase = 0x10000 // virtual address of buf[0] in these tests

// secV2AMD64 is a version 2 AMD64 section with two functions:
//
//	f0 at 0x11000, 0x20 bytes, ADDR1 FREs: @0 CFA=rsp+8; @1 CFA=rsp+16, FP at CFA-16
//	f1 at 0x11100, 0x10 bytes, ADDR2 FREs: @0 CFA=rbp+256 (2-byte word)
//
// Layout: header 0-27, FDE 0 at 28, FDE 1 at 48, FREs at 68 (freoff 40):
// f0's FREs 68-74 (3 + 4 bytes), f1's FRE 75-79. Size 80.
func secV2AMD64(o binary.ByteOrder, pcrel bool) []byte {
	flags := 0x1
	start0, start1 := int64(0x1000), int64(0x1100) // from the section start
	if pcrel {
		flags |= 0x4
		start0, start1 = 0x1000-28, 0x1100-48 // from the fields at 28 and 48
	}
	h := newHB(o).header(2, flags, 3, 0, -8, 0, 2, 3, 12, 0, 40)
	h.u32(start0, 0x20, 0, 2).u8(0x00, 0).u16(0) // FDE 0: ADDR1, PCINC
	h.u32(start1, 0x10, 7, 1).u8(0x01, 0).u16(0) // FDE 1: ADDR2
	h.u8(0, 0x03, 8)                             // @0 SP base, 1 word of 1 byte: 8
	h.u8(1, 0x05, 16, -16)                       // @1 SP base, 2 words: 16, -16
	h.u16(0).u8(0x22).u16(256)                   // @0 FP base, 1 word of 2 bytes: 256
	return h.b
}

var wantV2AMD64 = []FDE{
	{Start: 0x11000, Size: 0x20, FREType: FREAddr1, Offset: 28, Rows: []Row{
		{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
		{Start: 1, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSaved(-16)},
	}},
	{Start: 0x11100, Size: 0x10, FREType: FREAddr2, Offset: 48, Rows: []Row{
		{Start: 0, CFA: dExpr(RegAMD64FP, 256), RA: dSaved(-8), FP: dSame},
	}},
}

// checkFDEs compares decoded FDEs with expectations, ignoring the
// unexported version field.
func checkFDEs(t *testing.T, where string, got []FDE, want []FDE) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d FDEs, want %d", where, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		g.version, w.version = 0, 0
		if len(g.Rows) == 0 && len(w.Rows) == 0 {
			g.Rows, w.Rows = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: FDE %d:\n got %+v\nwant %+v", where, i, g, w)
		}
	}
}

func decodeOK(t *testing.T, where string, buf []byte) *Table {
	t.Helper()
	tab, err := Decode(buf, testBase)
	if err != nil {
		t.Fatalf("%s: Decode: %v", where, err)
	}
	return tab
}

func TestDecodeV2AMD64(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		for _, pcrel := range []bool{false, true} {
			where := o.String()
			if pcrel {
				where += "/pcrel"
			}
			tab := decodeOK(t, where, secV2AMD64(o, pcrel))
			if len(tab.Sections) != 1 || tab.ABI != ABIAMD64LE || tab.Order != o {
				t.Fatalf("%s: %d sections, ABI %v, order %v", where, len(tab.Sections), tab.ABI, tab.Order)
			}
			s := tab.Sections[0]
			wantH := Header{Version: 2, Flags: FlagFDESorted, ABI: ABIAMD64LE, CFAFixedRA: -8, NumFDEs: 2, NumFREs: 3, FRELen: 12, FDEOff: 0, FREOff: 40}
			if pcrel {
				wantH.Flags |= FlagFuncStartPCRel
			}
			if !reflect.DeepEqual(s.Header, wantH) {
				t.Errorf("%s: header %+v, want %+v", where, s.Header, wantH)
			}
			if s.Offset != 0 || s.Size != 80 || s.Base != testBase || s.Order != o {
				t.Errorf("%s: section offset %d size %d base %#x order %v, want 0, 80, %#x, %v", where, s.Offset, s.Size, s.Base, s.Order, testBase, o)
			}
			checkFDEs(t, where, fdesOf(t, s), wantV2AMD64)
		}
	}
}

// secV1AMD64 is a version 1 section (17-byte FDEs, no rep_size) with a
// PCINC function and a PCMASK one (two 16-byte PLT entries):
//
//	f0 at 0x10100 (offset 0x100 from the section), 0x10 bytes: @0 rsp+8, @4 rsp+16
//	f1 at 0x10200, 0x20 bytes, PCMASK: @0 rsp+8, @0xb rsp+16
//
// FDEs at 28 and 45, FREs at 62 (freoff 34): f0 at FRE offset 0 (62-67),
// f1 at FRE offset 6 (68-73). Size 74.
func secV1AMD64(o binary.ByteOrder) []byte {
	h := newHB(o).header(1, 0x3, 3, 0, -8, 0, 2, 4, 12, 0, 34)
	h.u32(0x100, 0x10, 0, 2).u8(0x00)
	h.u32(0x200, 0x20, 6, 2).u8(0x10) // PCMASK
	h.u8(0, 0x03, 8, 4, 0x03, 16)
	h.u8(0, 0x03, 8, 0xb, 0x03, 16)
	return h.b
}

func TestDecodeV1(t *testing.T) {
	t.Parallel()
	want := []FDE{
		{Start: 0x10100, Size: 0x10, Offset: 28, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
			{Start: 4, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSame},
		}},
		{Start: 0x10200, Size: 0x20, PCType: PCMask, Offset: 45, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
			{Start: 0xb, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSame},
		}},
	}
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV1AMD64(o))
		s := tab.Sections[0]
		if s.Header.Version != Version1 || s.Header.Flags != FlagFDESorted|FlagFramePointer || s.Size != 74 {
			t.Errorf("%v: version %d flags %#x size %d", o, s.Header.Version, s.Header.Flags, s.Size)
		}
		fdes := fdesOf(t, s)
		checkFDEs(t, o.String(), fdes, want)
		if fdes[1].version != Version1 {
			t.Errorf("%v: FDE version %d, want 1", o, fdes[1].version)
		}
	}
}

// secV2AArch64 has one function at 0x10400 of 0x40 bytes, pauth key B,
// with four FREs: @0 CFA=sp+0 (RA still in x30); @4 CFA=sp+16, RA at
// CFA-8, FP at CFA-16, RA signed; @8 CFA=x29+16, RA at CFA-8 (2 words);
// @0xc outermost (no words).
// FDE at 28, FREs at 48: 3 + 5 + 4 + 2 = 14 bytes. Size 62.
func secV2AArch64(o binary.ByteOrder) []byte {
	h := newHB(o).header(2, 0x1, 2, 0, 0, 0, 1, 4, 14, 0, 20)
	h.u32(0x400, 0x40, 0, 4).u8(0x20, 0).u16(0) // key B
	h.u8(0, 0x03, 0)
	h.u8(4, 0x87, 16, -8, -16) // mangled, SP, 3 words
	h.u8(8, 0x04, 16, -8)      // FP base, 2 words
	h.u8(0xc, 0x00)
	return h.b
}

func TestDecodeV2AArch64(t *testing.T) {
	t.Parallel()
	want := []FDE{{Start: 0x10400, Size: 0x40, PAuthKey: PAuthKeyB, Offset: 28, Rows: []Row{
		{Start: 0, CFA: dExpr(RegAArch64SP, 0), RA: dSame, FP: dSame, PAuthKey: PAuthKeyB},
		{Start: 4, CFA: dExpr(RegAArch64SP, 16), RA: dSaved(-8), FP: dSaved(-16), MangledRA: true, PAuthKey: PAuthKeyB},
		{Start: 8, CFA: dExpr(RegAArch64FP, 16), RA: dSaved(-8), FP: dSame, PAuthKey: PAuthKeyB},
		{Start: 0xc, CFA: dUndef, RA: dUndef, FP: dSame, PAuthKey: PAuthKeyB},
	}}}
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV2AArch64(o))
		checkFDEs(t, o.String(), fdesOf(t, tab.Sections[0]), want)
	}
}

// secV2S390X: one function at 0x10800 of 0x80 bytes, FREs:
//
//	@0   CFA=r15+160 (word 0)
//	@6   CFA=r15+176 (word 2), RA padding 0, FP at CFA-72
//	@0xa CFA=r11+160, RA at CFA-48
//	@0xe CFA=r15+160, RA in r14 (word 29 = 14<<1|1), FP in f0 = DWARF 16 (word 33)
//
// FDE at 28, FREs at 48: 3 + 5 + 4 + 5 = 17 bytes. Size 65.
func secV2S390X(o binary.ByteOrder) []byte {
	h := newHB(o).header(2, 0x5, 4, 0, 0, 0, 1, 4, 17, 0, 20)
	h.u32(0x10800-28, 0x80, 0, 4).u8(0x00, 0).u16(0)
	h.u8(0, 0x03, 0)
	h.u8(6, 0x07, 2, 0, -72)
	h.u8(0xa, 0x04, 0, -48)
	h.u8(0xe, 0x07, 0, 29, 33)
	return h.b
}

func TestDecodeV2S390X(t *testing.T) {
	t.Parallel()
	want := []FDE{{Start: testBase + 0x10800, Size: 0x80, Offset: 28, Rows: []Row{
		{Start: 0, CFA: dExpr(RegS390XSP, 160), RA: dSame, FP: dSame},
		{Start: 6, CFA: dExpr(RegS390XSP, 176), RA: dSame, FP: dSaved(-72)},
		{Start: 0xa, CFA: dExpr(RegS390XFP, 160), RA: dSaved(-48), FP: dSame},
		{Start: 0xe, CFA: dExpr(RegS390XSP, 160), RA: dInReg(RegS390XRA), FP: dInReg(16)},
	}}}
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV2S390X(o))
		checkFDEs(t, o.String(), fdesOf(t, tab.Sections[0]), want)
	}
}

// secV3 holds five version 3 AMD64 functions (PCREL, sorted); starts
// are relative to each index entry's own field. Index at 28, 44, 60, 76,
// 92 (fdeoff 0, freoff 80: FRE sub-section at 108). Functions (start,
// size) and FRE data:
//
//	f0 0x12000+0x40, DEFAULT, signal: attr 108-112, FRE 113-115: @0 1 word 8 (SP)
//	f1 0x12100+0x30, FLEX: attr 116-120, FREs 121-139:
//	   @0 [ctl 7<<3|1, 8]                            CFA = r7+8
//	   @1 [ctl 6<<3|3, -8, 0, ctl 6<<3|3, 0]          CFA = *(r6-8), RA default, FP = *(r6+0)
//	   @2 [ctl 7<<3|1, 16, ctl 2, -8, ctl 1<<3|1, 0]  CFA r7+16, RA = *(CFA-8), FP in r1
//	f2 0x12200+0x10, DEFAULT, no FREs: attr 140-144
//	f3 0x12300+0x20, PCMASK rep 8: attr 145-149, FREs 150-155: @0 1 word 8; @4 1 word 16
//	(3 bytes no FDE refers to: 156-158)
//	f4 0x12400+0x08, FLEX, no FREs: attr 159-163. End 164: fre_len 56.
func secV3(o binary.ByteOrder) []byte {
	h := newHB(o).header(3, 0x5, 3, 0, -8, 0, 5, 6, 56, 0, 80)
	h.u64(0x12000-28).u32(0x40, 0)
	h.u64(0x12100-44).u32(0x30, 8)
	h.u64(0x12200-60).u32(0x10, 32)
	h.u64(0x12300-76).u32(0x20, 37)
	h.u64(0x12400-92).u32(0x08, 51)
	// @108 (FRE offset 0): f0 attribute: 1 FRE, info signal, info2 DEFAULT, rep 0
	h.u16(1).u8(0x80, 0x00, 0)
	h.u8(0, 0x03, 8)
	// @116 (8): f1 attribute: 3 FREs, info 0, FLEX
	h.u16(3).u8(0x00, 0x01, 0)
	h.u8(0, 0x04, 7<<3|1, 8)
	h.u8(1, 0x0a, 6<<3|3, -8, 0, 6<<3|3, 0)
	h.u8(2, 0x0c, 7<<3|1, 16, 2, -8, 1<<3|1, 0)
	// @140 (32): f2 attribute: no FREs, DEFAULT
	h.u16(0).u8(0x00, 0x00, 0)
	// @145 (37): f3 attribute: 2 FREs, PCMASK, rep 8
	h.u16(2).u8(0x10, 0x00, 8)
	h.u8(0, 0x03, 8, 4, 0x03, 16)
	h.u8(0, 0, 0) // 156-158: bytes no FDE refers to
	// @159 (51): f4 attribute: FLEX, no FREs
	h.u16(0).u8(0x00, 0x01, 0)
	return h.b
}

func TestDecodeV3(t *testing.T) {
	t.Parallel()
	// Hand count: header 28 + 5*16 = 108 = FRE sub-section start.
	// f0 attr 108-112, FRE 113-115; f1 attr 116-120, FREs 121-124,
	// 125-131, 132-139; f2 attr 140-144; f3 attr 145-149, FREs 150-155;
	// 3 unused bytes 156-158; f4 attr 159-163. fre_len 164-108 = 56.
	ra := dSaved(-8)
	want := []FDE{
		{Start: testBase + 0x12000, Size: 0x40, Signal: true, Offset: 28, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: ra, FP: dSame, Signal: true},
		}},
		{Start: testBase + 0x12100, Size: 0x30, Type: FDETypeFlex, Offset: 44, Rows: []Row{
			{Start: 0, CFA: dExpr(7, 8), RA: ra, FP: dSame},
			{Start: 1, CFA: Rule{Kind: RuleExpr, Reg: 6, Offset: -8, Deref: true}, RA: ra, FP: Rule{Kind: RuleExpr, Reg: 6, Deref: true}},
			{Start: 2, CFA: dExpr(7, 16), RA: dSaved(-8), FP: dInReg(1)},
		}},
		{Start: testBase + 0x12200, Size: 0x10, Offset: 60},
		{Start: testBase + 0x12300, Size: 0x20, PCType: PCMask, RepSize: 8, Offset: 76, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: ra, FP: dSame},
			{Start: 4, CFA: dExpr(RegAMD64SP, 16), RA: ra, FP: dSame},
		}},
		{Start: testBase + 0x12400, Size: 0x08, Type: FDETypeFlex, Offset: 92},
	}
	for _, o := range bothOrders {
		buf := secV3(o)
		if len(buf) != 164 {
			t.Fatalf("hand layout: section is %d bytes, counted 164", len(buf))
		}
		tab := decodeOK(t, o.String(), buf)
		s := tab.Sections[0]
		if s.Size != 164 || s.Header.NumFREs != 6 || s.Header.FRELen != 56 {
			t.Errorf("%v: size %d, header %+v", o, s.Size, s.Header)
		}
		checkFDEs(t, o.String(), fdesOf(t, s), want)
	}
}

// secV3S390XFlex is a version 3 s390x section with one FLEX function at
// 0x13000 of 0x20 bytes whose RA and FP live in FPRs (a leaf saving them
// in f0 = DWARF 16 and f2 = DWARF 17), and a DEFAULT function at 0x13100
// whose odd RA word is a plain stack offset in version 3.
//
// Index at 28 and 44, FRE sub-section at 60.
// f0 attr 60-64, FRE 65-72: @0 [15<<3|1 = 121, 2 (-> 176), 16<<3|1 = 129, 0, 17<<3|1 = 137, 0]
// f1 attr 73-77, FRE 78-82: @0 SP base, words 0 (-> CFA 160), -41, -72.
func secV3S390XFlex(o binary.ByteOrder) []byte {
	h := newHB(o).header(3, 0x5, 4, 0, 0, 0, 2, 2, 23, 0, 32)
	h.u64(0x13000-28).u32(0x20, 0)
	h.u64(0x13100-44).u32(0x20, 13)
	h.u16(1).u8(0x00, 0x01, 0)
	h.u8(0, 0x0c, 121, 2, 129, 0, 137, 0)
	h.u16(1).u8(0x00, 0x00, 0)
	h.u8(0, 0x07, 0, -41, -72)
	return h.b
}

func TestDecodeV3S390XFlex(t *testing.T) {
	t.Parallel()
	want := []FDE{
		{Start: testBase + 0x13000, Size: 0x20, Type: FDETypeFlex, Offset: 28, Rows: []Row{
			{Start: 0, CFA: dExpr(RegS390XSP, 176), RA: dInReg(16), FP: dInReg(17)},
		}},
		{Start: testBase + 0x13100, Size: 0x20, Offset: 44, Rows: []Row{
			{Start: 0, CFA: dExpr(RegS390XSP, 160), RA: dSaved(-41), FP: dSaved(-72)},
		}},
	}
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV3S390XFlex(o))
		checkFDEs(t, o.String(), fdesOf(t, tab.Sections[0]), want)
	}
}

func TestDecodeAuxHeader(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// secV2AMD64 with a 5-byte auxiliary header: every offset after
		// the header moves by 5; fdeoff/freoff stay as they were.
		base := secV2AMD64(o, false)
		buf := append([]byte(nil), base[:28]...)
		buf[7] = 5
		buf = append(buf, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5)
		buf = append(buf, base[28:]...)
		tab := decodeOK(t, o.String(), buf)
		s := tab.Sections[0]
		if string(s.Header.AuxHeader) != "\xa1\xa2\xa3\xa4\xa5" || s.Size != 85 {
			t.Errorf("%v: aux header %x, size %d; want a1..a5, 85", o, s.Header.AuxHeader, s.Size)
		}
		want := append([]FDE(nil), wantV2AMD64...)
		want[0].Offset, want[1].Offset = 33, 53
		checkFDEs(t, o.String(), fdesOf(t, s), want)
		if errs := tab.Check(true); !hasErr(errs, ErrBadAuxHeader, 7) {
			t.Errorf("%v: Check(strict) = %v, want ErrBadAuxHeader at 7", o, errs)
		}
	}
}

func hasErr(errs []error, sentinel error, off int) bool {
	for _, e := range errs {
		var fe *FormatError
		if errors.As(e, &fe) && errors.Is(e, sentinel) && fe.Off == off {
			return true
		}
	}
	return false
}

// TestDecodeConcatenated: three sections back to back. The first is
// secV2AMD64 without PCREL (80 bytes, a multiple of 8), the second
// secV1AMD64 (74 bytes) at 80 followed by 6 zero bytes of padding, the
// third a one-function version 2 section at 160 whose function lies below
// all others, stored with its two FDEs unsorted. Trailing zeros end it.
func TestDecodeConcatenated(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		var buf []byte
		buf = append(buf, secV2AMD64(o, false)...)
		buf = append(buf, secV1AMD64(o)...)
		buf = append(buf, 0, 0, 0, 0, 0, 0)
		h := newHB(o).header(2, 0x0, 3, 0, -8, 0, 2, 2, 6, 0, 40)
		h.u32(-0x40, 0x10, 3, 1).u8(0, 0).u16(0) // at 0x10000+160-0x40 = 0x10060
		h.u32(-0x80, 0x20, 0, 1).u8(0, 0).u16(0) // at 0x10020
		h.u8(0, 0x03, 8, 0, 0x03, 16)
		buf = append(buf, h.b...)
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		tab := decodeOK(t, o.String(), buf)
		if len(tab.Sections) != 3 {
			t.Fatalf("%v: %d sections, want 3", o, len(tab.Sections))
		}
		for i, want := range []struct {
			off, size int
			base      uint64
		}{{0, 80, testBase}, {80, 74, testBase + 80}, {160, 74, testBase + 160}} {
			s := tab.Sections[i]
			if s.Offset != want.off || s.Size != want.size || s.Base != want.base {
				t.Errorf("%v: section %d at %d, %d bytes, base %#x; want %d, %d, %#x", o, i, s.Offset, s.Size, s.Base, want.off, want.size, want.base)
			}
		}
		third := fdesOf(t, tab.Sections[2])
		if third[0].Start != 0x10060 || third[1].Start != 0x10020 || third[0].Offset != 188 || third[1].Offset != 208 {
			t.Errorf("%v: third section FDEs at %#x (off %d) and %#x (off %d)", o, third[0].Start, third[0].Offset, third[1].Start, third[1].Offset)
		}
		if third[0].Rows[0].CFA.Offset != 16 || third[1].Rows[0].CFA.Offset != 8 {
			t.Errorf("%v: third section rows %+v %+v", o, third[0].Rows, third[1].Rows)
		}
		// The index covers all six functions in address order.
		starts := append([]uint64(nil), tab.starts...)
		// The version 1 section's starts count from its own first byte (0x10050).
		want := []uint64{0x10020, 0x10060, 0x10150, 0x10250, 0x11000, 0x11100}
		if !reflect.DeepEqual(starts, want) {
			t.Errorf("%v: index starts %#x, want %#x", o, starts, want)
		}
		for _, pc := range want {
			f, err := tab.FindFDE(pc)
			if err != nil || f.Start != pc {
				t.Errorf("%v: FindFDE(%#x) = %v, %v", o, pc, f, err)
			}
		}
		// Check: the third section is unsorted but does not claim to be;
		// strict mode reports its missing flags and the old versions.
		var order []finding
		for _, off := range []int{0, 80, 160} {
			order = append(order, foreignOrder(ABIAMD64LE, o, off)...)
		}
		checkFindings(t, o.String()+" Check(false)", tab.Check(false), order...)
		checkFindings(t, o.String()+" Check(true)", tab.Check(true), append(order,
			finding{ErrBadVersion, 2}, finding{ErrBadVersion, 82}, finding{ErrBadVersion, 162},
			finding{ErrBadFlags, 3}, finding{ErrBadFlags, 83}, finding{ErrBadFlags, 163},
			finding{ErrNotSorted, 163})...)
	}
}

func TestDecodeSignalAndUnusedBits(t *testing.T) {
	t.Parallel()
	// Bit 7 of the FDE info byte is signal_p in version 3 only; in
	// version 2 it is unused and ignored.
	for _, o := range bothOrders {
		buf := secV2AMD64(o, false)
		buf[28+16] |= 0x80
		tab := decodeOK(t, o.String(), buf)
		if f := fdesOf(t, tab.Sections[0])[0]; f.Signal || f.Rows[0].Signal {
			t.Errorf("%v: version 2 FDE reads as a signal frame", o)
		}
	}
}

// mutation is one reject case: change a valid section and expect a
// sentinel at a byte offset.
type mutation struct {
	name   string
	build  func(o binary.ByteOrder) []byte
	err    error
	offset int
}

func put32(o binary.ByteOrder, b []byte, off int, v uint32) []byte {
	o.PutUint32(b[off:], v)
	return b
}

func rejectCases() []mutation {
	v2 := func(f func(o binary.ByteOrder, b []byte) []byte) func(binary.ByteOrder) []byte {
		return func(o binary.ByteOrder) []byte { return f(o, secV2AMD64(o, false)) }
	}
	v3 := func(f func(o binary.ByteOrder, b []byte) []byte) func(binary.ByteOrder) []byte {
		return func(o binary.ByteOrder) []byte { return f(o, secV3(o)) }
	}
	set := func(off int, v byte) func(o binary.ByteOrder, b []byte) []byte {
		return func(o binary.ByteOrder, b []byte) []byte { b[off] = v; return b }
	}
	set32 := func(off int, v uint32) func(o binary.ByteOrder, b []byte) []byte {
		return func(o binary.ByteOrder, b []byte) []byte { return put32(o, b, off, v) }
	}
	return []mutation{
		{"empty", func(binary.ByteOrder) []byte { return nil }, ErrTruncated, 0},
		{"short header", v2(func(o binary.ByteOrder, b []byte) []byte { return b[:27] }), ErrTruncated, 0},
		{"bad magic", v2(set(0, 0x12)), ErrBadMagic, 0},
		{"version 0", v2(set(2, 0)), ErrBadVersion, 2},
		{"version 4", v2(set(2, 4)), ErrBadVersion, 2},
		{"v2 flag 0x8", v2(set(3, 0x9)), ErrBadFlags, 3},
		{"v3 frame-pointer flag", v3(set(3, 0x7)), ErrBadFlags, 3},
		{"v1 pcrel flag", func(o binary.ByteOrder) []byte { b := secV1AMD64(o); b[3] = 0x5; return b }, ErrBadFlags, 3},
		{"abi 0", v2(set(4, 0)), ErrBadABI, 4},
		{"abi 5", v2(set(4, 5)), ErrBadABI, 4},
		{"aux header past end", v2(set(7, 200)), ErrBadAuxHeader, 7},
		{"fdeoff > freoff", v2(set32(20, 41)), ErrBadSubsection, 20},
		{"FDEs run into FREs", v2(set32(8, 3)), ErrBadSubsection, 8},
		{"huge num_fdes", v2(set32(8, 0xffffffff)), ErrBadSubsection, 8},
		{"freoff past end", v2(set32(24, 1000)), ErrTruncated, 24},
		{"fre_len past end", v2(set32(16, 13)), ErrTruncated, 16},
		{"huge num_fres", v2(set32(12, 0xffffffff)), ErrCountMismatch, 12},
		{"num_fres above FDE sum", v2(set32(12, 4)), ErrCountMismatch, 12},
		{"FDE FREs past header count", v2(set32(12, 2)), ErrCountMismatch, 60},
		{"v3 attribute outside FRE sub-section", v3(set32(28+12, 54)), ErrFDEOutOfBounds, 40},
		{"v2 FRE offset outside FRE sub-section", v2(set32(48+8, 13)), ErrFREOutOfBounds, 56},
		{"FRE type 3", v2(set(48+16, 0x03)), ErrBadFREType, 64},
		{"v3 FDE type 2", v3(set(116+3, 2)), ErrBadFDEType, 119},
		{"v2 PCMASK rep 0", v2(set(28+16, 0x10)), ErrBadRepSize, 45},
		{"v3 PCMASK rep 0", v3(set(145+4, 0)), ErrBadRepSize, 149},
		{"trailing garbage", v2(func(o binary.ByteOrder, b []byte) []byte { return append(b, 0, 0, 1) }), ErrTrailingData, 82},
		{"padding longer than 7", v2(func(o binary.ByteOrder, b []byte) []byte {
			return append(append(b, make([]byte, 8)...), secV2AMD64(o, false)...)
		}), ErrTrailingData, 80},
		{"second section in the other order", func(o binary.ByteOrder) []byte {
			other := binary.ByteOrder(binary.BigEndian)
			if o == binary.BigEndian {
				other = binary.LittleEndian
			}
			return append(secV2AMD64(o, false), secV2AMD64(other, false)...)
		}, ErrBadMagic, 80},
		{"second section of another ABI", func(o binary.ByteOrder) []byte {
			return append(secV2AMD64(o, false), secV2AArch64(o)...)
		}, ErrBadABI, 84},
		{"second section truncated", v2(func(o binary.ByteOrder, b []byte) []byte { return append(b, secV2AMD64(o, false)[:20]...) }), ErrTruncated, 80},
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, c := range rejectCases() {
		for _, o := range bothOrders {
			buf := c.build(o)
			tab, err := Decode(buf, testBase)
			if err == nil {
				t.Errorf("%s/%v: Decode accepted it (%d sections)", c.name, o, len(tab.Sections))
				continue
			}
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, c.err) || fe.Off != c.offset {
				t.Errorf("%s/%v: got %v; want %v at offset %d", c.name, o, err, c.err, c.offset)
			}
		}
	}
}

// freMutation is a malformed FRE: Decode, which reads no FRE, accepts
// the section; Check reports the problem at the byte offset given,
// Section.FDEs fails with it, and a lookup at pc, which reads that FRE,
// fails with a *FormatError.
type freMutation struct {
	name   string
	build  func(o binary.ByteOrder) []byte
	err    error
	offset int
	pc     uint64
}

func freRejectCases() []freMutation {
	mut := func(sec func(binary.ByteOrder) []byte, off int, v byte) func(binary.ByteOrder) []byte {
		return func(o binary.ByteOrder) []byte { b := sec(o); b[off] = v; return b }
	}
	v2 := func(o binary.ByteOrder) []byte { return secV2AMD64(o, false) }
	return []freMutation{
		// f1's 5-byte FRE starts at 75 (FRE offset 7); at FRE offset 10
		// (78) its info byte would be at 80, the sub-section's end.
		{"FRE past sub-section", func(o binary.ByteOrder) []byte { return put32(o, v2(o), 48+8, 10) }, ErrFREOutOfBounds, 80, 0x11100},
		{"data word size code 3", mut(v2, 72, 0x63), ErrBadDataWordSize, 72, 0x11001},
		{"AMD64 3 data words", mut(v2, 72, 0x07), ErrBadDataWordCount, 72, 0x11001},
		{"FRE start past function size", mut(v2, 71, 0x21), ErrFREStartPastEnd, 71, 0x11005},
		{"FRE starts not increasing", mut(v2, 71, 0), ErrFREsNotIncreasing, 71, 0x11000},
		{"flex 1 data word", mut(secV3, 122, 0x02), ErrBadDataWordCount, 123, testBase + 0x12100},
		{"flex CFA without reg_p", mut(secV3, 123, 7<<3), ErrBadFlexRule, 123, testBase + 0x12100},
		// FRE @1 of f1 (at 125) with 4 words instead of 5 ends at 131,
		// where the lookup then reads a third FRE starting at 0.
		{"flex control word without displacement", mut(secV3, 126, 0x08), ErrBadDataWordCount, 130, testBase + 0x12101},
		// AArch64 FRE @4 with 4 words of 1 byte (reads 16 -8 -16 and the
		// start of the next FRE).
		{"AArch64 4 words", mut(secV2AArch64, 52, 0x09), ErrBadDataWordCount, 52, 0x10404},
		// FLEX FRE of f1 @2 has 6 words (count 0x0c); 7 words reads a
		// seventh (f2's first attribute byte) and has one left over.
		{"FLEX 7 words", mut(secV3, 133, 0x0e), ErrBadDataWordCount, 140, testBase + 0x12102},
	}
}

func TestFREsRejected(t *testing.T) {
	t.Parallel()
	for _, c := range freRejectCases() {
		for _, o := range bothOrders {
			where := c.name + "/" + o.String()
			tab, err := Decode(c.build(o), testBase)
			if err != nil {
				t.Errorf("%s: Decode, which reads no FRE, refuses the section: %v", where, err)
				continue
			}
			if errs := tab.Check(false); !hasErr(errs, c.err, c.offset) {
				t.Errorf("%s: Check(false) = %v; want %v at offset %d", where, errs, c.err, c.offset)
			}
			_, err = tab.Sections[0].FDEs()
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, c.err) || fe.Off != c.offset {
				t.Errorf("%s: FDEs: %v; want %v at offset %d", where, err, c.err, c.offset)
			}
			if _, _, err := tab.FindRow(c.pc); !errors.As(err, &fe) {
				t.Errorf("%s: FindRow(%#x) = %v; want a *FormatError", where, c.pc, err)
			}
		}
	}
}

func TestCheckSortedFlagAndOverlap(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// The third section of TestDecodeConcatenated, now claiming to be
		// sorted, with its second function overlapping the first.
		h := newHB(o).header(2, 0x1, 3, 0, -8, 0, 2, 2, 6, 0, 40)
		h.u32(0x60, 0x10, 3, 1).u8(0, 0).u16(0) // [0x10060, 0x10070)
		h.u32(0x20, 0xe0, 0, 1).u8(0, 0).u16(0) // [0x10020, 0x10100)
		h.u8(0, 0x03, 8, 0, 0x03, 16)
		tab := decodeOK(t, o.String(), h.b)
		checkFindings(t, o.String(), tab.Check(false), append(foreignOrder(ABIAMD64LE, o, 0),
			finding{ErrNotSorted, 48}, finding{ErrOverlappingFDEs, 28})...)
		// Lookups still work: the nested function wins inside itself,
		// the enclosing one around it, also past the nested one's end.
		for _, c := range []struct{ pc, want uint64 }{
			{0x10064, 0x10060}, {0x10050, 0x10020}, {0x10070, 0x10020}, {0x100ff, 0x10020},
		} {
			if f, err := tab.FindFDE(c.pc); err != nil || f.Start != c.want {
				t.Errorf("%v: FindFDE(%#x) = %v, %v; want the function at %#x", o, c.pc, f, err, c.want)
			}
		}
		if _, err := tab.FindFDE(0x10100); err != ErrNoFDE {
			t.Errorf("%v: FindFDE(0x10100) = %v, want ErrNoFDE", o, err)
		}
	}
}

func TestCheckStrictAcceptsKernelShape(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		tab := decodeOK(t, o.String(), secV3(o))
		checkFindings(t, o.String(), tab.Check(true), foreignOrder(ABIAMD64LE, o, 0)...)
	}
}

// readHexFile reads a testdata/handmade file: hex digits, whitespace, and
// comments from '#' to the end of the line (as hexBytes reads them).
func readHexFile(tb testing.TB, path string) []byte {
	tb.Helper()
	return hexBytes(tb, string(readFixtureFile(tb, path)))
}

func TestDecodeHandmadeFiles(t *testing.T) {
	t.Parallel()
	keyB := PAuthKeyB
	type handmade struct {
		file  string
		base  uint64
		abi   ABI
		order binary.ByteOrder
		want  []FDE
	}
	cases := []handmade{
		{"v3-aarch64_be-pauth.hex", 0x3f0000, ABIAArch64BE, binary.BigEndian, []FDE{
			{Start: 0x400000, Size: 0x30, PAuthKey: keyB, Offset: 28, Rows: []Row{
				{Start: 0, CFA: dExpr(RegAArch64SP, 0), RA: dSame, FP: dSame, PAuthKey: keyB},
				{Start: 4, CFA: dExpr(RegAArch64SP, 16), RA: dSaved(-8), FP: dSaved(-16), MangledRA: true, PAuthKey: keyB},
			}},
			{Start: 0x400040, Size: 0x10, Type: FDETypeFlex, Offset: 44, Rows: []Row{
				{Start: 0, CFA: dExpr(RegAArch64SP, 0), RA: dInReg(RegAArch64LR), FP: dSame},
			}},
		}},
		{"v3-x86-64-drap.hex", 0x400000, ABIAMD64LE, binary.LittleEndian, []FDE{
			{Start: 0x401000, Size: 0x40, Type: FDETypeFlex, Offset: 28, Rows: []Row{
				{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
				{Start: 9, CFA: Rule{Kind: RuleExpr, Reg: RegAMD64FP, Offset: -8, Deref: true}, RA: dSaved(-8), FP: dSaved(-16)},
				{Start: 0x3f, CFA: dUndef, RA: dUndef, FP: dSame},
			}},
		}},
	}
	// cfa_fixed_ra_offset 0 on AMD64: the RA comes from the second data
	// word, the FP from the third (see the file's comments); FLEX padding
	// means no RA rule.
	fixedRA0 := []FDE{
		{Start: 0x1000, Size: 0x20, Offset: 28, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
			{Start: 1, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSaved(-16)},
			{Start: 4, CFA: dExpr(RegAMD64FP, 16), RA: dSaved(-8), FP: dSaved(-16)},
			{Start: 0x1e, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSaved(-16)},
		}},
		{Start: 0x1020, Size: 0x10, Offset: 44, Rows: []Row{{Start: 0, CFA: dUndef, RA: dUndef, FP: dSame}}},
		{Start: 0x1030, Size: 0x10, Type: FDETypeFlex, Offset: 60, Rows: []Row{
			{Start: 0, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSaved(-16)},
			{Start: 2, CFA: dExpr(RegAMD64SP, 8), RA: dSame, FP: dSaved(-16)},
		}},
	}
	cases = append(cases,
		handmade{"v3-x86-64-fixedra0-le.hex", 0, ABIAMD64LE, binary.LittleEndian, fixedRA0},
		handmade{"v3-x86-64-fixedra0-be.hex", 0, ABIAMD64LE, binary.BigEndian, fixedRA0})
	for _, c := range cases {
		buf := readHexFile(t, filepath.Join("testdata", "handmade", c.file))
		tab, err := Decode(buf, c.base)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if tab.ABI != c.abi || tab.Order != c.order || len(tab.Sections) != 1 || tab.Sections[0].Size != len(buf) {
			t.Errorf("%s: ABI %v order %v, %d sections", c.file, tab.ABI, tab.Order, len(tab.Sections))
		}
		checkFDEs(t, c.file, fdesOf(t, tab.Sections[0]), c.want)
		checkFindings(t, c.file, tab.Check(true), foreignOrder(c.abi, c.order, 0)...)
	}
}

// TestCheckDuplicateStarts: two FDEs at one start are reported in both
// modes, even when one has size 0 and they do not overlap (an empty
// function before the next, as GNU as writes it).
func TestCheckDuplicateStarts(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// Sorted version 3 section, two FDEs at 0x14000 (index at 28 and
		// 44), the second of size 0 so that they do not overlap.
		h := newHB(o).header(3, 0x5, 3, 0, -8, 0, 2, 1, 13, 0, 32)
		h.u64(0x14000-28).u32(0x10, 0)
		h.u64(0x14000-44).u32(0, 8)
		h.u16(1).u8(0, 0, 0)
		h.u8(0, 0x03, 8)
		h.u16(0).u8(0, 0, 0)
		tab := decodeOK(t, o.String(), h.b)
		want := append(foreignOrder(ABIAMD64LE, o, 0), finding{ErrDuplicateFDE, 44})
		for _, strict := range []bool{false, true} {
			checkFindings(t, fmt.Sprintf("%v strict %v", o, strict), tab.Check(strict), want...)
		}
		// One of them at another start: no finding.
		o.PutUint64(h.b[44:], uint64(0x14010-44))
		tab = decodeOK(t, o.String(), h.b)
		checkFindings(t, o.String()+" apart", tab.Check(true), foreignOrder(ABIAMD64LE, o, 0)...)
	}
}

// TestDecodeEmptySection: a header without FDEs or FREs (what GNU as
// writes for a file without functions) decodes; Check(strict) reports it
// as the Linux unwinder refuses it.
func TestDecodeEmptySection(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		buf := newHB(o).header(3, 0x5, 3, 0, -8, 0, 0, 0, 0, 0, 0).b
		buf = append(buf, 0, 0, 0, 0) // padding to 32
		buf = append(buf, secV3(o)...)
		tab := decodeOK(t, o.String(), buf)
		if len(tab.Sections) != 2 || tab.Sections[0].Size != 28 || len(fdesOf(t, tab.Sections[0])) != 0 || tab.Sections[1].Offset != 32 {
			t.Fatalf("%v: sections %+v", o, tab.Sections)
		}
		// secV3's starts are relative to their own fields: 32 bytes later
		// in the buffer, its functions are 32 bytes higher too.
		if f, _, err := tab.FindRow(testBase + 32 + 0x12000); err != nil || f.Start != testBase+32+0x12000 {
			t.Errorf("%v: FindRow in the second section: %v, %v", o, f, err)
		}
		want := append(foreignOrder(ABIAMD64LE, o, 0), foreignOrder(ABIAMD64LE, o, 32)...)
		checkFindings(t, o.String(), tab.Check(true), append(want, finding{ErrCountMismatch, 8})...)
	}
}

// secAtEnd is a version 3 AMD64 section (PCREL, sorted) whose FREs reach
// the function's end, as GNU as writes them: f0 at 0x15000 is empty
// (size 0) with one FRE at 0; f1 at 0x15000 of 3 bytes (push %rbp; pop
// %rbp; ret) has FREs at 0, 1 and 3, the last for a CFI directive after
// the ret.
//
// Index at 28 and 44 (fdeoff 0, freoff 32): FRE sub-section at 60.
// f0 attr 60-64, FRE 65-67; f1 attr 68-72, FREs 73-75, 76-79, 80-83.
// fre_len 84-60 = 24.
func secAtEnd(o binary.ByteOrder) []byte {
	h := newHB(o).header(3, 0x5, 3, 0, -8, 0, 2, 4, 24, 0, 32)
	h.u64(0x15000-28).u32(0, 0)
	h.u64(0x15000-44).u32(3, 8)
	h.u16(1).u8(0, 0, 0)
	h.u8(0, 0x03, 8)
	h.u16(3).u8(0, 0, 0)
	h.u8(0, 0x03, 8)
	h.u8(1, 0x05, 16, -16)
	h.u8(3, 0x05, 8, -16)
	return h.b
}

// TestFREStartAtEnd: an FRE whose start equals the function size decodes
// (it is a row covering no PC), lookups never return it, Check reports it
// with its own sentinel, and Encode writes it back.
func TestFREStartAtEnd(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		buf := secAtEnd(o)
		if len(buf) != 84 {
			t.Fatalf("hand layout: %d bytes, counted 84", len(buf))
		}
		tab := decodeOK(t, o.String(), buf)
		start := uint64(testBase + 0x15000)
		want := []FDE{
			{Start: start, Size: 0, Offset: 28, Rows: []Row{{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame}}},
			{Start: start, Size: 3, Offset: 44, Rows: []Row{
				{Start: 0, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSame},
				{Start: 1, CFA: dExpr(RegAMD64SP, 16), RA: dSaved(-8), FP: dSaved(-16)},
				{Start: 3, CFA: dExpr(RegAMD64SP, 8), RA: dSaved(-8), FP: dSaved(-16)},
			}},
		}
		fdes := fdesOf(t, tab.Sections[0])
		checkFDEs(t, o.String(), fdes, want)
		checkLookups(t, o.String(), tab, []lookupCase{
			{pc: start, fdeStart: start},
			{pc: start + 1, fdeStart: start, rowStart: 1},
			{pc: start + 2, fdeStart: start, rowStart: 1}, // the last byte: not the row at 3
			{pc: start + 3, err: ErrNoFDE},
		})
		// The empty function shares its start with the next one.
		findings := append(foreignOrder(ABIAMD64LE, o, 0), finding{ErrFREStartAtEnd, 65}, finding{ErrFREStartAtEnd, 80}, finding{ErrDuplicateFDE, 44})
		checkFindings(t, o.String(), tab.Check(false), findings...)
		checkFindings(t, o.String()+" strict", tab.Check(true), findings...)
		h := tab.Sections[0].Header
		out, err := Encode(fdes, EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Order: o, Base: testBase, CFAFixedRA: h.CFAFixedRA})
		if err != nil {
			t.Fatalf("%v: Encode: %v", o, err)
		}
		diffBytes(t, out, buf)
	}
}

// TestDecodeFixedOffsetsDecideLayout: the header's fixed RA and FP
// offsets, not the ABI, decide which data words a DEFAULT FRE holds
// ([CFA, RA unless fixed, FP unless fixed]), on AMD64 and AArch64 alike.
// One version 3 function at 0x16000 of 0x10 bytes with one FRE of as
// many words as the header leaves: from 16, -8, -24.
func TestDecodeFixedOffsetsDecideLayout(t *testing.T) {
	t.Parallel()
	for _, abi := range []ABI{ABIAMD64LE, ABIAArch64LE} {
		for _, c := range []struct {
			fixedRA, fixedFP int
			words            []int
			ra, fp           Rule
		}{
			{0, 0, []int{16, -8, -24}, dSaved(-8), dSaved(-24)},
			{-8, 0, []int{16, -24}, dSaved(-8), dSaved(-24)},
			{0, -16, []int{16, -8}, dSaved(-8), dSaved(-16)},
			{-8, -16, []int{16}, dSaved(-8), dSaved(-16)},
		} {
			for _, o := range bothOrders {
				where := fmt.Sprintf("%v fixed RA %d FP %d %v", abi, c.fixedRA, c.fixedFP, o)
				sec := func(words []int) []byte {
					n := len(words)
					h := newHB(o).header(3, 0x5, int(abi), c.fixedFP, c.fixedRA, 0, 1, 1, int64(5+2+n), 0, 16)
					h.u64(0x16000-28).u32(0x10, 0)
					h.u16(1).u8(0, 0, 0)
					h.u8(0, 1|n<<1).u8(words...) // SP-based, n words of 1 byte
					return h.b
				}
				tab := decodeOK(t, where, sec(c.words))
				want := []FDE{{Start: testBase + 0x16000, Size: 0x10, Offset: 28, Rows: []Row{
					{CFA: dExpr(abi.SPRegister(), 16), RA: c.ra, FP: c.fp},
				}}}
				checkFDEs(t, where, fdesOf(t, tab.Sections[0]), want)
				// One word more than the header leaves room for.
				tab = decodeOK(t, where, sec(append(append([]int(nil), c.words...), -32)))
				if errs := tab.Check(false); !hasErr(errs, ErrBadDataWordCount, 28+16+5+1) {
					t.Errorf("%s: one word too many: Check = %v; want ErrBadDataWordCount at the FRE's info byte", where, errs)
				}
			}
		}
	}
}
