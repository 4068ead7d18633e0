package sframe

import (
	"errors"
	"os"
	"testing"
)

// mapMem is a Memory holding 8-byte words at the addresses of the map.
type mapMem map[uint64]uint64

func (m mapMem) ReadWord(a uint64) (uint64, bool) {
	v, ok := m[a]
	return v, ok
}

// want is what a test expects of one frame.
type wantFrame struct {
	pc, sp, fp, cfa uint64
	fdeStart        uint64 // 0: no FDE expected
	outermost       bool
}

func checkFrames(t *testing.T, got []Frame, wants []wantFrame) {
	t.Helper()
	if len(got) != len(wants) {
		t.Errorf("got %d frames, want %d", len(got), len(wants))
	}
	for i := 0; i < len(got) && i < len(wants); i++ {
		g, w := got[i], wants[i]
		var start uint64
		if g.FDE.Size != 0 {
			start = g.FDE.Start
		}
		if g.PC != w.pc || g.SP != w.sp || g.FP != w.fp || g.CFA != w.cfa || start != w.fdeStart || g.Outermost != w.outermost {
			t.Errorf("frame %d: got pc %#x sp %#x fp %#x cfa %#x fde %#x outermost %v\n           want pc %#x sp %#x fp %#x cfa %#x fde %#x outermost %v",
				i, g.PC, g.SP, g.FP, g.CFA, start, g.Outermost, w.pc, w.sp, w.fp, w.cfa, w.fdeStart, w.outermost)
		}
	}
}

// checkErr asserts err is an *UnwindError for frame index at pc wrapping
// sentinel.
func checkUnwindErr(t *testing.T, err error, sentinel error, index int, pc uint64) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want one wrapping %v", err, sentinel)
	}
	var ue *UnwindError
	if !errors.As(err, &ue) {
		t.Fatalf("error %T %v is not an *UnwindError", err, err)
	}
	if ue.Frame != index || ue.PC != pc {
		t.Errorf("error names frame %d pc %#x, want frame %d pc %#x (%v)", ue.Frame, ue.PC, index, pc, err)
	}
}

// x86 rows of "push %rbp; mov %rsp,%rbp" (1 + 3 bytes).
var x86Prologue = []Row{
	{Start: 0, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame},
	{Start: 1, CFA: ruleCFA(RegAMD64SP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)},
	{Start: 4, CFA: ruleCFA(RegAMD64FP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)},
}

// x86Chain lays out, as the machine would, an outermost _start that called
// function 1, which called function 2, ... up to function depth, each
// having run push %rbp; mov %rsp,%rbp before its call at offset 8 (the
// return address is at offset 13); the topmost is stopped at offset 0x10.
// It returns the table, the registers, the memory and the frames expected.
func x86Chain(tb testing.TB, depth int) (*Table, *RegisterFile, mapMem, []wantFrame) {
	const startFn = 0x400000
	fdes := []FDE{mkFDE(startFn, 0x10, outermostRow)}
	for k := 1; k <= depth; k++ {
		fdes = append(fdes, mkFDE(0x401000+uint64(k)*0x100, 0x20, x86Prologue...))
	}
	mem := mapMem{}
	sp, fp := uint64(0x7fff0000), uint64(0)
	frames := []wantFrame{{pc: startFn + 9, sp: sp, fp: fp, fdeStart: startFn, outermost: true}}
	// _start calls function 1.
	sp -= 8
	mem[sp] = startFn + 9
	for k := 1; k <= depth; k++ {
		fn := 0x401000 + uint64(k)*0x100
		sp -= 8 // push %rbp
		mem[sp] = fp
		fp = sp // mov %rsp,%rbp
		w := wantFrame{pc: fn + 13, sp: sp, fp: fp, cfa: fp + 16, fdeStart: fn}
		if k == depth {
			w.pc = fn + 0x10
		} else {
			sp -= 8 // call
			mem[sp] = fn + 13
		}
		frames = append([]wantFrame{w}, frames...)
	}
	regs := &RegisterFile{PC: frames[0].pc}
	regs.Set(RegAMD64SP, sp)
	regs.Set(RegAMD64FP, fp)
	return unwTable(tb, ABIAMD64LE, fdes...), regs, mem, frames
}

