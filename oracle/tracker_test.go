package oracle

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
	"github.com/sfconform/sfconform/verdict"
)

// machine is a hand-driven stand-in for the emulator: the test moves
// registers and memory exactly as the instructions named in the comments
// would.
type fakeMachine struct {
	regs machine.Registers
	mem  map[uint64]uint64
}

func (m *fakeMachine) ReadWord(a uint64) (uint64, bool) { v, ok := m.mem[a]; return v, ok }

func (m *fakeMachine) at(pc, sp, fp uint64, abi target.Target) *machine.Registers {
	m.regs.PC = pc
	m.regs.Set(abi.SP(), sp)
	m.regs.Set(abi.FP(), fp)
	return &m.regs
}

var x86Symbols = []image.Symbol{
	{Name: "_start", Addr: 0x1000, Size: 0x10},
	{Name: "f", Addr: 0x2000, Size: 0x20},
	{Name: "g", Addr: 0x3000, Size: 0x10},
}

func TestTrackerX86CallsReturnsAndTailCalls(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	tr, err := NewTracker(abi, x86Symbols, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{mem: map[uint64]uint64{}}
	const stubFP = 0xaaaa
	steps := []struct {
		what     string
		pc, sp   uint64
		fp       uint64
		mem      map[uint64]uint64
		expected []frame.Frame
	}{
		{"stub: call f", 0x1000, 0x8000, stubFP, nil, []frame.Frame{
			{PC: 0x1000, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f entry: push %rbp", 0x2000, 0x7ff8, stubFP, map[uint64]uint64{0x7ff8: 0x1005}, []frame.Frame{
			{PC: 0x2000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: mov %rsp,%rbp", 0x2001, 0x7ff0, stubFP, map[uint64]uint64{0x7ff0: stubFP}, []frame.Frame{
			{PC: 0x2001, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g entry from call at f+4", 0x3000, 0x7fe8, 0x7ff0, map[uint64]uint64{0x7fe8: 0x2009}, []frame.Frame{
			{PC: 0x3000, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g: ret executes next", 0x3001, 0x7fe8, 0x7ff0, nil, []frame.Frame{
			{PC: 0x3001, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"back in f after g returned", 0x2009, 0x7ff0, 0x7ff0, nil, []frame.Frame{
			{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: after leave, jmp g", 0x200a, 0x7ff8, stubFP, nil, []frame.Frame{
			{PC: 0x200a, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g entered by tail jump replaces f", 0x3000, 0x7ff8, stubFP, nil, []frame.Frame{
			{PC: 0x3000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"back in the stub", 0x1005, 0x8000, stubFP, nil, []frame.Frame{
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
	t.Parallel()
	syms := []image.Symbol{{Name: "_start", Addr: 0x1000, Size: 8}, {Name: "f", Addr: 0x2000, Size: 8}}
	for _, c := range []struct {
		abi    target.Target
		raReg  int
		cfa    uint64
		sp, fp uint64
	}{
		{target.AArch64, target.RegAArch64LR, 0x8000, 0x8000, 0x9000},
		{target.AArch64BE, target.RegAArch64LR, 0x8000, 0x8000, 0x9000},
		{target.S390X, target.RegS390XRA, 0x8000 + 160, 0x8000, 0x9000},
	} {
		t.Run(c.abi.Name(), func(t *testing.T) {
			t.Parallel()
			tr, err := NewTracker(c.abi, syms, 0x1000)
			if err != nil {
				t.Fatal(err)
			}
			m := &fakeMachine{mem: map[uint64]uint64{}}
			if err := tr.Observe(m.at(0x1000, c.sp, c.fp, c.abi), m); err != nil {
				t.Fatal(err)
			}
			m.regs.Set(c.raReg, 0x1004)
			regs := m.at(0x2000, c.sp, c.fp, c.abi)
			if err := tr.Observe(regs, m); err != nil {
				t.Fatal(err)
			}
			want := []frame.Frame{
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
	t.Parallel()
	tr, _ := NewTracker(target.X86_64, x86Symbols, 0x1000)
	m := &fakeMachine{mem: map[uint64]uint64{}}
	if err := tr.Observe(m.at(0x2000, 0x7ff8, 0, target.X86_64), m); err == nil {
		t.Fatal("entry with an unreadable return address slot: no error")
	}
}

func TestNewTrackerNeedsEntrySymbol(t *testing.T) {
	t.Parallel()
	if _, err := NewTracker(target.X86_64, x86Symbols, 0x5000); err == nil {
		t.Fatal("entry outside every symbol accepted")
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	exp := []frame.Frame{
		{PC: 0x3000, CFA: 0x7ff0, SP: 0x7fe8, FP: 0x7ff0},
		{PC: 0x2009, CFA: 0x8000, SP: 0x7ff0, FP: 0x7ff0},
		{PC: 0x1005, SP: 0x8000, FP: 0xaaaa, Outermost: true},
	}
	mod := func(i int, f func(*frame.Frame)) []frame.Frame {
		g := append([]frame.Frame(nil), exp...)
		f(&g[i])
		return g
	}
	// partial is exp[:n+1] with frame n reached but not unwound.
	partial := func(n int, f func(*frame.Frame)) []frame.Frame {
		g := append([]frame.Frame(nil), exp[:n+1]...)
		g[n].CFA, g[n].Outermost, g[n].Partial = 0, false, true
		if f != nil {
			f(&g[n])
		}
		return g
	}
	noInfo := fmt.Errorf("looking up 0x2008: %w", frame.ErrNoInfo)
	cases := []struct {
		name    string
		got     []frame.Frame
		err     error
		verdict verdict.Verdict
		frame   int
		field   string
	}{
		{"equal", exp, nil, verdict.OK, -1, ""},
		{"ra", mod(1, func(f *frame.Frame) { f.PC++ }), nil, verdict.Wrong, 1, "pc"},
		{"cfa", mod(1, func(f *frame.Frame) { f.CFA += 8 }), nil, verdict.Wrong, 1, "cfa"},
		{"sp", mod(2, func(f *frame.Frame) { f.SP -= 8 }), nil, verdict.Wrong, 2, "sp"},
		{"fp", mod(1, func(f *frame.Frame) { f.FP = 0 }), nil, verdict.Wrong, 1, "fp"},
		{"not outermost", mod(2, func(f *frame.Frame) { f.Outermost = false }), nil, verdict.Wrong, 2, "outermost"},
		{"outermost CFA is not compared", mod(2, func(f *frame.Frame) { f.CFA = 0x1234 }), nil, verdict.OK, -1, ""},
		{"too deep", append(append([]frame.Frame(nil), exp...), frame.Frame{PC: 1}), nil, verdict.Wrong, 3, "depth"},
		{"stops early silently", exp[:2], nil, verdict.Wrong, 2, "depth"},
		// A consumer with no information for frame 1's PC: frames 0 and
		// 1's PC/SP/FP are right, so the step is NOINFO at frame 1.
		{"no info at frame 1", partial(1, nil), noInfo, verdict.NoInfo, 1, ""},
		{"no info at frame 0", partial(0, nil), noInfo, verdict.NoInfo, 0, ""},
		{"no info, frames dropped", exp[:1], noInfo, verdict.NoInfo, 1, ""},
		// The RA that led to the missing information is itself wrong: that
		// is WRONG, not NOINFO.
		{"no info after a wrong RA", partial(1, func(f *frame.Frame) { f.PC = 0x9999 }), noInfo, verdict.Wrong, 1, "pc"},
		{"no info after a wrong SP", partial(1, func(f *frame.Frame) { f.SP = 0x1 }), noInfo, verdict.Wrong, 1, "sp"},
		{"partial frame's CFA is not compared", partial(1, func(f *frame.Frame) { f.CFA = 0x42 }), noInfo, verdict.NoInfo, 1, ""},
		{"consumer error", partial(1, nil), errors.New("crashed"), verdict.Error, 1, ""},
		{"sframe lookup errors are not NOINFO unless wrapped", partial(1, nil), fmt.Errorf("x: %w", errors.New("sframe: no FDE covers the PC")), verdict.Error, 1, ""},
		{"wrong beats error", mod(0, func(f *frame.Frame) { f.CFA = 1 })[:1], errors.New("x"), verdict.Wrong, 0, "cfa"},
		{"partial frame without an error", partial(1, nil), nil, verdict.Error, 1, ""},
		{"partial frame in the middle", append(partial(1, nil), exp[2]), noInfo, verdict.Error, 1, ""},
	}
	for _, c := range cases {
		j := Compare(exp, c.got, c.err)
		if j.Verdict != c.verdict || j.Frame != c.frame || j.Field != c.field {
			t.Errorf("%s: got %v frame %d field %q (%s), want %v frame %d field %q",
				c.name, j.Verdict, j.Frame, j.Field, j.Detail, c.verdict, c.frame, c.field)
		}
	}
}

// A cold part (GCC's f.cold) runs in its owner's frame: reaching its start
// by a jump is neither a call nor a tail call, a call from it returns into
// it, and a return from it pops the owner's frame.
func TestTrackerColdPart(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	syms := append(append([]image.Symbol(nil), x86Symbols...),
		image.Symbol{Name: "f.cold", Addr: 0x4000, Size: 0x10, PartOf: "f"},
		image.Symbol{Name: "h.cold", Addr: 0x4010, Size: 0x10, PartOf: "h"},
		image.Symbol{Name: "h", Addr: 0x5000, Size: 0x10})
	tr, err := NewTracker(abi, syms, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{mem: map[uint64]uint64{}}
	const stubFP = 0xaaaa
	steps := []struct {
		what     string
		pc, sp   uint64
		fp       uint64
		mem      map[uint64]uint64
		function string
		expected []frame.Frame
	}{
		{"stub: call f", 0x1000, 0x8000, stubFP, nil, "_start", []frame.Frame{
			{PC: 0x1000, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f entry: push %rbp", 0x2000, 0x7ff8, stubFP, map[uint64]uint64{0x7ff8: 0x1005}, "f", []frame.Frame{
			{PC: 0x2000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: jmp f.cold", 0x2001, 0x7ff0, stubFP, map[uint64]uint64{0x7ff0: stubFP}, "f", []frame.Frame{
			{PC: 0x2001, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f.cold entered with f's frame live", 0x4000, 0x7ff0, stubFP, nil, "f", []frame.Frame{
			{PC: 0x4000, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"g called from f.cold", 0x3000, 0x7fe8, stubFP, map[uint64]uint64{0x7fe8: 0x4005}, "g", []frame.Frame{
			{PC: 0x3000, CFA: 0x7ff0, SP: 0x7fe8, FP: stubFP},
			{PC: 0x4005, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"back in f.cold", 0x4005, 0x7ff0, stubFP, nil, "f", []frame.Frame{
			{PC: 0x4005, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f.cold: pop %rbp, ret next", 0x4006, 0x7ff8, stubFP, nil, "f", []frame.Frame{
			{PC: 0x4006, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f.cold returned: f's frame popped", 0x1005, 0x8000, stubFP, nil, "_start", []frame.Frame{
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		// A frameless h jumps into its part with SP where the call left
		// it: the CFA equals h's, as a tail call's would; still no entry.
		{"stub: call h", 0x1005, 0x8000, stubFP, nil, "_start", []frame.Frame{
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"h entry", 0x5000, 0x7ff8, stubFP, map[uint64]uint64{0x7ff8: 0x100a}, "h", []frame.Frame{
			{PC: 0x5000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x100a, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"h.cold entered without a frame", 0x4010, 0x7ff8, stubFP, nil, "h", []frame.Frame{
			{PC: 0x4010, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x100a, SP: 0x8000, FP: stubFP, Outermost: true}}},
	}
	for _, s := range steps {
		for a, v := range s.mem {
			m.mem[a] = v
		}
		regs := m.at(s.pc, s.sp, s.fp, abi)
		if err := tr.Observe(regs, m); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := tr.Expected(nil, regs); !reflect.DeepEqual(got, s.expected) {
			t.Fatalf("%s:\n%s", s.what, FormatFrames(s.expected, got))
		}
		if tr.Function() != s.function {
			t.Fatalf("%s: in %s, want %s", s.what, tr.Function(), s.function)
		}
	}
}

// A function switches to a fresh stack the image declares (mov $top,%rsp,
// as a thread start or a clone child does): from then on it is the
// outermost frame, the frames below it are gone, and calls it makes on the
// new stack stack up above it. A deeper function that switches to a
// second declared stack becomes the outermost frame in turn.
func TestTrackerNewStack(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	syms := []image.Symbol{
		{Name: "_start", Addr: 0x1000, Size: 0x10},
		{Name: "f", Addr: 0x2000, Size: 0x20},
		{Name: "g", Addr: 0x3000, Size: 0x20},
		{Name: "h", Addr: 0x3800, Size: 0x10},
		{Name: "stack_f", Addr: 0x5000, Size: 0x1000, Kind: image.KindStack},
		{Name: "stack_g", Addr: 0x4000, Size: 0x1000, Kind: image.KindStack},
	}
	tr, err := NewTracker(abi, syms, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{mem: map[uint64]uint64{}}
	const stubFP = 0xaaaa
	steps := []struct {
		what     string
		pc, sp   uint64
		fp       uint64
		mem      map[uint64]uint64
		expected []frame.Frame
	}{
		{"stub: call f", 0x1000, 0x8000, stubFP, nil, []frame.Frame{
			{PC: 0x1000, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f entry: push %rbp", 0x2000, 0x7ff8, stubFP, map[uint64]uint64{0x7ff8: 0x1005}, []frame.Frame{
			{PC: 0x2000, CFA: 0x8000, SP: 0x7ff8, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f: mov $0x6000,%esp", 0x2001, 0x7ff0, stubFP, map[uint64]uint64{0x7ff0: stubFP}, []frame.Frame{
			{PC: 0x2001, CFA: 0x8000, SP: 0x7ff0, FP: stubFP},
			{PC: 0x1005, SP: 0x8000, FP: stubFP, Outermost: true}}},
		{"f on the new stack: outermost", 0x2006, 0x6000, stubFP, nil, []frame.Frame{
			{PC: 0x2006, SP: 0x6000, FP: stubFP, Outermost: true}}},
		{"g entry from call at f+6", 0x3000, 0x5ff8, stubFP, map[uint64]uint64{0x5ff8: 0x200b}, []frame.Frame{
			{PC: 0x3000, CFA: 0x6000, SP: 0x5ff8, FP: stubFP},
			{PC: 0x200b, SP: 0x6000, FP: stubFP, Outermost: true}}},
		{"g: push on the stack that holds its frame", 0x3001, 0x5ff0, stubFP, nil, []frame.Frame{
			{PC: 0x3001, CFA: 0x6000, SP: 0x5ff0, FP: stubFP},
			{PC: 0x200b, SP: 0x6000, FP: stubFP, Outermost: true}}},
		{"g: mov $0x5000,%esp to its own stack", 0x3006, 0x5000, stubFP, nil, []frame.Frame{
			{PC: 0x3006, SP: 0x5000, FP: stubFP, Outermost: true}}},
		{"h entry from call at g+6", 0x3800, 0x4ff8, stubFP, map[uint64]uint64{0x4ff8: 0x300b}, []frame.Frame{
			{PC: 0x3800, CFA: 0x5000, SP: 0x4ff8, FP: stubFP},
			{PC: 0x300b, SP: 0x5000, FP: stubFP, Outermost: true}}},
		{"back in g", 0x300b, 0x5000, stubFP, nil, []frame.Frame{
			{PC: 0x300b, SP: 0x5000, FP: stubFP, Outermost: true}}},
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
	if _, err := NewTracker(abi, syms, 0x5800); err == nil {
		t.Error("an entry point inside a stack accepted: a stack is not code")
	}
}

// TestCompareSignalFrame: a signal trampoline's CFA means nothing and is
// not compared, whatever the consumer says it is; every other field of
// it, and the CFA of every other frame, still is.
func TestCompareSignalFrame(t *testing.T) {
	t.Parallel()
	exp := []frame.Frame{
		{PC: 0x4000, CFA: 0x6f08, SP: 0x6f00, FP: 0x7ff0},               // the handler
		{PC: 0x5001, CFA: 0x7000, SP: 0x6f08, FP: 0x7ff0, Signal: true}, // the trampoline
		{PC: 0x3004, CFA: 0x7fe0, SP: 0x7fd0, FP: 0x7ff0},               // the interrupted function
		{PC: 0x1005, SP: 0x8000, FP: 0xaaaa, Outermost: true},
	}
	mod := func(i int, f func(*frame.Frame)) []frame.Frame {
		g := append([]frame.Frame(nil), exp...)
		f(&g[i])
		return g
	}
	for _, c := range []struct {
		name  string
		got   []frame.Frame
		v     verdict.Verdict
		frame int
		field string
	}{
		{"equal", exp, verdict.OK, -1, ""},
		{"the trampoline's CFA differs", mod(1, func(f *frame.Frame) { f.CFA = 0x1234 }), verdict.OK, -1, ""},
		{"the consumer does not mark the trampoline", mod(1, func(f *frame.Frame) { f.Signal = false }), verdict.OK, -1, ""},
		{"the trampoline's SP differs", mod(1, func(f *frame.Frame) { f.SP += 8 }), verdict.Wrong, 1, "sp"},
		{"the interrupted PC is one off", mod(2, func(f *frame.Frame) { f.PC-- }), verdict.Wrong, 2, "pc"},
		{"the interrupted frame's CFA differs", mod(2, func(f *frame.Frame) { f.CFA += 16 }), verdict.Wrong, 2, "cfa"},
		{"the handler's CFA differs", mod(0, func(f *frame.Frame) { f.CFA = 0x6f10 }), verdict.Wrong, 0, "cfa"},
	} {
		j := Compare(exp, c.got, nil)
		if j.Verdict != c.v || j.Frame != c.frame || j.Field != c.field {
			t.Errorf("%s: got %v frame %d field %q (%s), want %v frame %d field %q", c.name, j.Verdict, j.Frame, j.Field, j.Detail, c.v, c.frame, c.field)
		}
	}
	// The consumer's flag does not make a frame a signal frame: the
	// expected backtrace decides.
	got := append([]frame.Frame(nil), exp...)
	got[2].Signal, got[2].CFA = true, 1
	if j := Compare(exp, got, nil); j.Verdict != verdict.Wrong || j.Field != "cfa" {
		t.Errorf("a frame the consumer calls a signal frame had its CFA skipped: %+v", j)
	}
	if s := exp[1].String(); !strings.Contains(s, "signal") {
		t.Errorf("a signal frame prints as %q", s)
	}
}

// TestTrackerFindsStartsInAnyOrder: a function is entered at its symbol's
// address whatever the order of the symbols and however many there are
// (the start index is sorted and searched), and of two symbols at one
// address the last one counts.
func TestTrackerFindsStartsInAnyOrder(t *testing.T) {
	t.Parallel()
	abi := target.X86_64
	var syms []image.Symbol
	for i := range 3000 { // a large table's functions that never run
		syms = append(syms, image.Symbol{Name: fmt.Sprintf("idle%d", i), Addr: 0x10000 + uint64(16*i), Size: 16})
	}
	syms = append(syms,
		image.Symbol{Name: "g", Addr: 0x3000, Size: 0x10},
		image.Symbol{Name: "f-alias", Addr: 0x2000, Size: 0x20},
		image.Symbol{Name: "f", Addr: 0x2000, Size: 0x20},
		image.Symbol{Name: "_start", Addr: 0x1000, Size: 0x10})
	tr, err := NewTracker(abi, syms, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMachine{mem: map[uint64]uint64{0x7ff8: 0x1005, 0x7ff0: 0x2005}}
	for _, s := range []struct {
		pc, sp uint64
		depth  int
		fn     string
	}{
		{0x1000, 0x8000, 1, "_start"},
		{0x1004, 0x8000, 1, "_start"},
		{0x2000, 0x7ff8, 2, "f"},
		{0x2004, 0x7ff8, 2, "f"},
		{0x3000, 0x7ff0, 3, "g"},
		{0x10000 + 16*2999 + 4, 0x7ff0, 3, "g"}, // inside an idle function, not at its start
		{0x10000 + 16*2999, 0x7fe8, 4, "idle2999"},
	} {
		if s.fn == "idle2999" {
			m.mem[0x7fe8] = 0x3005
		}
		if err := tr.Observe(m.at(s.pc, s.sp, 0, abi), m); err != nil {
			t.Fatalf("pc %#x: %v", s.pc, err)
		}
		if tr.Depth() != s.depth || tr.Function() != s.fn {
			t.Errorf("pc %#x: depth %d in %s, want %d in %s", s.pc, tr.Depth(), tr.Function(), s.depth, s.fn)
		}
	}
}
