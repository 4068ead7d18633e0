package mutation_test

// The suite's own unwinder: a second consumer, written from the SFrame
// specification's pseudocode (appendix "Generating Stack Traces using
// SFrame") and the rules documented on sframe.Unwinder, over the suite's
// own reader (reader_test.go) and the kernel's signal frame layouts
// (package sigframe). It shares no code with the sframe package. Intact,
// it must agree with the builtin consumer frame for frame; with one of its
// rules broken (ruleBreak) it is a consumer mutant, which the harness must
// catch (consumer_mutants_test.go).

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/consumer"
	"github.com/sfconform/sfconform/frame"
	"github.com/sfconform/sfconform/image"
	"github.com/sfconform/sfconform/machine"
	"github.com/sfconform/sfconform/sigframe"
	"github.com/sfconform/sfconform/target"
)

// ruleBreak names the one rule a consumer mutant gets wrong; intact is
// the reference unwinder. The reader (find, meaning) and the walk below
// consult it; consumer_mutants_test.go says what each break does.
type ruleBreak uint8

const (
	intact ruleBreak = iota

	// Looking up a row.
	brkRowStartExclusive
	brkPCMaskAsInc
	brkEmptyFDENoInfo
	brkEmptySignalFDEOutermost
	brkFDESizeIgnored

	// What a row's data words mean.
	brkCFABaseBitInverted
	brkFixedRAIgnored
	brkS390XCFAUnscaled
	brkS390XRAPaddingAsOffset
	brkV2RegnumWordsAsOffsets
	brkFlexIgnoreDeref
	brkFlexBaseAlwaysCFA
	brkFlexPaddingAsPair

	// The walk.
	brkRALookupNoMinus1
	brkInterruptedLookupMinus1
	brkLRRuleInCallers
	brkRegRulesInCallers
	brkTopRulesFrame0Only
	brkCallersFPFromRegisters
	brkFPNotCarried
	brkNoOutermostStop
	brkNoCFAGrowthCheck
	brkCFAGrowthEqualInCallers
	brkCFAGrowthStrictAtTop
	brkS390XSPIsCFA
	brkNoPACStrip
	brkPACStripTopByteOnly
	brkSignalAsOrdinaryFrame
	brkSignalRestoreWrongOffset
	brkSignalRegsNotRestored
)

// maxFrames bounds a backtrace, as sframe.DefaultMaxFrames does.
const maxFrames = 64

// vaBits is the user-space virtual address width: bits at and above it of
// a signed return address hold its pointer authentication code.
const vaBits = 48

// s390xCFAAboveSP: the s390x CFA lies 160 bytes (the register save area
// the caller allocates for its callee) above the caller's SP.
const s390xCFAAboveSP = 160

// errNoFunction and errNoRow are why a lookup found nothing: "no unwind
// information", which the harness judges NOINFO.
var (
	errNoFunction = fmt.Errorf("%w: no function covers the PC", frame.ErrNoInfo)
	errNoRow      = fmt.Errorf("%w: no row of its function covers the PC", frame.ErrNoInfo)
)

// walker unwinds over one frame table.
type walker struct {
	t   *frameTable
	abi target.Target
	brk ruleBreak
	sig *sigframe.Layout
}

func newWalker(t *frameTable, abi target.Target, brk ruleBreak) *walker {
	return &walker{t: t, abi: abi, brk: brk, sig: sigframe.Of(abi)}
}

// walkFrame is a frame being unwound: its PC, SP and FP, its depth, and
// a register file.
type walkFrame struct {
	pc, sp, fp uint64
	index      int
	// exact: the topmost frame, or one a signal interrupted: the PC is
	// where execution is (not a return address) and regs are this frame's
	// registers. A caller's regs are the last exact frame's, which only
	// the breaks read.
	exact, interrupted bool
	regs               *machine.Registers
}

// backtrace unwinds from regs and appends the frames to dst[:0], topmost
// first. It ends with a nil error at an outermost frame or after
// maxFrames frames. On an error the frame that could not be unwound is the
// last one, marked Partial (its CFA unknown); a caller that failed a check
// is not appended.
func (w *walker) backtrace(regs *machine.Registers, mem machine.Memory, dst []frame.Frame) ([]frame.Frame, error) {
	dst = dst[:0]
	sp, ok := regs.Get(w.abi.SP())
	if !ok {
		return dst, errors.New("the register file has no stack pointer")
	}
	fp, _ := regs.Get(w.abi.FP())
	top := regs // the register file of frame 0, kept for the breaks that misuse it
	f := walkFrame{pc: regs.PC, sp: sp, fp: fp, exact: true, regs: regs}
	for {
		out := frame.Frame{PC: f.pc, SP: f.sp, FP: f.fp}
		next, err := w.step(&f, &out, mem, top)
		if err != nil {
			out.Partial, out.CFA = true, 0
			return append(dst, out), err
		}
		dst = append(dst, out)
		if out.Outermost || len(dst) >= maxFrames {
			return dst, nil
		}
		f = next
	}
}