func TestBacktraceX86FramePointerChain(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 2, 5} {
		tab, regs, mem, wants := x86Chain(t, depth)
		u := Unwinder{Table: tab}
		got, err := u.Backtrace(regs, mem, nil)
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		checkFrames(t, got, wants)
	}
}

func TestBacktraceX86Prologue(t *testing.T) {
	t.Parallel()
	// A function stopped at each point of its prologue and epilogue, called
	// from an outermost _start whose call returns to 0x1009.
	body := append(append([]Row{}, x86Prologue...),
		Row{Start: 0x10, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}) // after pop %rbp
	tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, outermostRow), mkFDE(0x2000, 0x11, body...))
	const sp0 = 0x8000
	mem := mapMem{sp0 - 8: 0x1009, sp0 - 16: 0x7777}
	cases := []struct {
		pc, sp, fp uint64
		cfa        uint64
	}{
		{0x2000, sp0 - 8, 0x5555, sp0},  // entry: RA on top of the stack, caller's FP live
		{0x2001, sp0 - 16, 0x5555, sp0}, // after push %rbp: FP saved, rbp still the caller's value
		{0x2004, sp0 - 16, sp0 - 16, sp0},
		{0x2010, sp0 - 8, 0x7777, sp0}, // after pop %rbp: rbp restored
	}
	for _, c := range cases {
		regs := &RegisterFile{PC: c.pc}
		regs.Set(RegAMD64SP, c.sp)
		regs.Set(RegAMD64FP, c.fp)
		got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
		if err != nil {
			t.Fatalf("pc %#x: %v", c.pc, err)
		}
		callerFP := uint64(0x7777)
		if c.pc == 0x2000 || c.pc == 0x2010 {
			callerFP = c.fp // FP rule "ruleSame"
		}
		checkFrames(t, got, []wantFrame{
			{pc: c.pc, sp: c.sp, fp: c.fp, cfa: c.cfa, fdeStart: 0x2000},
			{pc: 0x1009, sp: sp0, fp: callerFP, fdeStart: 0x1000, outermost: true},
		})
	}
}

// aarch64Table: _start (outermost) calls fn at 0x1000, whose frame record
// is set up by "stp x29, x30, [sp, -16]!; mov x29, sp" and which calls
// the leaf at 0x2000 from 0x1010.
func aarch64Table(t *testing.T, abi ABI) *Table {
	fn := []Row{
		{Start: 0, CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame},
		{Start: 4, CFA: ruleCFA(RegAArch64SP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)},
		{Start: 8, CFA: ruleCFA(RegAArch64FP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)},
	}
	leaf := []Row{{Start: 0, CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame}}
	return unwTable(t, abi, mkFDE(0x800, 0x10, outermostRow), mkFDE(0x1000, 0x20, fn...), mkFDE(0x2000, 0x8, leaf...))
}

func TestBacktraceAArch64LeafRAInLinkRegister(t *testing.T) {
	t.Parallel()
	for _, abi := range []ABI{ABIAArch64LE, ABIAArch64BE} {
		regs := &RegisterFile{PC: 0x2004}
		regs.Set(RegAArch64SP, 0x7000)
		regs.Set(RegAArch64FP, 0x7000)
		regs.Set(RegAArch64LR, 0x1014)
		mem := mapMem{0x7000: 0, 0x7008: 0x804}
		got, err := (&Unwinder{Table: aarch64Table(t, abi)}).Backtrace(regs, mem, nil)
		if err != nil {
			t.Fatalf("%v: %v", abi, err)
		}
		checkFrames(t, got, []wantFrame{
			// A leaf with no stack: CFA == SP is allowed in the topmost frame.
			{pc: 0x2004, sp: 0x7000, fp: 0x7000, cfa: 0x7000, fdeStart: 0x2000},
			{pc: 0x1014, sp: 0x7000, fp: 0x7000, cfa: 0x7010, fdeStart: 0x1000},
			{pc: 0x804, sp: 0x7010, fp: 0, fdeStart: 0x800, outermost: true},
		})
	}
}

