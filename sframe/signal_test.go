package sframe

import (
	"encoding/binary"
	"testing"
)

// byteMem is a stack of bytes in a byte order: the unwinder reads the
// signal frame's words through it exactly as a target stores them.
type byteMem struct {
	base uint64
	b    []byte
	o    binary.ByteOrder
}

func newByteMem(o binary.ByteOrder) *byteMem {
	return &byteMem{base: 0x7eff_0000, b: make([]byte, 0x11000), o: o}
}

func (m *byteMem) ReadWord(a uint64) (uint64, bool) {
	if a < m.base || a-m.base > uint64(len(m.b))-8 {
		return 0, false
	}
	return m.o.Uint64(m.b[a-m.base:]), true
}

func (m *byteMem) put(a, v uint64) { m.o.PutUint64(m.b[a-m.base:], v) }

// signalWant is one expected frame of the signal backtraces.
type signalWant struct {
	pc, sp, fp, cfa     uint64
	signal, interrupted bool
	outermost           bool
}

func checkSignalFrames(t *testing.T, name string, got []Frame, err error, wants []signalWant) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v (after %d frames)", name, err, len(got))
	}
	if len(got) != len(wants) {
		t.Errorf("%s: %d frames, want %d", name, len(got), len(wants))
	}
	for i := 0; i < len(got) && i < len(wants); i++ {
		g, w := got[i], wants[i]
		if g.PC != w.pc || g.SP != w.sp || g.FP != w.fp || g.CFA != w.cfa || g.Signal != w.signal || g.Interrupted != w.interrupted || g.Outermost != w.outermost {
			t.Errorf("%s frame %d: got pc %#x sp %#x fp %#x cfa %#x signal %v interrupted %v outermost %v\n"+
				"                want pc %#x sp %#x fp %#x cfa %#x signal %v interrupted %v outermost %v",
				name, i, g.PC, g.SP, g.FP, g.CFA, g.Signal, g.Interrupted, g.Outermost,
				w.pc, w.sp, w.fp, w.cfa, w.signal, w.interrupted, w.outermost)
		}
	}
}

