package oracle

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

var signalSymbols = []image.Symbol{
	{Name: "_start", Addr: 0x1000, Size: 0x10},
	{Name: "f", Addr: 0x2000, Size: 0x40},
	{Name: "g", Addr: 0x3000, Size: 0x20},
	{Name: "handler", Addr: 0x4000, Size: 0x20, Kind: image.KindSignalHandler},
	{Name: "sigtramp", Addr: 0x5000, Size: 0x10, Kind: image.KindSignalRestorer},
}

const restorer = 0x5004 // after the trampoline's leading nop

// sim drives a fakeMachine through calls and a signal as each ABI does
// them, and says what the frames are.
type sim struct {
	t   *testing.T
	abi target.Target
	tr  *Tracker
	m   *fakeMachine
	pc  uint64
	sp  uint64
	fp  uint64
	lr  uint64
}

func (s *sim) observe(what string, want []frame.Frame) {
	s.t.Helper()
	regs := s.m.at(s.pc, s.sp, s.fp, s.abi)
	if s.abi.HasLinkRegister() {
		regs.Set(s.abi.RA(), s.lr)
	}
	if err := s.tr.Observe(regs, s.m); err != nil {
		s.t.Fatalf("%s: %s: %v", s.abi.Name(), what, err)
	}
	if want == nil {
		return
	}
	if got := s.tr.Expected(nil, regs); !reflect.DeepEqual(got, want) {
		s.t.Fatalf("%s: %s:\n%s", s.abi.Name(), what, FormatFrames(want, got))
	}
}

// call enters fn from a call whose return address is ret: the ABI's
// entry state. It returns the callee's CFA and the caller's SP.
func (s *sim) call(fn, ret uint64) (cfa, callerSP uint64) {
	callerSP = s.sp
	switch s.abi {
	case target.X86_64:
		s.sp -= 8
		s.m.mem[s.sp] = ret
		cfa = callerSP
	case target.S390X:
		s.lr, cfa = ret, s.sp+160
	default:
		s.lr, cfa = ret, s.sp
	}
	s.pc = fn
	return cfa, callerSP
}

// signal delivers a signal at the current state as the kernel does and
// enters the handler; it returns the frame's address and what the
// handler's caller (the trampoline) sees: its SP and FP, and the
// handler's CFA.
func (s *sim) signal() (frameAt, trampSP, trampFP, hCFA uint64) {
	l := sigframe.Of(s.abi)
	var ctx sigframe.Context
	ctx.PC = s.pc
	ctx.Regs[s.abi.SP()], ctx.Regs[s.abi.FP()] = s.sp, s.fp
	if s.abi.HasLinkRegister() {
		ctx.Regs[s.abi.RA()] = s.lr
	}
	d := l.Deliver(&ctx, 10, 0x4000, restorer)
	for k := 0; k+8 <= len(d.Data); k += 8 {
		s.m.mem[d.Frame+uint64(k)] = s.abi.ByteOrder().Uint64(d.Data[k:])
	}
	s.pc, s.sp, s.fp = d.Entry.PC, d.Entry.Regs[s.abi.SP()], d.Entry.Regs[s.abi.FP()]
	if s.abi.HasLinkRegister() {
		s.lr = d.Entry.Regs[s.abi.RA()]
	}
	trampSP = s.sp
	switch s.abi {
	case target.X86_64:
		trampSP, hCFA = s.sp+8, s.sp+8
	case target.S390X:
		hCFA = s.sp + 160
	default:
		hCFA = s.sp
	}
	return d.Frame, trampSP, s.fp, hCFA
}