func TestBacktraceAArch64LinkRegisterOnlyTopmost(t *testing.T) {
	t.Parallel()
	// fn's row at its call says the RA is still in x30, with a stack
	// frame (so the CFA check passes). Below the top x30 belongs to the
	// callee: the unwinder must refuse it.
	fn := []Row{{Start: 0, CFA: ruleCFA(RegAArch64SP, 16), RA: ruleSame, FP: ruleSame}}
	leaf := []Row{{Start: 0, CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame}}
	tab := unwTable(t, ABIAArch64LE, mkFDE(0x1000, 0x20, fn...), mkFDE(0x2000, 0x8, leaf...))
	regs := &RegisterFile{PC: 0x2000}
	regs.Set(RegAArch64SP, 0x7000)
	regs.Set(RegAArch64FP, 0x7100)
	regs.Set(RegAArch64LR, 0x1014)
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mapMem{}, nil)
	checkUnwindErr(t, err, ErrBadRule, 1, 0x1014)
	checkFrames(t, got, []wantFrame{
		{pc: 0x2000, sp: 0x7000, fp: 0x7100, cfa: 0x7000, fdeStart: 0x2000},
		{pc: 0x1014, sp: 0x7000, fp: 0x7100, cfa: 0x7010, fdeStart: 0x1000},
	})

	// The ruleSame row in the topmost frame is fine.
	regs = &RegisterFile{PC: 0x1004}
	regs.Set(RegAArch64SP, 0x7000)
	regs.Set(RegAArch64LR, 0x3000)
	got, err = (&Unwinder{Table: tab}).Backtrace(regs, mapMem{}, nil)
	checkUnwindErr(t, err, ErrNoFDE, 1, 0x3000) // 0x3000 is in no function
	if len(got) != 2 || got[1].PC != 0x3000 || got[1].SP != 0x7010 {
		t.Errorf("topmost RA in x30: got %+v", got)
	}
}

