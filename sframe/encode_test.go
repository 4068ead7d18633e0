package sframe

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sfconform/sfconform/internal/testenv"
)

// hexBytes parses hand-written section bytes: hex digits in any grouping,
// '#' starts a comment that runs to the end of the line.
func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	var digits strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, r := range line {
			if r != ' ' && r != '\t' && r != '|' {
				digits.WriteRune(r)
			}
		}
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("bad hand-written hex: %v", err)
	}
	return b
}

// Rules as the decoder reports them.
func cfaAt(reg int, off int64) Rule { return Rule{Kind: RuleExpr, Reg: reg, Offset: off} }
func savedAt(off int64) Rule        { return Rule{Kind: RuleExpr, Reg: RegCFA, Offset: off, Deref: true} }
func inReg(reg int) Rule            { return Rule{Kind: RuleExpr, Reg: reg} }

var (
	same      = Rule{Kind: RuleSame}
	undefined = Rule{Kind: RuleUndefined}
	amd64RA   = savedAt(-8)
)

// diffBytes reports the first differing offset of two byte slices.
func diffBytes(t *testing.T, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	n := min(len(got), len(want))
	i := 0
	for i < n && got[i] == want[i] {
		i++
	}
	t.Errorf("bytes differ from offset %d (0x%x): got %d bytes, want %d\n got: % x\nwant: % x",
		i, i, len(got), len(want), got, want)
}

type encodeCase struct {
	name string
	fdes []FDE
	opt  EncodeOptions
	want string // hand-written from the specification
}