// TestBacktraceAArch64SignalInLeafEntry: a signal strikes a leaf at its
// first instruction, its return address still in x30. The handler's
// backtrace goes through the trampoline (signal FDE, the kernel vDSO's
// frame-record rows, which the unwinder does not use) to the leaf, looked
// up at its exact PC (PC - 1 lies in no function) with the RA taken from
// the saved x30, then to the leaf's caller. Both byte orders.
func TestBacktraceAArch64SignalInLeafEntry(t *testing.T) {
	t.Parallel()
	for _, abi := range []ABI{ABIAArch64LE, ABIAArch64BE} {
		const (
			s, c, l, h, tr = 0x400000, 0x401000, 0x402000, 0x403000, 0x404000
			restorer       = tr + 4
			sp0            = 0x7f00_0000
			fpS            = 0x1234
		)
		leafRow := Row{CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame}
		record := []Row{{CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame},
			{Start: 4, CFA: ruleCFA(RegAArch64SP, 16), RA: ruleSaved(-8), FP: ruleSaved(-16)}}
		trampRows := []Row{{CFA: ruleCFA(RegAArch64FP, 0), RA: ruleSaved(8), FP: ruleSaved(0), Signal: true}}
		sig := mkFDE(tr, 12, trampRows...)
		sig.Signal = true
		tab := unwTable(t, abi,
			mkFDE(s, 0x10, outermostRow), mkFDE(c, 0x40, record...), mkFDE(l, 0x10, leafRow),
			mkFDE(h, 0x20, record...), sig)
		mem := newByteMem(abi.ByteOrder())
		// _start called C (RA 0x400008); C pushed its frame record and
		// called L at C+0x10; L was interrupted at its first instruction.
		spC := uint64(sp0 - 16)
		mem.put(spC, fpS)
		mem.put(spC+8, s+8)
		spL := spC
		// The kernel's frame: rt_sigframe at frame, the frame record above.
		frame := (spL-16)&^15 - 4688
		rec := frame + 4688
		mem.put(rec, spC)
		mem.put(rec+8, c+0x14)
		mc := frame + 128 + 176
		for r := uint64(0); r <= 30; r++ {
			mem.put(mc+8+8*r, 0xdead0000+r)
		}
		mem.put(mc+8+8*29, spC)    // x29
		mem.put(mc+8+8*30, c+0x14) // x30: the leaf's RA
		mem.put(mc+8+8*31, spL)    // sp
		mem.put(mc+8+8*32, l)      // pc
		// The handler stored its frame record: x29 = &record, x30 = the
		// restorer.
		spH := frame - 16
		mem.put(spH, rec)
		mem.put(spH+8, restorer)
		regs := &RegisterFile{PC: h + 8}
		regs.Set(RegAArch64SP, spH)
		regs.Set(RegAArch64FP, rec)
		regs.Set(RegAArch64LR, restorer)
		got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
		checkSignalFrames(t, abi.String(), got, err, []signalWant{
			{pc: h + 8, sp: spH, fp: rec, cfa: frame},
			{pc: restorer, sp: frame, fp: rec, cfa: mc, signal: true},
			{pc: l, sp: spL, fp: spC, cfa: spL, interrupted: true},
			{pc: c + 0x14, sp: spL, fp: spC, cfa: sp0},
			{pc: s + 8, sp: sp0, fp: fpS, outermost: true},
		})
		// The same from inside the trampoline, the handler returned.
		regs = &RegisterFile{PC: restorer}
		regs.Set(RegAArch64SP, frame)
		regs.Set(RegAArch64FP, rec)
		got, err = (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
		checkSignalFrames(t, abi.String()+" in the trampoline", got, err, []signalWant{
			{pc: restorer, sp: frame, fp: rec, cfa: mc, signal: true},
			{pc: l, sp: spL, fp: spC, cfa: spL, interrupted: true},
			{pc: c + 0x14, sp: spL, fp: spC, cfa: sp0},
			{pc: s + 8, sp: sp0, fp: fpS, outermost: true},
		})
	}
}

// TestBacktraceX86SignalWithDRAP: the interrupted function's CFA is based
// on %r10 (a DRAP frame): a rule usable only where the registers are
// known, which they are in the saved context, not in the handler's
// register file (which holds another %r10). The trampoline has glibc's
// __restore_rt rules in a FLEX FDE.
func TestBacktraceX86SignalWithDRAP(t *testing.T) {
	t.Parallel()
	const (
		s, c, l, h, tr = 0x400000, 0x401000, 0x402000, 0x403000, 0x404000
		restorer       = tr + 1
		sp0            = 0x7f00_0000
		rbp            = 0x5555
	)
	std := Row{CFA: ruleCFA(RegAMD64SP, 8), RA: ruleSaved(-8), FP: ruleSame}
	drap := []Row{std, {Start: 4, CFA: ruleCFA(10, 0), RA: ruleSaved(-8), FP: ruleSame}}
	sp := Rule{Kind: RuleExpr, Reg: RegAMD64SP, Deref: true}
	cfa, ra, fp := sp, sp, sp
	cfa.Offset, ra.Offset, fp.Offset = 160, 168, 120
	sig := mkFDE(tr, 8, Row{CFA: cfa, RA: ra, FP: fp, Signal: true})
	sig.Signal, sig.Type = true, FDETypeFlex
	dr := mkFDE(l, 0x10, drap...)
	dr.Type = FDETypeFlex
	tab := unwTable(t, ABIAMD64LE, mkFDE(s, 0x10, outermostRow), mkFDE(c, 0x10, std), dr, mkFDE(h, 0x10, std), sig)
	mem := newByteMem(binary.LittleEndian)
	// _start called C (call at s, RA s+5); C called L (RA c+9); L set
	// %r10 = its CFA and realigned SP; the signal came at L+4.
	mem.put(sp0-8, s+5)
	spC := uint64(sp0 - 8)
	mem.put(spC-8, c+9)
	r10 := spC
	spI := (spC-8-0x28)&^31 - 0x10
	frame := ((spI-128-512)&^63-440)&^15 - 8
	mem.put(frame, restorer) // pretcode
	uc := frame + 8
	for g := uint64(0); g < 18; g++ {
		mem.put(uc+40+8*g, 0xdead0000+g)
	}
	mem.put(uc+40+8*2, r10)  // r10
	mem.put(uc+40+8*10, rbp) // rbp
	mem.put(uc+40+8*15, spI) // rsp
	mem.put(uc+40+8*16, l+4) // rip
	regs := &RegisterFile{PC: h}
	regs.Set(RegAMD64SP, frame)
	regs.Set(RegAMD64FP, rbp)
	regs.Set(10, 0x99999) // the handler's %r10 is not the interrupted one
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	checkSignalFrames(t, "x86-64", got, err, []signalWant{
		{pc: h, sp: frame, fp: rbp, cfa: frame + 8},
		{pc: restorer, sp: frame + 8, fp: rbp, cfa: uc + 40, signal: true},
		{pc: l + 4, sp: spI, fp: rbp, cfa: r10, interrupted: true},
		{pc: c + 9, sp: spC, fp: rbp, cfa: sp0},
		{pc: s + 5, sp: sp0, fp: rbp, outermost: true},
	})
}

// TestBacktraceS390XSignalRAInFPR: the interrupted function keeps its RA
// in %f8 (DWARF 24): the saved FPR in the signal frame gives it.
func TestBacktraceS390XSignalRAInFPR(t *testing.T) {
	t.Parallel()
	const (
		s, c, l, h, tr = 0x400000, 0x401000, 0x402000, 0x403000, 0x404000
		restorer       = tr + 2
		sp0            = 0x7f00_0000
		r11            = 0x7777
	)
	entry := Row{CFA: ruleCFA(RegS390XSP, 160), RA: ruleSame, FP: ruleSame}
	caller := Row{CFA: ruleCFA(RegS390XSP, 320), RA: ruleSaved(-48), FP: ruleSame}
	inFPR := Row{Start: 6, CFA: ruleCFA(RegS390XSP, 160), RA: ruleReg(24), FP: ruleSame}
	lf := mkFDE(l, 0x10, entry, inFPR)
	lf.Type = FDETypeFlex
	sigRow := entry
	sigRow.Signal = true
	sig := mkFDE(tr, 4, sigRow)
	sig.Signal = true
	tab := unwTable(t, ABIS390XBE, mkFDE(s, 0x10, outermostRow), mkFDE(c, 0x20, caller), lf, mkFDE(h, 0x10, entry), sig)
	mem := newByteMem(binary.BigEndian)
	// _start's SP sp0; C allocated 160 and saved r14 (RA s+6) in
	// _start's save area; C called L (RA c+10, moved by L into %f8).
	mem.put(sp0+112, s+6)
	spC := uint64(sp0 - 160)
	spI := spC
	frame := (spI - 1320) &^ 7
	mc := frame + 296 + 40
	mem.put(mc, 0x0705000180000000)
	mem.put(mc+8, l+6) // psw.addr
	for r := uint64(0); r < 16; r++ {
		mem.put(mc+16+8*r, 0xdead0000+r)
	}
	mem.put(mc+16+8*11, r11)
	mem.put(mc+16+8*15, spI)
	mem.put(mc+16+8*14, 0xbad)        // r14 no longer holds the RA
	mem.put(mc+16+128+64+8+8*8, c+10) // f8
	regs := &RegisterFile{PC: h}
	regs.Set(RegS390XSP, frame)
	regs.Set(RegS390XFP, r11)
	regs.Set(RegS390XRA, restorer)
	regs.Set(24, 0x4444) // the handler's %f8
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	checkSignalFrames(t, "s390x", got, err, []signalWant{
		{pc: h, sp: frame, fp: r11, cfa: frame + 160},
		{pc: restorer, sp: frame, fp: r11, cfa: mc, signal: true},
		{pc: l + 6, sp: spI, fp: r11, cfa: spI + 160, interrupted: true},
		{pc: c + 10, sp: spI, fp: r11, cfa: sp0 + 160},
		{pc: s + 6, sp: sp0, fp: r11, outermost: true},
	})
}

// TestSignalContextUnreadable: a signal FDE over a stack holding no
// signal frame ends the backtrace at the trampoline with ErrUnreadable,
// the trampoline kept as a signal frame that could not be unwound.
func TestSignalContextUnreadable(t *testing.T) {
	t.Parallel()
	row := Row{CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame, Signal: true}
	sig := mkFDE(0x4000, 8, row)
	sig.Signal = true
	tab := unwTable(t, ABIAArch64LE, sig)
	regs := &RegisterFile{PC: 0x4004}
	regs.Set(RegAArch64SP, 0x1000) // below the stack newByteMem holds
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, newByteMem(binary.LittleEndian), nil)
	checkUnwindErr(t, err, ErrUnreadable, 0, 0x4004)
	if len(got) != 1 || !got[0].Signal {
		t.Errorf("got %+v", got)
	}
}