func TestBacktraceAArch64MangledRA(t *testing.T) {
	t.Parallel()
	fn := []Row{
		{Start: 0, CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame},
		{Start: 4, CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame, MangledRA: true},             // after paciasp
		{Start: 8, CFA: ruleCFA(RegAArch64SP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16), MangledRA: true}, // after stp
	}
	tab := unwTable(t, ABIAArch64LE, mkFDE(0x800, 0x10, outermostRow), mkFDE(0x1000, 0x20, fn...))
	const signed = 0x002a_0000_0000_0804 // PAC in bits 48-54
	const signedTop = 0xb4_6f_0000_0000_0804
	for _, c := range []struct {
		name   string
		pc     uint64
		lr     uint64
		mem    mapMem
		vaBits int
		want   uint64
	}{
		{"signed x30", 0x1004, signed, mapMem{}, 0, 0x804},
		{"signed RA on the stack", 0x100c, 0, mapMem{0x7008: signedTop, 0x7000: 0}, 0, 0x804},
		{"unsigned row keeps x30", 0x1000, 0x804, mapMem{}, 0, 0x804},
		{"39-bit VA", 0x1004, 0x0000_0080_0000_0804, mapMem{}, 39, 0x804},
	} {
		regs := &RegisterFile{PC: c.pc}
		regs.Set(RegAArch64SP, 0x6ff0)
		if c.pc == 0x100c {
			regs.Set(RegAArch64SP, 0x7000)
		}
		regs.Set(RegAArch64LR, c.lr)
		got, err := (&Unwinder{Table: tab, VABits: c.vaBits}).Backtrace(regs, c.mem, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != 2 || got[1].PC != c.want || !got[1].Outermost {
			t.Errorf("%s: got %+v, want caller pc %#x", c.name, got, c.want)
		}
	}
}

// s390x DWARF numbers of FPRs f8 and f9.
const (
	regS390XF8 = 24
	regS390XF9 = 28
)

// s390xTable: _start (outermost, at 0x500) calls fn at 0x1000 from
// 0x1100 (brasl, 6 bytes). fn saves r11-r15 with stmg %r11,%r15,88(%r15)
// (r11 at CFA-72, r14 at CFA-48) and allocates 160 bytes; it calls leaf
// at 0x3000 from 0x1100 (return 0x1106).
func s390xTable(t *testing.T, leaf ...Row) *Table {
	fn := []Row{
		{Start: 0, CFA: ruleCFA(RegS390XSP, 160), RA: ruleSame, FP: ruleSame},
		{Start: 6, CFA: ruleCFA(RegS390XSP, 160), RA: ruleSaved(-48), FP: ruleSaved(-72)},
		{Start: 10, CFA: ruleCFA(RegS390XSP, 320), RA: ruleSaved(-48), FP: ruleSaved(-72)},
	}
	f := mkFDE(0x3000, 0x20, leaf...)
	return unwTable(t, ABIS390XBE, mkFDE(0x500, 0x10, outermostRow), mkFDE(0x1000, 0x200, fn...), f)
}

func TestBacktraceS390XRAInR14(t *testing.T) {
	t.Parallel()
	tab := s390xTable(t, Row{Start: 0, CFA: ruleCFA(RegS390XSP, 160), RA: ruleSame, FP: ruleSame})
	regs := &RegisterFile{PC: 0x3004}
	regs.Set(RegS390XSP, 0xa000)
	regs.Set(RegS390XFP, 0x1234)
	regs.Set(RegS390XRA, 0x1106)
	// fn's frame: CFA 0xa140; saved r14 at 0xa110, r11 at 0xa0f8.
	mem := mapMem{0xa110: 0x506, 0xa0f8: 0x4321}
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, []wantFrame{
		{pc: 0x3004, sp: 0xa000, fp: 0x1234, cfa: 0xa0a0, fdeStart: 0x3000},
		{pc: 0x1106, sp: 0xa000, fp: 0x1234, cfa: 0xa140, fdeStart: 0x1000},
		{pc: 0x506, sp: 0xa0a0, fp: 0x4321, fdeStart: 0x500, outermost: true},
	})
}

func TestBacktraceS390XSavedInFPRs(t *testing.T) {
	t.Parallel()
	// A leaf that moved r14 into f8 and r11 into f9 (ldgr), described by
	// flexible register rules.
	leaf := Row{Start: 8, CFA: ruleCFA(RegS390XSP, 160), RA: ruleReg(regS390XF8), FP: ruleReg(regS390XF9)}
	tab := s390xTable(t, Row{Start: 0, CFA: ruleCFA(RegS390XSP, 160), RA: ruleSame, FP: ruleSame}, leaf)
	regs := &RegisterFile{PC: 0x300a}
	regs.Set(RegS390XSP, 0xa000)
	regs.Set(RegS390XFP, 0xdead) // clobbered by the leaf
	regs.Set(RegS390XRA, 0xbeef) // clobbered by the leaf
	regs.Set(regS390XF8, 0x1106) // caller's RA
	regs.Set(regS390XF9, 0x1234) // caller's r11
	mem := mapMem{0xa110: 0x506, 0xa0f8: 0x4321}
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, []wantFrame{
		{pc: 0x300a, sp: 0xa000, fp: 0xdead, cfa: 0xa0a0, fdeStart: 0x3000},
		{pc: 0x1106, sp: 0xa000, fp: 0x1234, cfa: 0xa140, fdeStart: 0x1000},
		{pc: 0x506, sp: 0xa0a0, fp: 0x4321, fdeStart: 0x500, outermost: true},
	})

	// The ruleSame FPR rules for a frame below the top: refused.
	mid := []Row{{Start: 0, CFA: ruleCFA(RegS390XSP, 320), RA: ruleReg(regS390XF8), FP: ruleReg(regS390XF9)}}
	top := []Row{{Start: 0, CFA: ruleCFA(RegS390XSP, 160), RA: ruleSame, FP: ruleSame}}
	tab = unwTable(t, ABIS390XBE, mkFDE(0x1000, 0x200, mid...), mkFDE(0x3000, 0x20, top...))
	regs = &RegisterFile{PC: 0x3000}
	regs.Set(RegS390XSP, 0xa000)
	regs.Set(RegS390XRA, 0x1106)
	regs.Set(regS390XF8, 0x506)
	_, err = (&Unwinder{Table: tab}).Backtrace(regs, mapMem{}, nil)
	checkUnwindErr(t, err, ErrBadRule, 1, 0x1106)

	// A register rule naming a register the file does not hold.
	tab = s390xTable(t, leaf)
	regs = &RegisterFile{PC: 0x300a}
	regs.Set(RegS390XSP, 0xa000)
	_, err = (&Unwinder{Table: tab}).Backtrace(regs, mapMem{}, nil)
	checkUnwindErr(t, err, ErrBadRule, 0, 0x300a)
}

