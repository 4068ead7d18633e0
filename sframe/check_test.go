package sframe

// Tests of Table.Check's rules on sections written by hand (decode_test.go's
// hb builder), in both byte orders: each rule's finding, at its offset, and
// no finding where the rule holds.

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// secOneFRE is a version 3 section (sorted, PCREL) of one function at
// 0x17000, 0x10 bytes, with one ADDR1 FRE at 0 of info byte info and the
// given 1-byte data words. Header 0-27, FDE index 28-43, attribute 44-48,
// FRE start byte 49, info byte 50, words from 51.
func secOneFRE(o binary.ByteOrder, abi ABI, fixedFP, fixedRA int, info int, words ...int) []byte {
	h := newHB(o).header(3, 0x5, int(abi), fixedFP, fixedRA, 0, 1, 1, int64(5+2+len(words)), 0, 16)
	h.u64(0x17000-28).u32(0x10, 0)
	h.u16(1).u8(0, 0, 0)
	h.u8(0, info).u8(words...)
	return h.b
}

func TestCheckFixedOffsets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		abi              ABI
		fixedFP, fixedRA int
		want             []finding
	}{
		{ABIAMD64LE, 0, -8, nil},
		{ABIAMD64LE, 0, 0, nil},
		{ABIAMD64LE, 0, -16, []finding{{ErrBadFixedOffset, 6}}},
		{ABIAMD64LE, 0, 8, []finding{{ErrBadFixedOffset, 6}}},
		{ABIAMD64LE, -16, -8, []finding{{ErrBadFixedOffset, 5}}},
		{ABIAArch64LE, 0, 0, nil},
		{ABIAArch64LE, 0, -8, []finding{{ErrBadFixedOffset, 6}}},
		{ABIAArch64BE, 16, 0, []finding{{ErrBadFixedOffset, 5}}},
		{ABIAArch64BE, 0, -8, []finding{{ErrBadFixedOffset, 6}}},
		{ABIS390XBE, 0, 0, nil},
		{ABIS390XBE, 0, -8, []finding{{ErrBadFixedOffset, 6}}},
		{ABIS390XBE, -16, -8, []finding{{ErrBadFixedOffset, 5}, {ErrBadFixedOffset, 6}}},
	} {
		for _, o := range bothOrders {
			where := fmt.Sprintf("%v fixed FP %d RA %d %v", c.abi, c.fixedFP, c.fixedRA, o)
			// One CFA word: valid whatever the fixed offsets leave.
			tab := decodeOK(t, where, secOneFRE(o, c.abi, c.fixedFP, c.fixedRA, 0x03, 8))
			for _, strict := range []bool{false, true} {
				checkFindings(t, where, tab.Check(strict), append(foreignOrder(c.abi, o, 0), c.want...)...)
			}
		}
	}
}

func TestCheckByteOrder(t *testing.T) {
	t.Parallel()
	for _, abi := range Targets {
		for _, o := range bothOrders {
			where := fmt.Sprintf("%v in %v", abi, o)
			tab := decodeOK(t, where, secOneFRE(o, abi, 0, 0, 0x03, 8))
			var want []finding
			if o != abi.ByteOrder() {
				want = []finding{{ErrBadByteOrder, 0}}
			}
			checkFindings(t, where, tab.Check(false), want...)
		}
	}
}

func TestCheckMangledRA(t *testing.T) {
	t.Parallel()
	for _, abi := range Targets {
		for _, o := range bothOrders {
			where := fmt.Sprintf("%v in %v", abi, o)
			// Info 0x87: mangled RA, SP-based, 3 one-byte words (CFA, RA, FP).
			tab := decodeOK(t, where, secOneFRE(o, abi, 0, 0, 0x87, 16, -8, -16))
			want := foreignOrder(abi, o, 0)
			if !abi.IsAArch64() {
				want = append(want, finding{ErrBadMangledRA, 50})
			}
			checkFindings(t, where, tab.Check(false), want...)
			// The same FRE without the bit.
			tab = decodeOK(t, where, secOneFRE(o, abi, 0, 0, 0x07, 16, -8, -16))
			checkFindings(t, where+" unmangled", tab.Check(false), foreignOrder(abi, o, 0)...)
		}
	}
}