// TestSignalFDEWithoutFREs: a version 3 signal FDE without FREs (what GNU
// as 2.47 writes for a trampoline whose CFI it cannot express) is a
// signal trampoline, not an outermost frame: the signal flag is looked at
// first, as the Linux unwinder does, and the trampoline's rows are not
// used anyway.
func TestSignalFDEWithoutFREs(t *testing.T) {
	t.Parallel()
	const l, tr, restorer = 0x2000, 0x4000, 0x4004
	sig := mkFDE(tr, 8)
	sig.Signal = true
	leaf := Row{CFA: ruleCFA(RegAArch64SP, 0), RA: ruleSame, FP: ruleSame}
	tab := unwTable(t, ABIAArch64LE, mkFDE(0x1000, 0x10, outermostRow), mkFDE(l, 0x10, leaf), sig)
	mem := newByteMem(binary.LittleEndian)
	const frame = 0x7f00_0000
	mc := uint64(frame + 128 + 176)
	mem.put(mc+8+8*30, 0x1004) // x30
	mem.put(mc+8+8*31, frame+0x2000)
	mem.put(mc+8+8*32, l+4)
	regs := &RegisterFile{PC: restorer}
	regs.Set(RegAArch64SP, frame)
	got, err := (&Unwinder{Table: tab}).Backtrace(regs, mem, nil)
	checkSignalFrames(t, "no FREs", got, err, []signalWant{
		{pc: restorer, sp: frame, cfa: mc, signal: true},
		{pc: l + 4, sp: frame + 0x2000, cfa: frame + 0x2000, interrupted: true},
		{pc: 0x1004, sp: frame + 0x2000, outermost: true},
	})
}
