package check

import (
	"fmt"

	"github.com/sfconform/sfconform/cfi"
	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/target"
)

// A function run on the check's synthetic arguments and memory can write
// over the slot where it saved its caller's FP or return address: zlib's
// inflate_table increments count[len] with lengths read from the filler
// memory, and one index lands on its own saved %rbp. From there on the
// caller's value is nowhere in the machine, the program itself could
// never return correctly, and a backtrace that reads the slot (as the
// section and the CFI both say it must) differs from the oracle's truth
// without any row being wrong. The watch below sees that happen and ends
// the run's judgement there: the rest of the run is set aside
// (AsideClobbered), counted, and reported as a note, never an error.
//
// What counts as such a write, so that no wrong row is excused:
//
//   - Only slots the CFI (not the section under test) describes with an
//     offset rule, "saved at CFA+N", the CFA being the oracle's. Rules
//     given by an expression (finding 030's "%rbp saved at (%rbp)") are
//     never watched.
//   - The slot is watched from the first step of the rule's span, and only
//     if at that step it holds the caller's value (the oracle's: the FP
//     the caller had, the return address of the call) and that value is
//     not a small number a wrong slot could hold by chance. The check's
//     entry stub gives the function under test a distinctive caller FP
//     (entryFP) for this.
//   - It is overwritten while the same rule still holds (no step in
//     between in which the CFI said "restored"), while the slot is at or
//     above the SP, and while the register itself does not hold the
//     caller's value: a rule that outlives a restore (the register holds
//     the value again, the slot is reused) is a wrong rule and stays
//     judged.
//
// Slots of frames further out (a callee writing over its caller's saved
// registers, "everything above the frame's CFA") are watched the same way
// while those frames wait for their callees.
const AsideClobbered = "overwrote its own saved registers (synthetic input)"

// entryFP is the FP the entry stub's caller holds: a value no filler
// word or small integer takes, and no mapped address (an unwinder that
// dereferences it fails, as 030's does).
const entryFP = 0x00f0_0dfa_ce5a_5a00

// distinctive reports whether a saved value is unlikely to be in a wrong
// slot by chance.
func distinctive(v uint64) bool { return v >= 0x10000 && v <= ^uint64(0)-0x10000 }

type savedSlot struct {
	addr  uint64
	span  bool // a rule "saved at addr" holds since the span's first step
	armed bool // at that step the slot held val, the caller's value
	val   uint64
	// moved: the register held another value than val at a step of
	// the span (frame 0's steps: the function used it after saving).
	moved bool
}

type activation struct {
	slots [2]savedSlot // FP, RA
	gen   uint64
}

// clobber is where a run's watch saw a saved register overwritten.
type clobber struct {
	step      int // steps judged before it in the run
	pc        uint64
	reg       string
	addr, cfa uint64
	was, now  uint64
	frame     int // the frame whose slot it was (0: the running function)
}

// slotWatch watches one run at a time. The consumer wrapper hands it each
// step's registers and memory before the consumer unwinds (the check's
// consumer takes one step at a time, while the machine is stopped there);
// the aside callback, which comes with the oracle's frames, then checks.
type slotWatch struct {
	c     *checker
	t     target.Target
	delta uint64
	acts  map[uint64]*activation // by CFA
	gen   uint64
	regs  *machine.Registers
	mem   machine.Memory
	steps int
	lost  *clobber
	off   bool // the watch is off (a consumer that batches steps)
}

func (w *slotWatch) reset() {
	w.acts, w.gen, w.regs, w.mem, w.steps, w.lost = map[uint64]*activation{}, 0, nil, nil, 0, nil
}

// watched is a consumer whose steps the watch sees first.
type watched struct {
	consumer.Consumer
	w *slotWatch
}

func (c *watched) Unwind(steps []consumer.Step, out []consumer.Result) error {
	if len(steps) == 1 {
		c.w.regs, c.w.mem = steps[0].Regs, steps[0].Mem
	}
	return c.Consumer.Unwind(steps, out)
}

// step observes one judged step; true once the run has lost a saved
// register (this step and every later one are set aside).
func (w *slotWatch) step(expected []frame.Frame) bool {
	defer func() { w.steps++ }()
	if w.lost != nil {
		return true
	}
	regs, mem := w.regs, w.mem
	w.regs, w.mem = nil, nil
	if w.off || mem == nil || regs == nil || len(expected) < 2 {
		return false
	}
	w.gen++
	for k := 0; k+1 < len(expected); k++ {
		f, caller := expected[k], expected[k+1]
		if f.Outermost || f.Signal || caller.Signal {
			break
		}
		a := w.acts[f.CFA]
		if a == nil {
			if k > 0 {
				continue // never seen as frame 0: nothing armed
			}
			a = &activation{}
			w.acts[f.CFA] = a
		}
		a.gen = w.gen
		truths := [2]uint64{caller.FP, caller.PC}
		if k == 0 {
			w.spans(a, f, truths, mem)
		}
		for s := range a.slots {
			if c := w.check(&a.slots[s], s, k, f, truths[s], regs, mem); c != nil {
				w.lost = c
				return true
			}
		}
	}
	for cfa, a := range w.acts {
		if a.gen != w.gen {
			delete(w.acts, cfa)
		}
	}
	return false
}