// TestCheckOverlappingFREs: two functions whose FRE data share bytes, in
// version 2 (the FDE's FRE offset) and version 3 (attributes too).
func TestCheckOverlappingFREs(t *testing.T) {
	t.Parallel()
	for _, o := range bothOrders {
		// Version 2 AMD64: f0 at 0x100 with 2 FREs (@0 CFA sp+8, @1 sp+16)
		// at FRE offset 0 (68-70, 71-73); f1 at 0x200 with 1 FRE at
		// offset x. FDEs at 28 and 48.
		v2 := func(x int64) []byte {
			h := newHB(o).header(2, 0x1, 3, 0, -8, 0, 2, 3, 6, 0, 40)
			h.u32(0x100, 0x10, 0, 2).u8(0, 0).u16(0)
			h.u32(0x200, 0x10, x, 1).u8(0, 0).u16(0)
			h.u8(0, 0x03, 8, 1, 0x03, 16)
			return h.b
		}
		for _, c := range []struct {
			x    int64
			want []finding
		}{
			{0, []finding{{ErrOverlappingFREs, 68}}}, // f1 reads f0's first FRE
			{3, []finding{{ErrOverlappingFREs, 71}}}, // f1 reads f0's second FRE
		} {
			where := fmt.Sprintf("%v v2, f1 at FRE offset %d", o, c.x)
			tab := decodeOK(t, where, v2(c.x))
			checkFindings(t, where, tab.Check(false), append(foreignOrder(ABIAMD64LE, o, 0), c.want...)...)
		}
		// Apart: f0 alone uses 68-73; f1 given its own FRE after them.
		b := v2(6)
		b = append(b, 0, 0x03, 8)
		o.PutUint32(b[12:], 3) // num_fres
		o.PutUint32(b[16:], 9) // fre_len
		o.PutUint32(b[48+12:], 1)
		where := fmt.Sprintf("%v v2 apart", o)
		checkFindings(t, where, decodeOK(t, where, b).Check(false), foreignOrder(ABIAMD64LE, o, 0)...)

		// Version 3 AArch64: f0 at 0x100 (index 28), f1 at 0x200 (index
		// 44), FRE sub-section at 60. f0: attribute 60-64, one FRE 65-69
		// (start 0, SP, 3 words 16, w1, w2). f1's attribute at FRE
		// offset 8 (68-72) is read from f0's last two words and three
		// bytes after them; its FRE (start 0, SP, word 16) follows at
		// 73-75. fre_len 16.
		v3 := func(f1Attr int64) []byte {
			h := newHB(o).header(3, 0x5, 2, 0, 0, 0, 2, 2, 16, 0, 32)
			h.u64(0x100-28).u32(0x10, 0)
			h.u64(0x200-44).u32(0x10, f1Attr)
			h.u16(1).u8(0, 0, 0)
			h.u8(0, 0x07, 16)
			h.u16(1) // f0's words 2 and 3 (RA and FP): f1's FRE count 1
			h.u8(0, 0, 0)
			h.u8(0, 0x03, 16)
			return h.b
		}
		where = fmt.Sprintf("%v v3, f1's attribute inside f0's FRE", o)
		tab := decodeOK(t, where, v3(8))
		checkFindings(t, where, tab.Check(false), append(foreignOrder(ABIAArch64LE, o, 0), finding{ErrOverlappingFREs, 68})...)
		// f1 with f0's attribute: both read 60-69, f1 one FRE too few.
		b = v3(0)
		o.PutUint32(b[12:], 2) // two FREs, both f0's
		where = fmt.Sprintf("%v v3, one attribute for two FDEs", o)
		tab = decodeOK(t, where, b)
		checkFindings(t, where, tab.Check(false), append(foreignOrder(ABIAArch64LE, o, 0), finding{ErrOverlappingFREs, 60})...)
	}
}
