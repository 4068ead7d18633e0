package oracle

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sfconform/sfconform/producer"
	"github.com/sfconform/sfconform/sframe"
)

// machine is a hand-driven stand-in for the emulator: the test moves
// registers and memory exactly as the instructions named in the comments
// would.
type machine struct {
	regs sframe.RegisterFile
	mem  map[uint64]uint64
}

func (m *machine) ReadWord(a uint64) (uint64, bool) { v, ok := m.mem[a]; return v, ok }

func (m *machine) at(pc, sp, fp uint64, abi sframe.ABI) *sframe.RegisterFile {
	m.regs.PC = pc
	m.regs.Set(abi.SPRegister(), sp)
	m.regs.Set(abi.FPRegister(), fp)
	return &m.regs
}

var x86Symbols = []producer.Symbol{
	{Name: "_start", Addr: 0x1000, Size: 0x10},
	{Name: "f", Addr: 0x2000, Size: 0x20},
	{Name: "g", Addr: 0x3000, Size: 0x10},
}

func TestTrackerX86CallsReturnsAndTailCalls(t *testing.T) {
	abi := sframe.ABIAMD64LE
	tr, err := NewTracker(abi, x86Symbols, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	m := &machine{mem: map[uint64]uint64{}}
	const stubFP = 0xaaaa
	steps := []struct {
		what     string
		pc, sp   uint64
		fp       uint64
		mem      map[uint64]uint64
		expected []Frame
	}{
		{"stub: call f", 0x1000, 0x8000, stubFP, nil, []Frame{
			{PC: 0x1000, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f entry: push %rbp", 0x2000, 0x7ff8, stubFP, map[uint64]uint64{0x7ff8: 0x1005}, []Frame{
			{PC: 0x2000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: mov %rsp,%rbp", 0x2001, 0x7ff0, stubFP, map[uint64]uint64{0x7ff0: stubFP}, []Frame{
			{PC: 0x2001, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g entry from call at f+4", 0x3000, 0x7fe8, 0x7ff0, map[uint64]uint64{0x7fe8: 0x2009}, []Frame{
			{PC: 0x3000, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g: ret executes next", 0x3001, 0x7fe8, 0x7ff0, nil, []Frame{
			{PC: 0x3001, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"back in f after g returned", 0x2009, 0x7ff0, 0x7ff0, nil, []Frame{
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: after leave, jmp g", 0x200a, 0x7ff8, stubFP, nil, []Frame{
			{PC: 0x200a, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g entered by tail jump replaces f", 0x3000, 0x7ff8, stubFP, nil, []Frame{
			{PC: 0x3000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"back in the stub", 0x1005, 0x8000, stubFP, nil, []Frame{
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
	}
	for _, s := range steps {
		for a, v := range s.mem {
			m.mem[a] = v
		}
		regs := m.at(s.pc, s.sp, s.fp, abi)
		if err := tr.Observe(regs, m); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		got := tr.Expected(nil, regs)
		if !reflect.DeepEqual(got, s.expected) {
			t.Fatalf("%s:\n%s", s.what, FormatFrames(s.expected, got))
		}
	}
}

func TestTrackerEntryConventions(t *testing.T) {
	syms := []producer.Symbol{{Name: "_start", Addr: 0x1000, Size: 8}, {Name: "f", Addr: 0x2000, Size: 8}}
	for _, c := range []struct {
		abi    sframe.ABI
		raReg  int
		cfa    uint64
		sp, fp uint64
	}{
		{sframe.ABIAArch64LE, sframe.RegAArch64LR, 0x8000, 0x8000, 0x9000},
		{sframe.ABIAArch64BE, sframe.RegAArch64LR, 0x8000, 0x8000, 0x9000},
		{sframe.ABIS390XBE, sframe.RegS390XRA, 0x8000 + 160, 0x8000, 0x9000},
	} {
		t.Run(c.abi.Name(), func(t *testing.T) {
			tr, err := NewTracker(c.abi, syms, 0x1000)
			if err != nil {
				t.Fatal(err)
			}
			m := &machine{mem: map[uint64]uint64{}}
			if err := tr.Observe(m.at(0x1000, c.sp, c.fp, c.abi), m); err != nil {
				t.Fatal(err)
			}
			m.regs.Set(c.raReg, 0x1004)
			regs := m.at(0x2000, c.sp, c.fp, c.abi)
			if err := tr.Observe(regs, m); err != nil {
				t.Fatal(err)
			}
			want := []Frame{
				{PC: 0x2000, CFA: c.cfa, SP: c.sp, FP: c.fp},
				{PC: 0x1004, SP: c.sp, FP: c.fp, Outermost: true},
			}
			if got := tr.Expected(nil, regs); !reflect.DeepEqual(got, want) {
				t.Fatalf("\n%s", FormatFrames(want, got))
			}
			// Returning: PC at the RA with SP back at the caller's pops the frame.
			regs = m.at(0x1004, c.sp, c.fp, c.abi)
			if err := tr.Observe(regs, m); err != nil {
				t.Fatal(err)
			}
			if tr.Depth() != 1 {
				t.Fatalf("depth after return = %d, want 1", tr.Depth())
			}
		})
	}
}

func TestTrackerUnreadableReturnAddress(t *testing.T) {
	tr, _ := NewTracker(sframe.ABIAMD64LE, x86Symbols, 0x1000)
	m := &machine{mem: map[uint64]uint64{}}
	if err := tr.Observe(m.at(0x2000, 0x7ff8, 0, sframe.ABIAMD64LE), m); err == nil {
		t.Fatal("entry with an unreadable return address slot: no error")
	}
}

func TestNewTrackerNeedsEntrySymbol(t *testing.T) {
	if _, err := NewTracker(sframe.ABIAMD64LE, x86Symbols, 0x5000); err == nil {
		t.Fatal("entry outside every symbol accepted")
	}
}

func TestCompare(t *testing.T) {
	exp := []Frame{
		{PC: 0x3000, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
		{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
		{PC: 0x1005, SP: 0x8000, FP: 0xaaaa, Outermost: true},
	}
	mod := func(i int, f func(*Frame)) []Frame {
		g := append([]Frame(nil), exp...)
		f(&g[i])
		return g
	}
	cases := []struct {
		name    string
		got     []Frame
		err     error
		verdict Verdict
		frame   int
		field   string
	}{
		{"equal", exp, nil, OK, -1, ""},
		{"ra", mod(1, func(f *Frame) { f.PC++ }), nil, Wrong, 1, "pc"},
		{"cfa", mod(1, func(f *Frame) { f.CFA += 8 }), nil, Wrong, 1, "cfa"},
		{"sp", mod(2, func(f *Frame) { f.SP -= 8 }), nil, Wrong, 2, "sp"},
		{"fp", mod(1, func(f *Frame) { f.FP = 0 }), nil, Wrong, 1, "fp"},
		{"not outermost", mod(2, func(f *Frame) { f.Outermost = false }), nil, Wrong, 2, "outermost"},
		{"outermost CFA is not compared", mod(2, func(f *Frame) { f.CFA = 0x1234 }), nil, OK, -1, ""},
		{"too deep", append(append([]Frame(nil), exp...), Frame{PC: 1}), nil, Wrong, 3, "depth"},
		{"stops early silently", exp[:2], nil, Wrong, 2, "depth"},
		{"no fde", exp[:1], fmt.Errorf("frame 1: %w", sframe.ErrNoFDE), NoInfo, 1, ""},
		{"no row", exp[:2], fmt.Errorf("x: %w", sframe.ErrNoRow), NoInfo, 2, ""},
		{"consumer says no info", exp[:0], fmt.Errorf("x: %w", ErrNoInfo), NoInfo, 0, ""},
		{"consumer error", exp[:1], errors.New("crashed"), Error, 1, ""},
		{"wrong beats error", mod(0, func(f *Frame) { f.CFA = 1 })[:1], errors.New("x"), Wrong, 0, "cfa"},
	}
	for _, c := range cases {
		j := Compare(exp, c.got, c.err)
		if j.Verdict != c.verdict || j.Frame != c.frame || j.Field != c.field {
			t.Errorf("%s: got %v frame %d field %q (%s), want %v frame %d field %q",
				c.name, j.Verdict, j.Frame, j.Field, j.Detail, c.verdict, c.frame, c.field)
		}
	}
}

func TestVerdictText(t *testing.T) {
	for v := OK; v <= Error; v++ {
		b, _ := v.MarshalText()
		var w Verdict
		if err := w.UnmarshalText(b); err != nil || w != v {
			t.Errorf("%v round trips to %v, %v", v, w, err)
		}
	}
	var w Verdict
	if w.UnmarshalText([]byte("MAYBE")) == nil {
		t.Error("unknown verdict accepted")
	}
}