// spans follows the CFI's rules for frame 0: a slot's span starts where
// its rule starts or moves, and is armed there if the slot holds the
// caller's value.
func (w *slotWatch) spans(a *activation, f frame.Frame, truths [2]uint64, mem machine.Memory) {
	var rules [2]cfi.Rule
	pc := f.PC - w.delta
	if fde := w.c.cfi.Find(pc); fde != nil && fde.CIE.RAReg == uint64(w.t.RA()) {
		if row, ok := cfi.At(w.c.cfiRowsOf(fde), pc); ok && len(row.Regs) == 2 {
			rules = [2]cfi.Rule{row.Regs[0], row.Regs[1]}
		}
	}
	for s, r := range rules {
		sl := &a.slots[s]
		if r.Kind != cfi.Offset {
			*sl = savedSlot{}
			continue
		}
		addr := f.CFA + uint64(r.Offset)
		if sl.span && sl.addr == addr {
			continue
		}
		*sl = savedSlot{addr: addr, span: true}
		if v, ok := mem.ReadWord(addr); ok && v == truths[s] && distinctive(v) {
			sl.armed, sl.val = true, v
		}
	}
}

// reg is the register of slot s in frame k: for frame 0 the FP is the
// frame's own, the RA, on a target with a link register, that register;
// deeper frames' FP is the one they called with, their link registers
// were used by their calls.
func (w *slotWatch) reg(s, k int, f frame.Frame, regs *machine.Registers) (uint64, bool) {
	if s == 0 {
		return f.FP, true
	}
	if k == 0 && w.t.HasLinkRegister() {
		return regs.Get(w.t.RA())
	}
	return 0, false
}

// check reports a clobber of an armed slot of frame k.
func (w *slotWatch) check(sl *savedSlot, s, k int, f frame.Frame, truth uint64, regs *machine.Registers, mem machine.Memory) *clobber {
	if !sl.armed || truth != sl.val {
		return nil
	}
	if reg, ok := w.reg(s, k, f, regs); ok && k == 0 && reg != sl.val {
		sl.moved = true
	}
	v, ok := mem.ReadWord(sl.addr)
	if !ok || v == sl.val {
		return nil
	}
	// Below the SP the slot was popped or freed: the rule outlived the
	// save, which is the rule's fault.
	if sl.addr < f.SP {
		sl.armed = false
		return nil
	}
	// The register holds the caller's value again after the function
	// used it: it was restored and the rule should say so. (Not yet
	// used: the slot is still the copy the epilogue restores from.)
	if reg, ok := w.reg(s, k, f, regs); ok && reg == sl.val && sl.moved {
		sl.armed = false
		return nil
	}
	name := "FP"
	if s == 1 {
		name = "return address"
	}
	return &clobber{step: w.steps, pc: f.PC, reg: name, addr: sl.addr, cfa: f.CFA, was: sl.val, now: v, frame: k}
}

// cfiRowsOf is fde's rows, interpreted once.
func (c *checker) cfiRowsOf(fde *cfi.FDE) []cfi.Row {
	if c.cfiRows == nil {
		c.cfiRows = map[*cfi.FDE][]cfi.Row{}
	}
	rows, ok := c.cfiRows[fde]
	if !ok {
		rows, _ = fde.Rows(c.track(), c.l.Target.IsAArch64(), c.l.File.ByteOrder)
		c.cfiRows[fde] = rows
	}
	return rows
}

// clobberNote describes a run's clobber.
func clobberNote(cl *clobber, delta uint64, v int, fn string) string {
	who := "the function"
	if cl.frame > 0 {
		who = fmt.Sprintf("a callee of frame %d", cl.frame)
	}
	return fmt.Sprintf("dynamic: variant %d: the saved %s of %s (at CFA%+d, where the CFI says it is saved) was overwritten, 0x%x -> 0x%x, seen at step %d at 0x%x (written by %s): with the check's synthetic inputs the program destroyed the value it restores from there; the rest of the run (%s) is left out",
		v, cl.reg, fn, int64(cl.addr-cl.cfa), cl.was, cl.now, cl.step, cl.pc-delta, who, AsideClobbered)
}