func TestBacktraceS390XFlexFPRegisterBase(t *testing.T) {
	t.Parallel()
	// CFA based on r11 (the frame pointer) below the top: allowed, r11 is
	// the frame's FP. A deref'd CFA loads the CFA from memory.
	fn := []Row{{Start: 0, CFA: ruleCFA(RegS390XFP, 320), RA: ruleSaved(-48), FP: ruleSaved(-72)}}
	leaf := []Row{{Start: 0, CFA: Rule{Kind: RuleExpr, Reg: RegS390XSP, Offset: 8, Deref: true}, RA: ruleSame, FP: ruleSame}}
	tab := unwTable(t, ABIS390XBE, mkFDE(0x500, 0x10, outermostRow), mkFDE(0x1000, 0x200, fn...), mkFDE(0x3000, 0x20, leaf...))
	regs := &RegisterFile{PC: 0x3000}
	regs.Set(RegS390XSP, 0x9000)
	regs.Set(RegS390XFP, 0xa000)
	regs.Set(RegS390XRA, 0x1106)
	mem := mapMem{0x9008: 0xa0a0, 0xa110: 0x506, 0xa0f8: 0x4321}
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, []wantFrame{
		{pc: 0x3000, sp: 0x9000, fp: 0xa000, cfa: 0xa0a0, fdeStart: 0x3000},
		{pc: 0x1106, sp: 0xa000, fp: 0xa000, cfa: 0xa140, fdeStart: 0x1000},
		{pc: 0x506, sp: 0xa0a0, fp: 0x4321, fdeStart: 0x500, outermost: true},
	})
}