// step unwinds frame f, filling out's CFA, Outermost and Signal, and
// returns its caller.
func (w *walker) step(f *walkFrame, out *frame.Frame, mem machine.Memory, top *machine.Registers) (walkFrame, error) {
	// A caller's PC is a return address: the call it returns from is the
	// byte before, in the caller's function under the row that held at the
	// call, even when the call is the function's last instruction. An
	// exact PC is the instruction about to execute.
	lookup := f.pc
	switch {
	case w.brk == brkRALookupNoMinus1:
	case w.brk == brkInterruptedLookupMinus1 && f.interrupted:
		lookup--
	case !f.exact:
		lookup--
	}
	r, err := w.t.lookup(lookup)
	if err != nil {
		return walkFrame{}, err
	}
	if r.signal && w.brk != brkSignalAsOrdinaryFrame {
		// The signal flag is looked at before anything else: the caller is
		// the context the signal interrupted, in the kernel's frame.
		out.Signal = true
		return w.signalStep(f, out, mem)
	}
	if r.outermost {
		if w.brk == brkNoOutermostStop {
			return walkFrame{}, errors.New("a row without data words: no CFA rule")
		}
		out.Outermost = true
		return walkFrame{}, nil
	}

	// Rules valid in the topmost frame only (the RA in the link register,
	// a rule on a register other than SP and FP) hold in an interrupted
	// frame too: its registers are all known.
	topRules := f.exact
	if w.brk == brkTopRulesFrame0Only {
		topRules = f.index == 0
	}
	regs := f.regs
	if w.brk == brkSignalRegsNotRestored {
		regs = top
	}

	// CFA.
	if r.cfa.kind != atAddr || r.cfa.reg == atCFA {
		return walkFrame{}, fmt.Errorf("CFA rule %s has no base register", r.cfa)
	}
	base, err := w.register(f, r.cfa.reg, topRules, regs, "CFA")
	if err != nil {
		return walkFrame{}, err
	}
	cfa := base + uint64(r.cfa.off)
	if r.cfa.deref {
		v, ok := mem.ReadWord(cfa)
		if !ok {
			return walkFrame{}, fmt.Errorf("the CFA at %#x is unreadable", cfa)
		}
		cfa = v
	}
	out.CFA = cfa

	// The caller's SP, which must lie above this frame's: a leaf that
	// allocated nothing may leave it equal in the topmost frame.
	callerSP := cfa
	if w.abi == target.S390X && w.brk != brkS390XSPIsCFA {
		callerSP = cfa - s390xCFAAboveSP
	}
	equalOK := topRules
	switch w.brk {
	case brkCFAGrowthEqualInCallers:
		equalOK = true
	case brkCFAGrowthStrictAtTop:
		equalOK = false
	}
	if w.brk != brkNoCFAGrowthCheck && (callerSP < f.sp || callerSP == f.sp && !equalOK) {
		return walkFrame{}, fmt.Errorf("caller SP %#x (CFA %#x) not above SP %#x", callerSP, cfa, f.sp)
	}

	// The return address.
	var ra uint64
	switch r.ra.kind {
	case sameReg:
		if !w.abi.HasLinkRegister() {
			return walkFrame{}, errors.New("the RA in a link register, on a target without one")
		}
		if !topRules && w.brk != brkLRRuleInCallers {
			return walkFrame{}, errors.New("the RA in the link register is known in the topmost frame only")
		}
		v, ok := regs.Get(w.abi.RA())
		if !ok {
			return walkFrame{}, errors.New("the register file has no link register")
		}
		ra = v
	case atAddr:
		if ra, err = w.value(f, r.ra, cfa, topRules, regs, mem, "RA"); err != nil {
			return walkFrame{}, err
		}
	default:
		return walkFrame{}, errors.New("no RA rule")
	}
	if r.mangled {
		switch w.brk {
		case brkNoPACStrip:
		case brkPACStripTopByteOnly:
			ra &= 1<<56 - 1
		default:
			ra &= 1<<vaBits - 1
		}
	}

	// The frame pointer: still in its register unless saved.
	callerFP := f.fp
	if w.brk == brkFPNotCarried {
		callerFP = 0
	}
	if r.fp.kind == atAddr {
		if callerFP, err = w.value(f, r.fp, cfa, topRules, regs, mem, "FP"); err != nil {
			return walkFrame{}, err
		}
	}
	// A caller has no register file of its own: it inherits the last
	// exact frame's, which only the breaks read.
	return walkFrame{pc: ra, sp: callerSP, fp: callerFP, index: f.index + 1, regs: f.regs}, nil
}

// register is the value of DWARF register reg in frame f: SP and FP are
// known in every frame, any other register where the topmost rules hold.
func (w *walker) register(f *walkFrame, reg int, topRules bool, regs *machine.Registers, what string) (uint64, error) {
	switch {
	case reg == w.abi.SP():
		return f.sp, nil
	case reg == w.abi.FP():
		if w.brk == brkCallersFPFromRegisters && !f.exact {
			v, _ := regs.Get(reg)
			return v, nil
		}
		return f.fp, nil
	case !topRules && w.brk != brkRegRulesInCallers:
		return 0, fmt.Errorf("%s rule on register %d is usable in the topmost frame only", what, reg)
	}
	v, ok := regs.Get(reg)
	if !ok {
		return 0, fmt.Errorf("%s rule needs register %d, absent from the register file", what, reg)
	}
	return v, nil
}