// TestTrackerSignal: a signal interrupts a leaf (whose return address is
// still in the link register where the ABI has one), at its first
// instruction and further in, and at a return point. At the handler's
// entry the expected backtrace is the handler, the trampoline (a signal
// frame), the interrupted function at the interrupted PC and its callers;
// the handler's frame pops when it returns to the restorer, the
// trampoline's when rt_sigreturn has brought back the interrupted PC and
// SP.
func TestTrackerSignal(t *testing.T) {
	t.Parallel()
	for _, abi := range target.All {
		for _, at := range []string{"leaf body", "leaf entry", "return point"} {
			t.Run(abi.Name()+"/"+at, func(t *testing.T) {
				t.Parallel()
				tr, err := NewTracker(abi, signalSymbols, 0x1000)
				if err != nil {
					t.Fatal(err)
				}
				const stubFP, fFP = 0xaaaa, 0xbbbb
				s := &sim{t: t, abi: abi, tr: tr, m: &fakeMachine{mem: map[uint64]uint64{}}, pc: 0x1000, sp: 0x8000, fp: stubFP}
				s.observe("the stub", nil)
				stub := frame.Frame{PC: 0x1006, SP: 0x8000, FP: stubFP, Outermost: true}
				fCFA, _ := s.call(0x2000, 0x1006)
				s.observe("f's entry", nil)
				s.pc, s.sp, s.fp = 0x2004, s.sp-32, fFP
				s.observe("f's body", nil)
				fFrame := func(pc uint64) frame.Frame { return frame.Frame{PC: pc, CFA: fCFA, SP: s.sp, FP: fFP} }
				var gCFA, gCallerSP uint64
				var interrupted, after []frame.Frame
				switch at {
				case "leaf body", "leaf entry":
					gCFA, gCallerSP = s.call(0x3000, 0x2014)
					if at == "leaf body" {
						s.observe("g's entry", nil)
						s.pc = 0x3004
						s.observe("g's body", nil)
					}
					interrupted = []frame.Frame{{PC: s.pc, CFA: gCFA, SP: s.sp, FP: fFP}, {PC: 0x2014, CFA: fCFA, SP: gCallerSP, FP: fFP}, stub}
				case "return point":
					// g has returned, but the instruction at the return
					// address has not been observed.
					_, gCallerSP = s.call(0x3000, 0x2014)
					s.observe("g's entry", nil)
					s.pc, s.sp = 0x2014, gCallerSP
					interrupted = []frame.Frame{fFrame(0x2014), stub}
				}
				ipc, isp, ilr := s.pc, s.sp, s.lr
				frameAt, trampSP, trampFP, hCFA := s.signal()
				tramp := frame.Frame{PC: restorer, CFA: frameAt, SP: trampSP, FP: trampFP, Signal: true}
				handler := frame.Frame{PC: 0x4000, CFA: hCFA, SP: s.sp, FP: s.fp}
				s.observe("the handler's entry", append([]frame.Frame{handler, tramp}, interrupted...))
				// The handler returns to the restorer.
				s.pc, s.sp = restorer, trampSP
				tramp.SP = s.sp
				tramp2 := tramp
				tramp2.PC = restorer
				s.observe("the restorer", append([]frame.Frame{tramp2}, interrupted...))
				// rt_sigreturn.
				s.pc, s.sp, s.fp, s.lr = ipc, isp, fFP, ilr
				after = interrupted
				s.observe("after rt_sigreturn", after)
				if tr.Depth() != len(after) {
					t.Fatalf("depth %d after rt_sigreturn, want %d", tr.Depth(), len(after))
				}
			})
		}
	}
}

// TestTrackerSignalChecks: a handler entered by a call, or with a frame
// that does not hold an SP above it, is an error, not a guess.
func TestTrackerSignalChecks(t *testing.T) {
	t.Parallel()
	abi := target.AArch64
	tr, err := NewTracker(abi, signalSymbols, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	s := &sim{t: t, abi: abi, tr: tr, m: &fakeMachine{mem: map[uint64]uint64{}}, pc: 0x1000, sp: 0x8000, fp: 1}
	s.observe("the stub", nil)
	s.call(0x4000, 0x1004) // a call to the handler
	// Whatever memory holds at SP, the return address is not a restorer.
	for k := uint64(0); k < 5000; k += 8 {
		s.m.mem[s.sp+k] = 0x9000
	}
	var regs machine.Registers
	regs.PC = 0x4000
	regs.Set(abi.SP(), s.sp)
	regs.Set(abi.RA(), 0x1004)
	if err := tr.Observe(&regs, s.m); err == nil || !strings.Contains(err.Error(), "not in a signal restorer") {
		t.Errorf("a handler entered by a call: %v", err)
	}
	tr.Reset()
	regs.Set(abi.RA(), restorer)
	s.m.mem[s.sp+sigframe.Of(abi).SP()] = s.sp - 16
	if err := tr.Observe(&regs, s.m); err == nil || !strings.Contains(err.Error(), "not above") {
		t.Errorf("an interrupted SP below the frame: %v", err)
	}
	tr.Reset()
	if err := tr.Observe(&regs, &fakeMachine{mem: map[uint64]uint64{}}); err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Errorf("no frame at all: %v", err)
	}
}
