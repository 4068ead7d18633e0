package oracle

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// call is one active function as recorded at its entry.
type call struct {
	fn       int // index into the symbols
	cfa      uint64
	ra       uint64
	callerSP uint64
	callerFP uint64
	// signal: a signal trampoline's frame, pushed when a signal handler is
	// entered; ra, callerSP and callerFP are the interrupted PC, SP and
	// FP, read from the signal frame.
	signal bool
}

// Tracker follows calls and returns on the emulated machine.
type Tracker struct {
	target  target.Target
	sp, fp  int // DWARF numbers of the target's SP and FP
	symbols []image.Symbol
	// starts are the symbols a function may be entered at, by address
	// (for one address, in symbol order: the last one counts). A slice,
	// not a map: an image with ten thousand functions that never run
	// made building the map a large part of checking it.
	starts []start
	// startBits has the bit startBit(a) set for every a in starts: most
	// steps are not at a function start, and the bit test spares them the
	// search.
	startBits  []uint64
	startShift uint
	entry      int // index of the entry stub's symbol
	calls      []call
	// stacks are the stacks the image declares (symbols of kind stack),
	// as ranges (Addr, End]: SP is at End when a stack is empty, and a
	// frame's CFA on it is above Addr.
	stacks [][2]uint64
	sig    *sigframe.Layout
}

// NewTracker prepares a tracker for an image whose run starts in the
// symbol holding entry (the stub, the outermost frame).
func NewTracker(t target.Target, symbols []image.Symbol, entry uint64) (*Tracker, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("oracle: %v is not a target", t)
	}
	tr := &Tracker{
		target:  t,
		sp:      t.SP(),
		fp:      t.FP(),
		symbols: symbols,
		starts:  make([]start, 0, len(symbols)),
		entry:   -1,
		sig:     sigframe.Of(t),
	}
	bits := 512
	for bits < 16*len(symbols) {
		bits *= 2
	}
	tr.startBits = make([]uint64, bits/64)
	tr.startShift = 64
	for b := bits; b > 1; b >>= 1 {
		tr.startShift--
	}
	for i := range symbols {
		s := &symbols[i] // not a 72-byte copy per symbol
		if s.IsStack() {
			tr.stacks = append(tr.stacks, [2]uint64{s.Addr, s.End()})
			continue
		}
		if entry >= s.Addr && entry < s.End() {
			tr.entry = i
		}
		// A restorer is returned to, never called.
		if s.Kind != image.KindSignalRestorer {
			tr.starts = append(tr.starts, start{s.Addr, i})
			b := tr.startBit(s.Addr)
			tr.startBits[b/64] |= 1 << (b % 64)
		}
	}
	if tr.entry < 0 {
		return nil, fmt.Errorf("oracle: no symbol holds the entry point 0x%x", entry)
	}
	// Images keep their symbols sorted (image.SortSymbols); any other
	// order is sorted here, stably, so the last symbol of an address
	// still counts.
	if !slices.IsSortedFunc(tr.starts, cmpStart) {
		slices.SortStableFunc(tr.starts, cmpStart)
	}
	tr.Reset()
	return tr, nil
}

// startBit is addr's bit in startBits.
func (t *Tracker) startBit(addr uint64) uint64 {
	return (addr * 0x9e37_79b9_7f4a_7c15) >> t.startShift
}

// start is a symbol a function may be entered at: its address and index.
type start struct {
	addr uint64
	fn   int
}

func cmpStart(a, b start) int { return cmp.Compare(a.addr, b.addr) }