func TestBacktraceReturnAddressPastFunctionEnd(t *testing.T) {
	t.Parallel()
	// fnA (0x1000-0x1010) ends with "call noreturn" at 0x100b: its return
	// address 0x1010 is the first byte of fnB, whose rows differ (fnA has
	// 24 bytes of locals at the call, fnB none at its entry). The caller's
	// row must come from fnA.
	fnA := []Row{
		{Start: 0, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame},
		{Start: 4, CFA: ruleCFA(RegAMD64SP, 32), RA: ruleSaved(-8), FP: ruleSame},
	}
	fnB := []Row{{Start: 0, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}}
	leaf := []Row{{Start: 0, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}}
	tab := unwTable(t, ABIAMD64LE, mkFDE(0x800, 0x10, outermostRow), mkFDE(0x1000, 0x10, fnA...), mkFDE(0x1010, 0x10, fnB...), mkFDE(0x2000, 0x10, leaf...))
	regs := &RegisterFile{PC: 0x2000}
	regs.Set(RegAMD64SP, 0x7fd8)
	regs.Set(RegAMD64FP, 0x4444)
	mem := mapMem{0x7fd8: 0x1010, 0x7ff8: 0x809}
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, []wantFrame{
		{pc: 0x2000, sp: 0x7fd8, fp: 0x4444, cfa: 0x7fe0, fdeStart: 0x2000},
		{pc: 0x1010, sp: 0x7fe0, fp: 0x4444, cfa: 0x8000, fdeStart: 0x1000},
		{pc: 0x809, sp: 0x8000, fp: 0x4444, fdeStart: 0x800, outermost: true},
	})

	// The ruleSame when fnA is the last function: 0x1010 is in no FDE at all.
	tab = unwTable(t, ABIAMD64LE, mkFDE(0x800, 0x10, outermostRow), mkFDE(0x1000, 0x10, fnA...), mkFDE(0x2000, 0x10, leaf...))
	got, err = (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	if err != nil || len(got) != 3 || got[1].FDE.Size == 0 || got[1].FDE.Start != 0x1000 {
		t.Errorf("return address at the end of the last function: %v %+v", err, got)
	}

	// The topmost PC is looked up as is: at 0x1010 it is in fnB.
	regs = &RegisterFile{PC: 0x1010}
	regs.Set(RegAMD64SP, 0x7ff8)
	got, err = (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	checkUnwindErr(t, err, ErrNoFDE, 0, 0x1010)
	if len(got) != 1 || got[0].FDE.Size != 0 || got[0].SP != 0x7ff8 {
		t.Errorf("topmost PC past fnA: got %+v", got)
	}
}

func TestBacktraceErrors(t *testing.T) {
	t.Parallel()
	x86 := func(pc, sp uint64) *RegisterFile {
		r := &RegisterFile{PC: pc}
		r.Set(RegAMD64SP, sp)
		r.Set(RegAMD64FP, 0x100)
		return r
	}
	std := []Row{{Start: 0, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}}

	t.Run("no FDE", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1010, 0x8000), mapMem{}, nil)
		checkUnwindErr(t, err, ErrNoFDE, 0, 0x1010)
		checkFrames(t, got, []wantFrame{{pc: 0x1010, sp: 0x8000, fp: 0x100}})
	})
	t.Run("no row", func(t *testing.T) {
		late := []Row{{Start: 4, CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}}
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, late...))
		_, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1002, 0x8000), mapMem{}, nil)
		checkUnwindErr(t, err, ErrNoRow, 0, 0x1002)
	})
	t.Run("no FDE below the top", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{0x8000: 0x5000}, nil)
		checkUnwindErr(t, err, ErrNoFDE, 1, 0x5000)
		checkFrames(t, got, []wantFrame{
			{pc: 0x1000, sp: 0x8000, fp: 0x100, cfa: 0x8008, fdeStart: 0x1000},
			{pc: 0x5000, sp: 0x8008, fp: 0x100},
		})
	})
	t.Run("unreadable RA", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{}, nil)
		checkUnwindErr(t, err, ErrUnreadable, 0, 0x1000)
		checkFrames(t, got, []wantFrame{{pc: 0x1000, sp: 0x8000, fp: 0x100, cfa: 0x8008, fdeStart: 0x1000}})
	})
	t.Run("unreadable FP", func(t *testing.T) {
		rows := []Row{{Start: 0, CFA: ruleCFA(RegAMD64SP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)}}
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, rows...))
		_, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{0x8008: 0x900}, nil)
		checkUnwindErr(t, err, ErrUnreadable, 0, 0x1000)
	})
	t.Run("unreadable CFA", func(t *testing.T) {
		rows := []Row{{Start: 0, CFA: Rule{Kind: RuleExpr, Reg: RegAMD64SP, Offset: 8, Deref: true}, RA: ruleSaved(-8), FP: ruleSame}}
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, rows...))
		_, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{}, nil)
		checkUnwindErr(t, err, ErrUnreadable, 0, 0x1000)
	})
	t.Run("CFA below SP", func(t *testing.T) {
		rows := []Row{{Start: 0, CFA: ruleCFA(RegAMD64FP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)}}
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, rows...))
		// FP 0x100 is far below SP 0x8000.
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{}, nil)
		checkUnwindErr(t, err, ErrCFANotAbove, 0, 0x1000)
		if len(got) != 1 {
			t.Errorf("got %d frames, want the topmost only", len(got))
		}
	})
	t.Run("CFA equal to SP below the top", func(t *testing.T) {
		// The caller's row says CFA = SP+0: its caller's SP would equal its
		// own, which only a topmost leaf may do.
		flat := []Row{{Start: 0, CFA: ruleCFA(RegAMD64SP, 0), RA: ruleSaved(-8), FP: ruleSame}}
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, flat...), mkFDE(0x2000, 0x10, std...))
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x2000, 0x8000), mapMem{0x8000: 0x1005}, nil)
		checkUnwindErr(t, err, ErrCFANotAbove, 1, 0x1005)
		if len(got) != 2 || got[1].CFA != 0x8008 {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("CFA based on another register below the top", func(t *testing.T) {
		rows := []Row{{Start: 0, CFA: ruleCFA(3, 8), RA: ruleSaved(-8), FP: ruleSame}} // %rbx
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, rows...), mkFDE(0x2000, 0x10, std...))
		regs := x86(0x2000, 0x8000)
		regs.Set(3, 0x9000)
		_, err := (&Unwinder{Table: tab}).Backtrace(regs, mapMem{0x8000: 0x1005}, nil)
		checkUnwindErr(t, err, ErrBadRule, 1, 0x1005)
		// In the topmost frame the ruleSame row applies, with %rbx read from
		// the register file.
		got, err := (&Unwinder{Table: tab}).Backtrace(x86regs(0x1000, 0x8000, 3, 0x9000), mapMem{0x9000: 0x2008}, nil)
		checkUnwindErr(t, err, ErrUnreadable, 1, 0x2008) // 0x9008 holds nothing
		if len(got) != 2 || got[0].CFA != 0x9008 || got[1].SP != 0x9008 {
			t.Errorf("got %+v", got)
		}
	})
	// Rows no section encodes: applied directly.
	t.Run("CFA rule without a register", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		f := Frame{PC: 0x1000, SP: 0x8000, Row: Row{CFA: ruleSaved(8), RA: ruleSaved(-8), FP: ruleSame}}
		_, _, _, err := (&Unwinder{Table: tab}).applyRow(&f, &f.Row, 0, x86(0x1000, 0x8000), mapMem{})
		checkUnwindErr(t, err, ErrBadRule, 0, 0x1000)
	})
	t.Run("RA ruleSame on x86-64", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		f := Frame{PC: 0x1000, SP: 0x8000, Row: Row{CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSame, FP: ruleSame}}
		_, _, _, err := (&Unwinder{Table: tab}).applyRow(&f, &f.Row, 0, x86(0x1000, 0x8000), mapMem{})
		checkUnwindErr(t, err, ErrBadRule, 0, 0x1000)
	})
	t.Run("no SP in the register file", func(t *testing.T) {
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...))
		got, err := (&Unwinder{Table: tab}).Backtrace(&RegisterFile{PC: 0x1000}, mapMem{}, nil)
		checkUnwindErr(t, err, ErrBadRule, 0, 0x1000)
		if len(got) != 0 {
			t.Errorf("got %d frames", len(got))
		}
	})
	t.Run("signal frame", func(t *testing.T) {
		sig := mkFDE(0x3000, 0x10, std...)
		sig.Signal = true
		tab := unwTable(t, ABIAMD64LE, mkFDE(0x1000, 0x10, std...), sig)
		// The leaf was called from the signal trampoline at 0x3000, which
		// has no signal frame at its SP to read the interrupted context
		// from.
		got, err := (&Unwinder{Table: tab}).Backtrace(x86(0x1000, 0x8000), mapMem{0x8000: 0x3004}, nil)
		checkUnwindErr(t, err, ErrUnreadable, 1, 0x3004)
		if len(got) != 2 || got[1].FDE.Size == 0 || got[1].FDE.Start != 0x3000 || !got[1].Signal {
			t.Errorf("got %+v", got)
		}
	})
}