var encodeCases = []encodeCase{
	{
		name: "amd64 v3 LE default",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Base: 0x400000, CFAFixedRA: -8},
		fdes: []FDE{{Start: 0x401000, Size: 0x20, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 1, CFA: cfaAt(RegAMD64SP, 16), RA: amd64RA, FP: savedAt(-16)},
			{Start: 4, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(-16)},
		}}},
		want: `
		e2de        # magic 0xdee2, little-endian
		03          # version 3
		05          # flags: FDE_SORTED | FUNC_START_PCREL
		03          # ABI AMD64
		00          # fixed FP offset: none
		f8          # fixed RA offset -8
		00          # no auxiliary header
		01000000    # 1 FDE
		03000000    # 3 FREs
		10000000    # FRE sub-section: 5 attribute + 3 + 4 + 4 bytes
		00000000    # FDE index right after the header
		10000000    # FREs after one 16-byte index entry
		# FDE index at offset 28 (address 0x40001c)
		e40f000000000000  # 0x401000 - 0x40001c
		20000000          # size 0x20
		00000000          # attribute at FRE offset 0
		# attribute
		0300 00 00 00     # 3 FREs, info: ADDR1 INC; info2: DEFAULT; rep 0
		00 03 08          # +0: SP-based, 1 word of 1 byte: CFA=sp+8
		01 05 10 f0       # +1: SP-based, 2 words: CFA=sp+16, FP at CFA-16
		04 04 10 f0       # +4: FP-based, 2 words: CFA=fp+16, FP at CFA-16
		`,
	},
	{
		name: "amd64 v2 LE without PCREL (binutils 2.44)",
		opt:  EncodeOptions{Version: Version2, ABI: ABIAMD64LE, Base: 0x400000, CFAFixedRA: -8},
		fdes: []FDE{{Start: 0x401000, Size: 0x20, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 1, CFA: cfaAt(RegAMD64SP, 16), RA: amd64RA, FP: savedAt(-16)},
			{Start: 4, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(-16)},
		}}},
		want: `
		e2de 02 01 03 00 f8 00  # magic, v2, flags FDE_SORTED only, AMD64, fixed RA -8
		01000000 03000000       # 1 FDE, 3 FREs
		0b000000                # FRE sub-section 3 + 4 + 4 bytes
		00000000 14000000       # FDE at 0, FREs after one 20-byte FDE
		00100000                # start 0x401000 - section 0x400000
		20000000                # size
		00000000                # FRE offset
		03000000                # 3 FREs
		00 00 0000              # info ADDR1 INC, rep 0, padding
		00 03 08
		01 05 10 f0
		04 04 10 f0
		`,
	},
	{
		name: "amd64 v2 LE with PCREL (binutils 2.45)",
		opt:  EncodeOptions{Version: Version2, ABI: ABIAMD64LE, Base: 0x400000, CFAFixedRA: -8, PCRel: true},
		fdes: []FDE{{Start: 0x401000, Size: 0x10, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
		}}},
		want: `
		e2de 02 05 03 00 f8 00  # flags FDE_SORTED | FUNC_START_PCREL
		01000000 01000000 03000000 00000000 14000000
		e40f0000                # 0x401000 - 0x40001c (the field itself)
		10000000 00000000 01000000 00 00 0000
		00 03 08
		`,
	},
	{
		name: "amd64 v2 in big-endian order",
		opt:  EncodeOptions{Version: Version2, ABI: ABIAMD64LE, Order: binary.BigEndian, Base: 0x400000, CFAFixedRA: -8, PCRel: true},
		fdes: []FDE{{Start: 0x401000, Size: 0x10, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
		}}},
		want: `
		dee2 02 05 03 00 f8 00
		00000001 00000001 00000003 00000000 00000014
		00000fe4 00000010 00000000 00000001 00 00 0000
		00 03 08
		`,
	},
	{
		name: "amd64 v2 ADDR4 and 1/2/4-byte data words",
		opt:  EncodeOptions{Version: Version2, ABI: ABIAMD64LE, Base: 0x400000, CFAFixedRA: -8},
		fdes: []FDE{{Start: 0x401000, Size: 0x10000, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 0x100, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(-128)},
			{Start: 0x200, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(128)},
			{Start: 0x8000, CFA: cfaAt(RegAMD64SP, 0x12345), RA: amd64RA, FP: same},
		}}},
		want: `
		e2de 02 01 03 00 f8 00
		01000000 04000000
		21000000                # 6 + 9 + 9 + 9 bytes
		00000000 14000000
		00100000 00000100 00000000 04000000
		02 00 0000              # info: ADDR4 (size 0x10000 is not below 0x10000)
		00000000 03 08          # CFA=sp+8
		00010000 24 1000 80ff   # -128 takes two bytes, as gas 2.41-2.45 sized it
		00020000 24 1000 8000   # +128 needs two: size code 1
		00800000 43 45230100    # 0x12345 needs four: size code 2
		`,
	},
	{
		name: "aarch64 v3 LE: -128 and -32768 fit the smaller size",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAArch64LE, Base: 0x1000},
		fdes: []FDE{{Start: 0x1100, Size: 0x20, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAArch64SP, 16), RA: savedAt(-120), FP: savedAt(-128)},
			{Start: 4, CFA: cfaAt(RegAArch64SP, 0x100), RA: savedAt(-32768), FP: savedAt(-16)},
		}}},
		want: `
		e2de 03 05 02 00 00 00
		01000000 02000000 12000000 00000000 10000000
		e400000000000000 20000000 00000000
		0200 00 00 00
		00 07 10 88 80          # -128 fits one signed byte
		04 27 0001 0080 f0ff    # 0x100 needs two bytes; -32768 fits them
		`,
	},
	{
		name: "aarch64 v3 BE, ADDR2, mangled RA, key B",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAArch64BE, Base: 0x20000},
		fdes: []FDE{{Start: 0x10000, Size: 0x300, PAuthKey: PAuthKeyB, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAArch64SP, 0), RA: same, FP: same},
			{Start: 4, CFA: cfaAt(RegAArch64SP, 32), RA: savedAt(-24), FP: savedAt(-32), MangledRA: true},
			{Start: 0x104, CFA: cfaAt(RegAArch64FP, 0x200), RA: savedAt(-24), FP: savedAt(-32)},
			{Start: 0x2fc, CFA: cfaAt(RegAArch64SP, 16), RA: savedAt(-8), FP: same},
		}}},
		want: `
		dee2 03 05 01 00 00 00  # big-endian magic, v3, SORTED|PCREL, AArch64 BE, no fixed offsets
		00000001 00000004
		0000001d                # 5 + 4 + 6 + 9 + 5
		00000000 00000010
		fffffffffffeffe4        # 0x10000 - 0x2001c, negative
		00000300 00000000
		0004 21 00 00           # 4 FREs; info ADDR2 | key B (bit 5); DEFAULT
		0000 03 00              # +0: sp+0, RA in x30: one word
		0004 87 20 e8 e0        # +4: mangled (bit 7), 3 words: CFA sp+32, RA -24, FP -32
		0104 26 0200 ffe8 ffe0  # +0x104: FP-based, 3 two-byte words
		02fc 05 10 f8           # +0x2fc: RA saved, FP not: 2 words
		`,
	},
	{
		name: "aarch64 v2 LE",
		opt:  EncodeOptions{Version: Version2, ABI: ABIAArch64LE, Base: 0x410000, PCRel: true},
		fdes: []FDE{{Start: 0x400100, Size: 0x40, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAArch64SP, 0), RA: same, FP: same},
			{Start: 4, CFA: cfaAt(RegAArch64SP, 16), RA: savedAt(-8), FP: savedAt(-16)},
		}}},
		want: `
		e2de 02 05 02 00 00 00
		01000000 02000000 08000000 00000000 14000000
		e400ffff                # 0x400100 - 0x41001c = -0xff1c
		40000000 00000000 02000000 00 00 0000
		00 03 00
		04 07 10 f8 f0
		`,
	},
	{
		name: "aarch64 v3 LE signal frame",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAArch64LE, Base: 0x1000},
		fdes: []FDE{{Start: 0x101c, Size: 8, Signal: true, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAArch64SP, 0), RA: same, FP: same},
		}}},
		want: `
		e2de 03 05 02 00 00 00
		01000000 01000000 08000000 00000000 10000000
		0000000000000000        # the function starts at its own start field
		08000000 00000000
		0100 80 00 00           # signal_p is bit 7 of the info byte
		00 03 00
		`,
	},
	{
		name: "s390x v2 BE: CFA scaling, RA padding, register words, outermost",
		opt:  EncodeOptions{Version: Version2, ABI: ABIS390XBE, Base: 0x2000, PCRel: true},
		fdes: []FDE{{Start: 0x1000, Size: 0x40, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegS390XSP, 160), RA: same, FP: same},
			{Start: 6, CFA: cfaAt(RegS390XSP, 160), RA: savedAt(-48), FP: savedAt(-72)},
			{Start: 0xa, CFA: cfaAt(RegS390XSP, 320), RA: savedAt(-48), FP: savedAt(-72)},
			{Start: 0x10, CFA: cfaAt(RegS390XSP, 160), RA: inReg(17), FP: same},
			{Start: 0x20, CFA: cfaAt(RegS390XFP, 320), RA: same, FP: savedAt(-72)},
			{Start: 0x30, CFA: Rule{}, RA: undefined, FP: Rule{}},
		}}},
		want: `
		dee2 02 05 04 00 00 00
		00000001 00000006
		00000018                # 3 + 5 + 5 + 4 + 5 + 2
		00000000 00000014
		ffffefe4                # 0x1000 - 0x201c
		00000040 00000000 00000006 00 00 0000
		00 03 00                # CFA sp+160 stored as (160-160)/8 = 0
		06 07 00 d0 b8          # RA at CFA-48, FP at CFA-72
		0a 07 14 d0 b8          # CFA sp+320 stored as 20
		10 05 00 23             # RA in f2 (DWARF 17): (17<<1)|1
		20 06 14 00 b8          # FP-based; RA not saved: padding 0 before FP
		30 00                   # outermost: info 0, no words
		`,
	},
	{
		name: "s390x v3 BE flex: FP in a register",
		opt:  EncodeOptions{Version: Version3, ABI: ABIS390XBE, Base: 0x2000},
		fdes: []FDE{{Start: 0x1000, Size: 0x40, Type: FDETypeFlex, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegS390XSP, 160), RA: same, FP: same},
			{Start: 4, CFA: cfaAt(RegS390XSP, 160), RA: same, FP: inReg(16)},
			{Start: 8, CFA: cfaAt(RegS390XSP, 320), RA: savedAt(-48), FP: savedAt(-72)},
		}}},
		want: `
		dee2 03 05 04 00 00 00
		00000001 00000003
		00000018                # 5 + 4 + 7 + 8
		00000000 00000010
		ffffffffffffefe4
		00000040 00000000
		0003 00 01 00           # info2: FLEX
		00 04 79 00             # CFA: control (15<<3)|reg_p, offset (160-160)/8; base bit 0 in flex
		04 0a 79 00 00 81 00    # RA padding 0, FP control (16<<3)|1 = 0x81 (unsigned: one byte)
		08 0c 79 14 02 d0 02 b8 # RA control deref_p=2 offset -48; FP control 2 offset -72
		`,
	},
	{
		name: "amd64 v3 LE flex: DRAP, RA off its slot, registers",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Base: 0x400000, CFAFixedRA: -8},
		fdes: []FDE{{Start: 0x401000, Size: 0x100, Type: FDETypeFlex, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 0x10, CFA: Rule{Kind: RuleExpr, Reg: RegAMD64FP, Offset: -8, Deref: true}, RA: amd64RA, FP: savedAt(-16)},
			{Start: 0x20, CFA: cfaAt(10, 0), RA: amd64RA, FP: same},
			{Start: 0x80, CFA: cfaAt(RegAMD64SP, 0x1000), RA: savedAt(-16), FP: same},
			{Start: 0x90, CFA: cfaAt(13, 8), RA: inReg(11), FP: inReg(12)},
		}}},
		want: `
		e2de 03 05 03 00 f8 00
		01000000 05000000
		2b000000                # 5 + 5 + 8 + 5 + 11 + 9
		00000000 10000000
		e40f000000000000 00010000 00000000
		0500 01 01 00           # 5 FREs, ADDR2 (size 0x100), FLEX
		0000 04 39 08           # CFA = rsp+8: control (7<<3)|1
		1000 0a 33 f8 00 02 f0  # CFA = *(rbp-8): (6<<3)|deref|reg; RA padding; FP *(CFA-16)
		2000 04 51 00           # CFA = r10+0
		8000 28 3900 0010 0200 f0ff  # 2-byte words: CFA rsp+0x1000, RA *(CFA-16)
		9000 0c 69 08 59 00 61 00    # CFA r13+8, RA = r11, FP = r12
		`,
	},
	{
		name: "amd64 v3 aux header, PCMASK, FRE data in given order",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Base: 0x1000, CFAFixedRA: -8, AuxHeader: []byte{0xaa, 0xbb, 0xcc}},
		fdes: []FDE{
			{Start: 0x2010, Size: 0x30, Rows: []Row{
				{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			}},
			{Start: 0x2000, Size: 0x10, PCType: PCMask, RepSize: 16, Rows: []Row{
				{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
				{Start: 11, CFA: cfaAt(RegAMD64SP, 16), RA: amd64RA, FP: same},
			}},
		},
		want: `
		e2de 03 05 03 00 f8 03  # auxiliary header of 3 bytes
		02000000 03000000
		13000000                # 8 + 11
		00000000 20000000       # offsets count from the end of the auxiliary header
		aabbcc
		# index sorted by start; header + aux end at 31
		e10f000000000000 10000000 08000000  # 0x2000 - 0x101f; its FREs come second
		e10f000000000000 30000000 00000000  # 0x2010 - 0x102f
		0100 00 00 00  00 03 08             # the 0x2010 function, first as given
		0200 10 00 10  00 03 08  0b 03 10   # PCMASK (bit 4), rep size 16
		`,
	},
	{
		name: "amd64 v3 unsorted (as gas writes objects)",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Base: 0x1000, CFAFixedRA: -8, AuxHeader: []byte{0xaa, 0xbb, 0xcc}, Unsorted: true},
		fdes: []FDE{
			{Start: 0x2010, Size: 0x30, Rows: []Row{
				{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			}},
			{Start: 0x2000, Size: 0x10, PCType: PCMask, RepSize: 16, Rows: []Row{
				{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
				{Start: 11, CFA: cfaAt(RegAMD64SP, 16), RA: amd64RA, FP: same},
			}},
		},
		want: `
		e2de 03 04 03 00 f8 03  # flags: PCREL only
		02000000 03000000 13000000 00000000 20000000
		aabbcc
		f10f000000000000 30000000 00000000  # 0x2010 - 0x101f
		d10f000000000000 10000000 08000000  # 0x2000 - 0x102f
		0100 00 00 00  00 03 08
		0200 10 00 10  00 03 08  0b 03 10
		`,
	},
	{
		name: "no functions",
		opt:  EncodeOptions{Version: Version3, ABI: ABIAArch64LE},
		want: `e2de 03 05 02 00 00 00 00000000 00000000 00000000 00000000 00000000`,
	},
}

func TestEncodeHandWritten(t *testing.T) {
	t.Parallel()
	for _, c := range encodeCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Encode(c.fdes, c.opt)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			diffBytes(t, got, hexBytes(t, c.want))
		})
	}
}

func TestEncodeDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	var c encodeCase
	for _, c = range encodeCases {
		if strings.HasPrefix(c.name, "amd64 v3 aux header") {
			break
		}
	}
	fdes := append([]FDE(nil), c.fdes...)
	if _, err := Encode(fdes, c.opt); err != nil {
		t.Fatal(err)
	}
	if fdes[0].Start != 0x2010 || fdes[1].Start != 0x2000 {
		t.Errorf("Encode reordered the caller's slice: starts %#x, %#x", fdes[0].Start, fdes[1].Start)
	}
}

func TestDefaultFixedOffsets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		abi    ABI
		fp, ra int8
	}{{ABIAMD64LE, 0, -8}, {ABIAArch64LE, 0, 0}, {ABIAArch64BE, 0, 0}, {ABIS390XBE, 0, 0}} {
		fp, ra := DefaultFixedOffsets(c.abi)
		if fp != c.fp || ra != c.ra {
			t.Errorf("%v: got fp %d ra %d, want %d %d", c.abi, fp, ra, c.fp, c.ra)
		}
	}
}

func TestChooseFDEType(t *testing.T) {
	t.Parallel()
	v3 := func(a ABI) EncodeOptions {
		fp, ra := DefaultFixedOffsets(a)
		return EncodeOptions{Version: Version3, ABI: a, CFAFixedFP: fp, CFAFixedRA: ra}
	}
	cases := []struct {
		name string
		opt  EncodeOptions
		rows []Row
		want FDEType
	}{
		{"amd64 plain", v3(ABIAMD64LE), []Row{
			{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 1, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(-16)},
		}, FDETypeDefault},
		{"amd64 DRAP", v3(ABIAMD64LE), []Row{
			{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 4, CFA: cfaAt(10, 0), RA: amd64RA, FP: same},
		}, FDETypeFlex},
		{"amd64 RA moved", v3(ABIAMD64LE), []Row{
			{CFA: cfaAt(RegAMD64SP, 16), RA: savedAt(-16), FP: same},
		}, FDETypeFlex},
		{"amd64 DRAP in v2 stays default", EncodeOptions{Version: Version2, ABI: ABIAMD64LE, CFAFixedRA: -8}, []Row{
			{CFA: cfaAt(10, 0), RA: amd64RA, FP: same},
		}, FDETypeDefault},
		{"s390x FP in FPR", v3(ABIS390XBE), []Row{
			{CFA: cfaAt(RegS390XSP, 160), RA: same, FP: inReg(16)},
		}, FDETypeFlex},
		{"s390x plain", v3(ABIS390XBE), []Row{
			{CFA: cfaAt(RegS390XSP, 160), RA: savedAt(-48), FP: savedAt(-72)},
		}, FDETypeDefault},
		{"aarch64 FP saved, RA in x30", v3(ABIAArch64LE), []Row{
			{CFA: cfaAt(RegAArch64SP, 16), RA: same, FP: savedAt(-16)},
		}, FDETypeFlex},
		{"aarch64 outermost", v3(ABIAArch64LE), []Row{
			{RA: undefined},
		}, FDETypeDefault},
		{"neither can express it", v3(ABIS390XBE), []Row{
			{CFA: cfaAt(RegS390XSP, 161), RA: same, FP: same},
		}, FDETypeDefault},
	}
	for _, c := range cases {
		if got := ChooseFDEType(&FDE{Size: 16, Rows: c.rows}, c.opt); got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, got, c.want)
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	t.Parallel()
	amd := func(v Version) EncodeOptions {
		return EncodeOptions{Version: v, ABI: ABIAMD64LE, CFAFixedRA: -8, Base: 0x1000}
	}
	arm := func(v Version) EncodeOptions { return EncodeOptions{Version: v, ABI: ABIAArch64LE, Base: 0x1000} }
	s390 := func(v Version) EncodeOptions { return EncodeOptions{Version: v, ABI: ABIS390XBE, Base: 0x1000} }
	ok := Row{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same}
	fn := func(rows ...Row) []FDE { return []FDE{{Start: 0x2000, Size: 0x40, Rows: rows}} }
	at := func(start uint32, r Row) Row { r.Start = start; return r }
	many := make([]Row, 65536)
	for i := range many {
		many[i] = at(uint32(i), ok)
	}

	cases := []struct {
		name    string
		fdes    []FDE
		opt     EncodeOptions
		err     error
		row     int      // -1: no row
		mention []string // substrings the message must carry
	}{
		{"version 1", fn(ok), amd(Version1), ErrEncodeOptions, -1, []string{"obsolete"}},
		{"version 4", fn(ok), amd(4), ErrEncodeOptions, -1, []string{"version 4"}},
		{"unknown ABI", fn(ok), EncodeOptions{Version: Version3, ABI: 9}, ErrEncodeOptions, -1, []string{"ABI 9"}},
		{"amd64 RA off the fixed slot", fn(Row{CFA: cfaAt(RegAMD64SP, 8), RA: savedAt(-16), FP: same}), amd(Version2), ErrNotRepresentable, 0, []string{"fixed [CFA-8]"}},
		{"FP off the fixed slot", fn(Row{CFA: cfaAt(RegAArch64SP, 16), RA: savedAt(-8), FP: savedAt(-24)}), EncodeOptions{Version: Version3, ABI: ABIAArch64LE, CFAFixedFP: -16}, ErrNotRepresentable, 0, []string{"fixed [CFA-16]"}},
		{"aux header too long", fn(ok), EncodeOptions{Version: Version3, ABI: ABIAArch64LE, AuxHeader: make([]byte, 256)}, ErrEncodeOptions, -1, []string{"256"}},

		{"v2 flex FDE", []FDE{{Start: 0x2000, Size: 0x40, Type: FDETypeFlex, Rows: []Row{ok}}}, amd(Version2), ErrNotRepresentable, -1, []string{"0x2000", "version 3 only"}},
		{"v2 CFA on r10", fn(ok, at(4, Row{CFA: cfaAt(10, 0), RA: amd64RA, FP: same})), amd(Version2), ErrNotRepresentable, 1, []string{"0x2000", "+0x4", "register 10"}},
		{"v2 dereferenced CFA", fn(at(0, Row{CFA: Rule{Kind: RuleExpr, Reg: RegAMD64FP, Offset: -8, Deref: true}, RA: amd64RA, FP: same})), amd(Version2), ErrNotRepresentable, 0, []string{"dereferenced"}},
		{"v2 aarch64 RA in a register", fn(Row{CFA: cfaAt(RegAArch64SP, 0), RA: inReg(9), FP: same}), arm(Version2), ErrNotRepresentable, 0, []string{"RA rule r9+0"}},
		{"v2 amd64 FP in a register", fn(Row{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: inReg(3)}), amd(Version2), ErrNotRepresentable, 0, []string{"FP rule r3+0"}},
		{"v3 default amd64 FP in a register", fn(Row{CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: inReg(3)}), amd(Version3), ErrNotRepresentable, 0, []string{"FLEX"}},
		{"v2 start beyond 32 bits", []FDE{{Start: 0x1_0000_2000, Size: 0x40, Rows: []Row{ok}}}, amd(Version2), ErrOutOfRange, -1, []string{"0x100002000", "32-bit"}},
		{"v2 PCREL start beyond 32 bits", []FDE{{Start: 0x1_0000_2000, Size: 0x40, Rows: []Row{ok}}}, EncodeOptions{Version: Version2, ABI: ABIAMD64LE, CFAFixedRA: -8, PCRel: true}, ErrOutOfRange, -1, []string{"start field"}},
		{"v3 too many FREs", []FDE{{Start: 0x2000, Size: 0x20000, Rows: many}}, amd(Version3), ErrOutOfRange, -1, []string{"65536 rows"}},
		{"amd64 RA off its slot", fn(Row{CFA: cfaAt(RegAMD64SP, 16), RA: savedAt(-16), FP: same}), amd(Version3), ErrNotRepresentable, 0, []string{"[CFA-16]", "CFA-8"}},
		{"amd64 RA same", fn(Row{CFA: cfaAt(RegAMD64SP, 8), RA: same, FP: same}), amd(Version2), ErrNotRepresentable, 0, []string{"RA rule same"}},
		{"s390x CFA not a multiple of 8", fn(Row{CFA: cfaAt(RegS390XSP, 164), RA: same, FP: same}), s390(Version2), ErrNotRepresentable, 0, []string{"164", "multiple of 8"}},
		{"s390x flex CFA not a multiple of 8", []FDE{{Start: 0x2000, Size: 0x40, Type: FDETypeFlex, Rows: []Row{{CFA: cfaAt(5, 170), RA: same, FP: same}}}}, s390(Version3), ErrNotRepresentable, 0, []string{"170"}},
		{"s390x v2 odd FP offset", fn(Row{CFA: cfaAt(RegS390XSP, 160), RA: same, FP: savedAt(-71)}), s390(Version2), ErrNotRepresentable, 0, []string{"odd"}},
		{"s390x RA at CFA+0", fn(Row{CFA: cfaAt(RegS390XSP, 160), RA: savedAt(0), FP: same}), s390(Version3), ErrNotRepresentable, 0, []string{"padding"}},
		{"v3 default CFA on a register", fn(Row{CFA: cfaAt(RegS390XRA, 160), RA: same, FP: same}), s390(Version3), ErrNotRepresentable, 0, []string{"register 14", "FLEX"}},
		{"rows not increasing", fn(ok, at(4, ok), at(4, ok)), amd(Version3), ErrFREsNotIncreasing, 2, []string{"+0x4"}},
		{"row start past the size", fn(ok, at(0x41, ok)), amd(Version3), ErrFREStartPastEnd, 1, []string{"+0x41", "size 0x40"}},
		{"PCMASK without rep size", []FDE{{Start: 0x2000, Size: 0x40, PCType: PCMask, Rows: []Row{ok}}}, amd(Version3), ErrBadRepSize, -1, []string{"0x2000"}},
		{"signal frame in v2", []FDE{{Start: 0x2000, Size: 0x40, Signal: true, Rows: []Row{ok}}}, amd(Version2), ErrNotRepresentable, -1, []string{"signal"}},
		{"key B on amd64", []FDE{{Start: 0x2000, Size: 0x40, PAuthKey: PAuthKeyB, Rows: []Row{ok}}}, amd(Version3), ErrNotRepresentable, -1, []string{"key B"}},
		{"mangled RA on s390x", fn(Row{CFA: cfaAt(RegS390XSP, 160), RA: same, FP: same, MangledRA: true}), s390(Version3), ErrNotRepresentable, 0, []string{"mangled"}},
		{"aarch64 FP saved, RA in x30", fn(Row{CFA: cfaAt(RegAArch64SP, 16), RA: same, FP: savedAt(-16)}), arm(Version3), ErrNotRepresentable, 0, []string{"x30"}},
		{"FP undefined", fn(Row{CFA: cfaAt(RegAArch64SP, 16), RA: same, FP: undefined}), arm(Version3), ErrNotRepresentable, 0, []string{"undefined"}},
		{"CFA offset beyond 32 bits", fn(Row{CFA: cfaAt(RegAMD64SP, 1<<40), RA: amd64RA, FP: same}), amd(Version3), ErrOutOfRange, 0, []string{"32 bits"}},
		{"flex RA = CFA+8", []FDE{{Start: 0x2000, Size: 0x40, Type: FDETypeFlex, Rows: []Row{{CFA: cfaAt(RegAMD64SP, 16), RA: Rule{Kind: RuleExpr, Reg: RegCFA, Offset: 8}, FP: same}}}}, amd(Version3), ErrNotRepresentable, 0, []string{"control word 0"}},
		{"flex CFA relative to CFA", []FDE{{Start: 0x2000, Size: 0x40, Type: FDETypeFlex, Rows: []Row{{CFA: savedAt(8), RA: amd64RA, FP: same}}}}, amd(Version3), ErrNotRepresentable, 0, []string{"base register"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := Encode(c.fdes, c.opt)
			if err == nil {
				t.Fatalf("Encode accepted it and wrote % x", out)
			}
			if !errors.Is(err, c.err) {
				t.Errorf("error %q does not wrap %v", err, c.err)
			}
			var ee *EncodeError
			if !errors.As(err, &ee) {
				t.Fatalf("error %T is not an *EncodeError", err)
			}
			if isFunc := c.err != ErrEncodeOptions; ee.Func != isFunc {
				t.Errorf("error says Func=%v, want %v (%v)", ee.Func, isFunc, err)
			} else if isFunc && ee.FuncStart != c.fdes[0].Start {
				t.Errorf("error names the function at %#x, want %#x", ee.FuncStart, c.fdes[0].Start)
			}
			if ee.Row != c.row {
				t.Errorf("error names row %d, want %d (%v)", ee.Row, c.row, err)
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

// benchFDEs builds n AMD64 functions of 64 bytes with a typical
// push-rbp/mov-rbp/leave prologue-epilogue row set.
func benchFDEs(n int) []FDE {
	fdes := make([]FDE, n)
	for i := range fdes {
		fdes[i] = FDE{Start: 0x401000 + uint64(i)*64, Size: 64, Rows: []Row{
			{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
			{Start: 1, CFA: cfaAt(RegAMD64SP, 16), RA: amd64RA, FP: savedAt(-16)},
			{Start: 4, CFA: cfaAt(RegAMD64FP, 16), RA: amd64RA, FP: savedAt(-16)},
			{Start: 62, CFA: cfaAt(RegAMD64SP, 8), RA: amd64RA, FP: same},
		}}
	}
	return fdes
}

func BenchmarkEncode(b *testing.B) {
	fdes := benchFDEs(100_000)
	for _, v := range []Version{Version2, Version3} {
		b.Run(map[Version]string{Version2: "v2", Version3: "v3"}[v], func(b *testing.B) {
			opt := EncodeOptions{Version: v, ABI: ABIAMD64LE, Base: 0x600000, CFAFixedRA: -8, PCRel: true}
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := Encode(fdes, opt)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}

// compareFDEs compares what Encode writes of two FDE lists.
func compareFDEs(t *testing.T, where string, got, want []FDE) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d FDEs, want %d", where, len(got), len(want))
		return
	}
	for i := range want {
		g, w := &got[i], &want[i]
		if g.Start != w.Start || g.Size != w.Size || g.PCType != w.PCType || g.RepSize != w.RepSize ||
			g.PAuthKey != w.PAuthKey || g.Signal != w.Signal || g.Type != w.Type {
			t.Errorf("%s: FDE %d: got start %#x size %d pc %d rep %d key %d signal %v type %d, want %#x %d %d %d %d %v %d",
				where, i, g.Start, g.Size, g.PCType, g.RepSize, g.PAuthKey, g.Signal, g.Type,
				w.Start, w.Size, w.PCType, w.RepSize, w.PAuthKey, w.Signal, w.Type)
			continue
		}
		if len(g.Rows) != len(w.Rows) {
			t.Errorf("%s: FDE %d at %#x: %d rows, want %d", where, i, w.Start, len(g.Rows), len(w.Rows))
			continue
		}
		for j := range w.Rows {
			if g.Rows[j] != w.Rows[j] {
				t.Errorf("%s: FDE %d at %#x row %d:\n got %+v\nwant %+v", where, i, w.Start, j, g.Rows[j], w.Rows[j])
			}
		}
	}
}

// randomSeed is SFCONFORM_SEED when set, so a failure replays; otherwise
// the clock. It is logged either way.
func randomSeed(t *testing.T) uint64 {
	t.Helper()
	return testenv.Seed(t, uint64(time.Now().UnixNano()))
}

// rowGen makes random rows that a section of one version and ABI can
// hold, drawing offsets from every data word size.
type rowGen struct {
	r   *rand.Rand
	v   Version
	abi ABI
}

// offset returns a value that needs 1, 2 or 4 bytes, not 0.
func (g *rowGen) offset() int64 {
	var o int64
	switch g.r.IntN(4) {
	case 0:
		o = g.r.Int64N(256) - 128
	case 1:
		o = g.r.Int64N(1<<16) - 1<<15
	case 2:
		o = g.r.Int64N(1<<32) - 1<<31
	default:
		o = []int64{-128, 127, -32768, 32767, -1 << 31, 1<<31 - 1, -8, -16}[g.r.IntN(8)]
	}
	if o == 0 {
		o = -8
	}
	return o
}

// cfaOffset is an offset that fits the CFA word after s390x scaling.
func (g *rowGen) cfaOffset() int64 {
	if g.abi == ABIS390XBE {
		return 160 + 8*(g.offset()/8)
	}
	return g.offset()
}

// even keeps a v2 s390x stack offset from reading as a register number.
func (g *rowGen) even(o int64) int64 {
	if g.v == Version2 && g.abi == ABIS390XBE && o&1 != 0 {
		o--
	}
	if o == 0 {
		o = -8 // a zero RA word means "not saved"
	}
	return o
}

func (g *rowGen) defaultRow() Row {
	a := g.abi
	if g.r.IntN(10) == 0 {
		return Row{CFA: undefined, RA: undefined, FP: same}
	}
	base := a.SPRegister()
	if g.r.IntN(2) == 0 {
		base = a.FPRegister()
	}
	row := Row{CFA: cfaAt(base, g.cfaOffset()), RA: same, FP: same}
	v2s390 := g.v == Version2 && a == ABIS390XBE
	slot := func() Rule {
		if v2s390 && g.r.IntN(3) == 0 {
			return inReg(g.r.IntN(32))
		}
		return savedAt(g.even(g.offset()))
	}
	switch a {
	case ABIAMD64LE:
		row.RA = amd64RA
		if g.r.IntN(2) == 0 {
			row.FP = slot()
		}
	case ABIAArch64LE, ABIAArch64BE:
		row.MangledRA = g.r.IntN(3) == 0
		if g.r.IntN(3) != 0 {
			row.RA = slot()
			if g.r.IntN(2) == 0 {
				row.FP = slot()
			}
		}
	case ABIS390XBE:
		if g.r.IntN(2) == 0 {
			row.RA = slot()
		}
		if g.r.IntN(2) == 0 {
			row.FP = slot()
		}
	}
	return row
}

func (g *rowGen) flexRow() Row {
	if g.r.IntN(10) == 0 {
		return Row{CFA: undefined, RA: undefined, FP: same}
	}
	// CFA+off as a value has control word 0 ("no rule"): not generated.
	rule := func() Rule {
		if g.r.IntN(2) == 0 { // a register, maybe with an offset
			return Rule{Kind: RuleExpr, Reg: g.r.IntN(32), Offset: g.offset() * int64(g.r.IntN(2)), Deref: g.r.IntN(2) == 0}
		}
		return savedAt(g.offset()) // saved relative to the CFA
	}
	row := Row{
		CFA: Rule{Kind: RuleExpr, Reg: g.r.IntN(32), Offset: g.cfaOffset(), Deref: g.r.IntN(3) == 0},
		RA:  same,
		FP:  same,
	}
	if g.abi == ABIAMD64LE {
		row.RA = amd64RA
	} else {
		row.MangledRA = g.abi != ABIS390XBE && g.r.IntN(3) == 0
	}
	if g.r.IntN(2) == 0 {
		row.RA = rule()
	}
	if g.r.IntN(2) == 0 {
		row.FP = rule()
	}
	return row
}

func (g *rowGen) fde(start uint64) FDE {
	sizes := []uint32{1 + uint32(g.r.IntN(0xff)), 0x100 + uint32(g.r.IntN(0xff00)), 0x10000 + uint32(g.r.IntN(1<<24))}
	f := FDE{Start: start, Size: sizes[g.r.IntN(3)]}
	if g.v == Version3 {
		f.Signal = g.r.IntN(5) == 0
		if g.r.IntN(3) == 0 {
			f.Type = FDETypeFlex
		}
	}
	if g.abi.IsAArch64() {
		f.PAuthKey = PAuthKey(g.r.IntN(2))
	}
	if g.r.IntN(5) == 0 {
		f.PCType, f.RepSize = PCMask, uint8(1+g.r.IntN(255))
	}
	n := 1 + g.r.IntN(int(min(f.Size, 12)))
	starts := map[uint32]bool{}
	for len(starts) < n {
		starts[uint32(g.r.Int64N(int64(f.Size)))] = true
	}
	var sorted []uint32
	for st := range starts {
		sorted = append(sorted, st)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, st := range sorted {
		var row Row
		if f.Type == FDETypeFlex {
			row = g.flexRow()
		} else {
			row = g.defaultRow()
		}
		row.Start, row.PAuthKey, row.Signal = st, f.PAuthKey, f.Signal
		if row.RA.Kind == RuleUndefined {
			row.MangledRA = false
		}
		f.Rows = append(f.Rows, row)
	}
	return f
}

// TestEncodeRandomRoundTrip encodes random tables for every version, ABI
// and byte order and checks that Decode reads back the same functions and
// rows, and that the swapped section reads back the same too.
func TestEncodeRandomRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(randomSeed(t), 7))
	for round := 0; round < 200; round++ {
		for _, v := range []Version{Version2, Version3} {
			for _, abi := range Targets {
				g := &rowGen{r: r, v: v, abi: abi}
				fp, ra := DefaultFixedOffsets(abi)
				opt := EncodeOptions{Version: v, ABI: abi, Base: 0x10_0000 + r.Uint64N(1<<20),
					PCRel: r.IntN(2) == 0, CFAFixedFP: fp, CFAFixedRA: ra, Unsorted: r.IntN(4) == 0}
				if r.IntN(2) == 0 {
					opt.Order = binary.BigEndian
				} else {
					opt.Order = binary.LittleEndian
				}
				if r.IntN(8) == 0 {
					opt.AuxHeader = []byte{byte(r.IntN(256)), byte(r.IntN(256))}
				}
				var fdes []FDE
				start := opt.Base + 0x1000
				for range 1 + r.IntN(6) {
					f := g.fde(start)
					fdes = append(fdes, f)
					start += uint64(f.Size) + uint64(r.IntN(64))
				}
				r.Shuffle(len(fdes), func(i, j int) { fdes[i], fdes[j] = fdes[j], fdes[i] })
				where := fmt.Sprintf("round %d, v%d %v %v", round, v, abi.Name(), opt.Order)

				out, err := Encode(fdes, opt)
				if err != nil {
					t.Fatalf("%s: Encode: %v", where, err)
				}
				want := fdes
				if !opt.Unsorted {
					want = append([]FDE(nil), fdes...)
					sort.SliceStable(want, func(i, j int) bool { return want[i].Start < want[j].Start })
				}
				for _, in := range []struct {
					what string
					swap bool
				}{{"", false}, {" swapped", true}} {
					buf := out
					if in.swap {
						if buf, err = SwapByteOrder(out); err != nil {
							t.Fatalf("%s: SwapByteOrder: %v", where, err)
						}
					}
					tab, err := Decode(buf, opt.Base)
					if err != nil {
						t.Fatalf("%s%s: Decode: %v", where, in.what, err)
					}
					s := tab.Sections[0]
					if (s.Order == opt.Order) == in.swap {
						t.Errorf("%s%s: decoded as %v", where, in.what, s.Order)
					}
					if s.Size != len(out) {
						t.Errorf("%s%s: section of %d bytes, Encode wrote %d", where, in.what, s.Size, len(out))
					}
					compareFDEs(t, where+in.what, fdesOf(t, s), want)
				}
			}
		}
	}
}

// TestEncodeFixedOffsetsZero encodes, with the header's fixed RA offset 0
// on AMD64, the rows that testdata/handmade/v3-x86-64-fixedra0-*.hex hold,
// and must give the hand-written bytes: the RA gets a data word of its own.
func TestEncodeFixedOffsetsZero(t *testing.T) {
	t.Parallel()
	rows := func(rs ...Row) []Row { return rs }
	fdes := []FDE{
		{Start: 0x1000, Size: 0x20, Rows: rows(
			Row{Start: 0, CFA: cfaAt(RegAMD64SP, 8), RA: savedAt(-8), FP: same},
			Row{Start: 1, CFA: cfaAt(RegAMD64SP, 16), RA: savedAt(-8), FP: savedAt(-16)},
			Row{Start: 4, CFA: cfaAt(RegAMD64FP, 16), RA: savedAt(-8), FP: savedAt(-16)},
			Row{Start: 0x1e, CFA: cfaAt(RegAMD64SP, 8), RA: savedAt(-8), FP: savedAt(-16)})},
		{Start: 0x1020, Size: 0x10, Rows: rows(Row{CFA: undefined, RA: undefined, FP: same})},
		{Start: 0x1030, Size: 0x10, Type: FDETypeFlex, Rows: rows(
			Row{Start: 0, CFA: cfaAt(RegAMD64SP, 16), RA: savedAt(-8), FP: savedAt(-16)},
			Row{Start: 2, CFA: cfaAt(RegAMD64SP, 8), RA: same, FP: savedAt(-16)})},
	}
	for _, c := range []struct {
		file  string
		order binary.ByteOrder
	}{{"v3-x86-64-fixedra0-le.hex", binary.LittleEndian}, {"v3-x86-64-fixedra0-be.hex", binary.BigEndian}} {
		got, err := Encode(fdes, EncodeOptions{Version: Version3, ABI: ABIAMD64LE, Order: c.order})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		diffBytes(t, got, readHexFile(t, filepath.Join("testdata", "handmade", c.file)))
	}
}