// value evaluates an RA or FP rule.
func (w *walker) value(f *walkFrame, r rule, cfa uint64, topRules bool, regs *machine.Registers, mem machine.Memory, what string) (uint64, error) {
	base := cfa
	if r.reg != atCFA {
		var err error
		if base, err = w.register(f, r.reg, topRules, regs, what); err != nil {
			return 0, err
		}
	}
	addr := base + uint64(r.off)
	if !r.deref {
		return addr, nil
	}
	v, ok := mem.ReadWord(addr)
	if !ok {
		return 0, fmt.Errorf("the %s at %#x is unreadable", what, addr)
	}
	return v, nil
}

// signalStep unwinds a signal trampoline's frame: the caller is the
// interrupted context the kernel saved in the signal frame, found from the
// trampoline's SP (x86-64: the handler returned through the frame's first
// word, so the frame lies one word below), with every register it saved.
// The trampoline's CFA is reported as the address of the saved registers,
// as the builtin does; it means nothing, and the oracle does not compare
// it.
func (w *walker) signalStep(f *walkFrame, out *frame.Frame, mem machine.Memory) (walkFrame, error) {
	l := w.sig
	if l == nil {
		return walkFrame{}, fmt.Errorf("no signal frame layout for %s", w.abi.Name())
	}
	at := l.ReturnFrame(f.sp)
	if w.brk == brkSignalRestoreWrongOffset {
		at = wrongSignalFrame(w.abi, f.sp)
	}
	ctx := &machine.Registers{}
	pc, ok := mem.ReadWord(at + l.PC)
	if !ok {
		return walkFrame{}, fmt.Errorf("the interrupted PC at %#x is unreadable", at+l.PC)
	}
	ctx.PC = pc
	for d := 0; d < sigframe.NumRegs; d++ {
		off, saved := l.Reg(d)
		if !saved {
			continue
		}
		v, ok := mem.ReadWord(at + off)
		if !ok {
			return walkFrame{}, fmt.Errorf("the interrupted register %d at %#x is unreadable", d, at+off)
		}
		ctx.Set(d, v)
	}
	out.CFA = at + l.MContext
	sp, _ := ctx.Get(w.abi.SP())
	fp, _ := ctx.Get(w.abi.FP())
	return walkFrame{pc: pc, sp: sp, fp: fp, index: f.index + 1, exact: true, interrupted: true, regs: ctx}, nil
}

// wrongSignalFrame is where an unwinder that misplaces the signal frame
// looks for it, the way each target's gets it wrong: x86-64 forgetting
// that the handler's return popped the frame's first word (pretcode);
// AArch64 taking the SP for the ucontext, forgetting the siginfo before
// it; s390x forgetting the 160-byte register save area at the frame's
// start.
func wrongSignalFrame(abi target.Target, sp uint64) uint64 {
	switch abi {
	case target.X86_64:
		return sp
	case target.S390X:
		return sp - s390xCFAAboveSP
	}
	return sp - 128
}

// lookup finds the row covering pc, or says there is none.
func (t *frameTable) lookup(pc uint64) (*row, error) {
	if t.function(pc) == nil {
		return nil, errNoFunction
	}
	r, ok := t.find(pc)
	if !ok {
		return nil, errNoRow
	}
	return r, nil
}

// suiteUnwinder is the suite's unwinder as a consumer, intact or with one
// rule broken.
type suiteUnwinder struct {
	brk     ruleBreak
	name    string
	w       *walker
	loadErr error
}

func newSuiteUnwinder(brk ruleBreak, name string) *suiteUnwinder {
	return &suiteUnwinder{brk: brk, name: name}
}

func (s *suiteUnwinder) Name() string   { return s.name }
func (s *suiteUnwinder) BatchSize() int { return 1 }
func (s *suiteUnwinder) Close() error   { return nil }

func (s *suiteUnwinder) Supports(t target.Target, v int) error {
	if v != 2 && v != 3 {
		return fmt.Errorf("the suite's reader reads versions 2 and 3, not %d", v)
	}
	return nil
}

func (s *suiteUnwinder) Load(img *image.Image) error {
	t, err := readSFrameBroken(img.SFrame, img.SFrameAddr, s.brk)
	s.loadErr = err
	if err != nil {
		s.w = nil
		return fmt.Errorf("%s: reading the section: %w", s.name, err)
	}
	s.w = newWalker(t, img.Target, s.brk)
	return nil
}

func (s *suiteUnwinder) Unwind(steps []consumer.Step, out []consumer.Result) error {
	if s.w == nil {
		return fmt.Errorf("%s: no section loaded: %v", s.name, s.loadErr)
	}
	for i := range steps {
		out[i].Frames, out[i].Err = s.w.backtrace(steps[i].Regs, steps[i].Mem, out[i].Frames[:0])
	}
	return nil
}