func x86regs(pc, sp uint64, reg int, v uint64) *RegisterFile {
	r := &RegisterFile{PC: pc}
	r.Set(RegAMD64SP, sp)
	r.Set(reg, v)
	return r
}

func TestBacktraceMaxFrames(t *testing.T) {
	t.Parallel()
	tab, regs, mem, wants := x86Chain(t, 5)
	got, err := (&Unwinder{Table: tab, MaxFrames: 3}).Backtrace(regs, mem, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFrames(t, got, wants[:3])
}

func TestBacktraceReusesDst(t *testing.T) {
	// Not parallel: AllocsPerRun refuses to run beside parallel tests.
	tab, regs, mem, wants := x86Chain(t, 5)
	u := Unwinder{Table: tab}
	dst := make([]Frame, 0, 16)
	got, err := u.Backtrace(regs, mem, dst)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("Backtrace did not reuse dst's storage")
	}
	checkFrames(t, got, wants)
	allocs := testing.AllocsPerRun(100, func() {
		got, err = u.Backtrace(regs, mem, got)
	})
	if err != nil || allocs != 0 {
		t.Errorf("Backtrace into a large enough dst: %v allocations per run (err %v), want 0", allocs, err)
	}
}

// BenchmarkBacktrace unwinds a 5-frame x86-64 stack (four frame-pointer
// functions under an outermost entry point).
func BenchmarkBacktrace(b *testing.B) {
	tab, regs, mem, wants := x86Chain(b, 4)
	u := Unwinder{Table: tab}
	dst := make([]Frame, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		dst, err = u.Backtrace(regs, mem, dst)
		if err != nil || len(dst) != len(wants) {
			b.Fatalf("%d frames, %v", len(dst), err)
		}
	}
}