// startAt is the symbol starting at pc, if one does: the last of those
// with that address.
func (t *Tracker) startAt(pc uint64) (int, bool) {
	if b := t.startBit(pc); t.startBits[b/64]&(1<<(b%64)) == 0 {
		return 0, false
	}
	// The first start above pc, then one back.
	lo, hi := 0, len(t.starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.starts[m].addr <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 && t.starts[lo-1].addr == pc {
		return t.starts[lo-1].fn, true
	}
	return 0, false
}

// Reset forgets every call: the next step is the first of a new run.
func (t *Tracker) Reset() {
	t.calls = append(t.calls[:0], call{fn: t.entry})
}

// Depth is the number of active frames, the entry stub included.
func (t *Tracker) Depth() int { return len(t.calls) }

// Observe updates the call stack from the machine state before the
// instruction at regs.PC executes.
func (t *Tracker) Observe(regs *machine.Registers, mem machine.Memory) error {
	pc := regs.PC
	sp := regs.Regs[t.sp]
	for len(t.calls) > 1 {
		top := &t.calls[len(t.calls)-1]
		if pc != top.ra || sp != top.callerSP {
			break
		}
		t.calls = t.calls[:len(t.calls)-1]
	}
	// A part of a function (a cold part) is entered by a jump with its
	// owner's frame live: neither a call nor a tail call. A signal
	// handler is entered by the kernel.
	if fn, ok := t.startAt(pc); ok && fn != t.entry && t.symbols[fn].PartOf == "" {
		if t.symbols[fn].Kind == image.KindSignalHandler {
			if err := t.signal(fn, regs, mem); err != nil {
				return err
			}
		} else {
			c, err := t.enter(fn, regs, mem)
			if err != nil {
				return err
			}
			if top := &t.calls[len(t.calls)-1]; len(t.calls) > 1 && top.cfa == c.cfa {
				*top = c // tail call: the caller's frame is gone
			} else {
				t.calls = append(t.calls, c)
			}
		}
	}
	if len(t.stacks) > 0 {
		t.switchStack(sp)
	}
	return nil
}

// switchStack makes the innermost frame the outermost one when SP has
// moved into a declared stack that holds none of the active frames (no
// CFA inside it): the function switched to a fresh stack, as a thread
// start or a clone child does, and nothing below it is reachable from
// there any more. Calls it then makes have their CFAs on that stack, so
// they are active frames of it and do not trigger this again.
func (t *Tracker) switchStack(sp uint64) {
	for _, s := range t.stacks {
		if sp <= s[0] || sp > s[1] {
			continue
		}
		for i := 1; i < len(t.calls); i++ {
			if c := t.calls[i].cfa; c > s[0] && c <= s[1] {
				return
			}
		}
		if len(t.calls) > 1 {
			t.calls = append(t.calls[:0], call{fn: t.calls[len(t.calls)-1].fn})
		}
		return
	}
}

// enter reads what the psABI guarantees at a function's first instruction.
func (t *Tracker) enter(fn int, regs *machine.Registers, mem machine.Memory) (call, error) {
	sp := regs.Regs[t.sp]
	c := call{fn: fn, callerFP: regs.Regs[t.fp]}
	if !t.target.Valid() {
		return c, fmt.Errorf("oracle: no entry convention for %v", t.target)
	}
	c.cfa, c.callerSP = sp+uint64(t.target.CFAAtEntry()), sp+uint64(t.target.CallerSPAtEntry())
	if t.target.HasLinkRegister() {
		c.ra = regs.Regs[t.target.RA()]
		return c, nil
	}
	at := uint64(int64(c.cfa) + target.RAOnStackAtEntry) // [CFA-8], the SP at entry
	ra, ok := mem.ReadWord(at)
	if !ok {
		return c, fmt.Errorf("oracle: entry of %s: return address at sp 0x%x unreadable", t.symbols[fn].Name, at)
	}
	c.ra = ra
	return c, nil
}

// signal records a signal handler's entry. The kernel left a signal frame
// at SP with the interrupted context: the interrupted instruction has not
// been observed (it runs after the handler), so it is observed first, from
// the registers saved there; then comes the trampoline's frame, whose
// caller is that context, and the handler's own frame by the ordinary
// entry convention, its return address the restorer.
func (t *Tracker) signal(fn int, regs *machine.Registers, mem machine.Memory) error {
	l, name := t.sig, t.symbols[fn].Name
	if l == nil {
		return fmt.Errorf("oracle: signal handler %s entered on %v, which has no signal frame layout", name, t.target)
	}
	frameAt := regs.Regs[t.sp]
	read := func(what string, off uint64) (uint64, error) {
		v, ok := mem.ReadWord(frameAt + off)
		if !ok {
			return 0, fmt.Errorf("oracle: entry of signal handler %s: the interrupted %s at 0x%x is unreadable", name, what, frameAt+off)
		}
		return v, nil
	}
	var ctx machine.Registers
	var err error
	if ctx.PC, err = read("PC", l.PC); err != nil {
		return err
	}
	saved := []int{t.sp, t.fp}
	if t.target.HasLinkRegister() {
		saved = append(saved, t.target.RA())
	}
	for _, r := range saved {
		off, _ := l.Reg(r)
		v, err := read(fmt.Sprintf("register %d", r), off)
		if err != nil {
			return err
		}
		ctx.Set(r, v)
	}
	if ctx.Regs[t.sp] <= frameAt {
		return fmt.Errorf("oracle: entry of signal handler %s: the interrupted SP 0x%x in the frame at 0x%x is not above it", name, ctx.Regs[t.sp], frameAt)
	}
	if err := t.Observe(&ctx, mem); err != nil {
		return err
	}
	h, err := t.enter(fn, regs, mem)
	if err != nil {
		return err
	}
	tramp := t.symbolAt(h.ra)
	if tramp < 0 || t.symbols[tramp].Kind != image.KindSignalRestorer {
		return fmt.Errorf("oracle: signal handler %s entered with return address 0x%x, not in a signal restorer: no signal delivered it", name, h.ra)
	}
	// The trampoline's CFA means nothing: the frame's address stands in.
	t.calls = append(t.calls,
		call{fn: tramp, cfa: frameAt, ra: ctx.PC, callerSP: ctx.Regs[t.sp], callerFP: ctx.Regs[t.fp], signal: true},
		h)
	return nil
}

// symbolAt returns the index of the symbol holding pc, or -1.
func (t *Tracker) symbolAt(pc uint64) int {
	for i, s := range t.symbols {
		if pc >= s.Addr && pc < s.End() {
			return i
		}
	}
	return -1
}

// Function names the innermost active function.
func (t *Tracker) Function() string { return t.symbols[t.calls[len(t.calls)-1].fn].Name }

// Expected appends the expected backtrace, innermost first, to dst.
func (t *Tracker) Expected(dst []frame.Frame, regs *machine.Registers) []frame.Frame {
	n := len(t.calls)
	// Each frame is written field by field into its slot: a frame built
	// on the stack and appended is copied with loads that stall on the
	// stores that built it.
	pc, sp, fp := regs.PC, regs.Regs[t.sp], regs.Regs[t.fp]
	for i := n - 1; i >= 0; i-- {
		c := &t.calls[i]
		dst = append(dst, frame.Frame{})
		f := &dst[len(dst)-1]
		f.PC, f.SP, f.FP = pc, sp, fp
		if i == 0 {
			f.Outermost = true
		} else {
			f.CFA, f.Signal = c.cfa, c.signal
		}
		pc, sp, fp = c.ra, c.callerSP, c.callerFP
	}
	return dst
}