// hashMem is a Memory of pseudo-random words; some addresses are
// unreadable.
type hashMem uint64

func (m hashMem) ReadWord(a uint64) (uint64, bool) {
	x := a ^ uint64(m)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x, a%97 != 0
}

// readableMem is a hashMem without holes.
type readableMem struct{ hashMem }

func (m readableMem) ReadWord(a uint64) (uint64, bool) {
	v, _ := m.hashMem.ReadWord(a)
	return v, true
}

// FuzzBacktrace unwinds with any decodable section, registers and memory:
// no panic, no more than MaxFrames frames, the SP never going down from
// one frame to the next and strictly up below the topmost, errors always
// *UnwindError naming the last frame.
func FuzzBacktrace(f *testing.F) {
	for _, p := range fixtureFiles(f, gasFixtures) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint64(0x401000), uint64(0x401004), uint64(0x7ff0), uint64(0x8000), uint64(0x401010))
	}
	f.Fuzz(func(t *testing.T, sec []byte, base, pc, sp, fp, lr uint64) {
		tab, err := Decode(sec, base)
		if err != nil {
			return
		}
		regs := &RegisterFile{PC: pc}
		regs.Set(tab.ABI.SPRegister(), sp)
		regs.Set(tab.ABI.FPRegister(), fp)
		regs.Set(RegAArch64LR, lr)
		regs.Set(RegS390XRA, lr)
		u := Unwinder{Table: tab, MaxFrames: 16}
		frames, err := u.Backtrace(regs, hashMem(sp^lr), nil)
		if len(frames) == 0 || len(frames) > 16 {
			t.Fatalf("%d frames", len(frames))
		}
		for i := 1; i < len(frames); i++ {
			if frames[i].SP < frames[i-1].SP || (i > 1 && frames[i].SP == frames[i-1].SP) {
				t.Fatalf("frame %d SP %#x after %#x", i, frames[i].SP, frames[i-1].SP)
			}
		}
		last := len(frames) - 1
		if err != nil {
			var ue *UnwindError
			if !errors.As(err, &ue) || ue.Frame != last || ue.PC != frames[last].PC {
				t.Fatalf("error %v does not name the last frame %d at %#x", err, last, frames[last].PC)
			}
		} else if !frames[last].Outermost && len(frames) != 16 {
			t.Fatalf("stopped after %d frames without error or outermost frame", len(frames))
		}
	})
}
