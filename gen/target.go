package gen

import (
	"errors"
	"fmt"

	"github.com/sfconform/sfconform/sframe"
	"github.com/sfconform/sfconform/target"
)

// isa is everything gen knows about one target: registers, the state at a
// function's entry, the call discipline, and the primitives the shared
// skeletons (skeletons.go) and the target's own patterns build functions
// from.
type isa struct {
	abi        target.Target
	sp, fp, ra int // DWARF numbers; ra is the return-address column
	entrySPOff int64
	entryRA    sframe.Rule
	argRegs    []int // DWARF numbers
	testBits   int   // bits a conditional branch may test
	codeAlign  int

	typeDirective string
	regName       func(dwarf int) string

	// callOK says whether a call is legal in this frame state.
	callOK func(st *frame) error
	// testBranch emits a test of bit of argument register arg and a
	// branch to label taken when the bit is set (set) or clear (!set).
	testBranch func(b *builder, arg, bit int, set bool, label string)
	call       func(b *builder, fn string)
	stub       func(b *builder, root string)
	filler     func(b *builder)
	loop       func(b *builder, n int)

	prims prims

	// own lists the patterns only this target has, in catalog order after
	// the shared skeletons.
	own []*pattern
	// patterns is the whole catalog: the skeletons the target supports,
	// then its own patterns. Built once by catalogFor.
	patterns []*pattern
}

// prims are the per-target steps the shared skeletons are written in. Each
// one emits instructions in the target's own idiom and records what they do
// to the frame through the builder (sp, saveRA, fpFromSP, ...), so the rows
// follow from the instructions. Primitives make their own seeded choices
// (sizes, instruction forms) with b.rng.
type prims struct {
	// fpSetup saves what the caller needs back (RA where the target keeps
	// it in a register, the FP), makes the FP the CFA base and allocates
	// some locals: afterwards a call is legal.
	fpSetup func(b *builder)
	// fpTeardowns are alternative epilogues undoing fpSetup: SP back at its
	// entry value, FP and RA where the caller left them.
	fpTeardowns []func(b *builder)
	// spSetup saves what a call needs saved and allocates a frame with the
	// CFA based on SP; spTeardown undoes it. epi runs the epilogue's calls
	// at the point where the frame still allows them.
	spSetup    func(b *builder)
	spTeardown func(b *builder, epi func())
	// alloc moves SP by exact (negative grows the frame) or, when exact is
	// 0, grows the frame by a random amount that keeps calls legal; it
	// returns the adjustment so that alloc(b, -adj) undoes it.
	alloc func(b *builder, exact int64) int64
	// wiggle moves SP and back within the body once (x86-64 push/pop
	// pair), where the target has such an idiom; nil otherwise.
	wiggle func(b *builder)
	// saveRegs saves some callee-saved registers (and whatever a call then
	// needs), returns the registers it saved and an epilogue that restores
	// everything, running epi where calls are still legal.
	saveRegs func(b *builder) (regs []int, epilogue func(b *builder, epi func()))
	// setReg writes a random value to a register saveRegs saved.
	setReg func(b *builder, r int)
	// fpSaveOne sets up an FP frame that also saves one callee-saved
	// register, and returns it and two different epilogues restoring both.
	fpSaveOne func(b *builder) (reg int, epilogues [2]func(b *builder))
	// ret returns; tailJump leaves through a jump to fn. The skeletons
	// also use tailJump as the target's unconditional jump of the longest
	// reach, to a label or a cold part.
	ret      func(b *builder)
	tailJump func(b *builder, fn string)

	// pltStub emits stub number index of a PLT-like block: always the
	// same size on a target, moving SP (or saving the RA) and back, then
	// jumping to fn with the frame as the call left it; rows change
	// inside the stub and repeat from stub to stub (skeleton_plt.go).
	pltStub func(b *builder, index int, fn string)
	// pad emits at least n bytes of instructions that never execute: a
	// region a long function jumps over.
	pad func(b *builder, n int)
	// allocLarge grows an SP-based frame by at least min bytes, keeping
	// calls legal, and returns the adjustment as alloc does; nil where
	// another pattern covers large frames.
	allocLarge func(b *builder, min int64) int64
	// farCall calls fn through a scratch register loaded with fn's
	// absolute address: the call between code more than 4 GiB apart
	// (emitCall uses it when the caller or fn is far).
	farCall func(b *builder, fn string)
	// newStack sets SP to top, the empty end of a fresh stack, with one
	// instruction (after loading top into a scratch register where the
	// target needs to), records that the frame is the outermost one from
	// there on (becomeOutermost) and clears the frame pointer, as a
	// thread start or a clone child does.
	newStack func(b *builder, top uint64)
	// sigTrampoline emits the function a signal handler returns to: a
	// leading nop inside its FDE, then the rt_sigreturn call, with the
	// CFI the system's own trampoline has (skeleton_signal.go).
	sigTrampoline func(b *builder)
}

// pattern is one catalog entry: a way to build a function. A skeleton is
// written once over prims; a target's own pattern uses its instructions
// directly. Adding a pattern is one file and one line in a catalog.
type pattern struct {
	name          string
	doc           string
	calls         bool // may call other functions
	tail          bool // leaves through a tail call
	epilogueCalls bool // has a legal call position inside the epilogue
	earlyExit     bool // may return before its posBody calls
	entryExit     bool // may return before its prologue, so before any call: never on the depth chain
	exits         bool // some paths end with a call to a deeper function that never returns
	stubs         bool // a block of PLT-like stubs, each jumping to its own deeper function
	signal        bool // a signal handler: entered by a signal, never called
	// plain: the target's plainest pattern that calls, which the planner
	// falls back to where the chosen patterns cannot fill a slot and a
	// reduction builds a function with instead of its own (ReducePlain).
	plain bool
	// switchesStack: may switch SP to a fresh stack of its own
	// (Program.Stacks), one per level, so no deeper than maxAltStacks.
	switchesStack bool
	// emptyEntryFDE: a program with the pattern gives its entry stub an
	// FDE without rows (Func.EmptyFDE); emptyTrampolineFDE: it gives the
	// signal trampoline one (a signal pattern).
	emptyEntryFDE      bool
	emptyTrampolineFDE bool
	// noReturn: never returns (the callee of noreturn-call): no catalog
	// entry, the planner adds it; nothing but its caller calls it.
	noReturn bool
	// versions lists the SFrame versions that can express the pattern's
	// rows; nil means every version the encoder writes (2 and 3).
	versions []int
	// cannot says why the versions not listed cannot express it.
	cannot string
	// far: Layout places the pattern's functions in the far segment,
	// FarOffset above the rest; calls to and from them go through a
	// register.
	far bool
	// on says whether the skeleton exists on a target (nil: everywhere).
	on    func(t *isa) bool
	build func(b *builder, f *plan)
}

// needsDeeper says whether the pattern transfers to a deeper function
// other than by a call (a tail jump, stubs, a noreturn callee), so it
// cannot sit at the deepest level.
func (p *pattern) needsDeeper() bool { return p.tail || p.exits || p.stubs }

// expresses reports whether SFrame version v can express the pattern.
func (p *pattern) expresses(v int) bool {
	if p.versions == nil {
		return v == 2 || v == 3
	}
	for _, x := range p.versions {
		if x == v {
			return true
		}
	}
	return false
}

var isas = []*isa{amd64Target(), arm64Target(target.AArch64), arm64Target(target.AArch64BE), s390xTarget()}

func init() {
	for _, t := range isas {
		for _, p := range skeletons {
			if p.on == nil || p.on(t) {
				t.patterns = append(t.patterns, p)
			}
		}
		t.patterns = append(t.patterns, t.own...)
	}
}

// plainPattern is the target's plainest pattern that calls.
func (t *isa) plainPattern() *pattern {
	for _, p := range t.patterns {
		if p.plain {
			return p
		}
	}
	panic(fmt.Sprintf("gen: %s has no plain pattern", t.abi.Name()))
}

func isaFor(abi target.Target) *isa {
	for _, t := range isas {
		if t.abi == abi {
			return t
		}
	}
	return nil
}

// calls emits the plan's calls at position pos, each conditional one
// skipped by a branch on an argument bit.
func (b *builder) calls(pos callPos) {
	if b.plan == nil {
		return
	}
	for _, c := range b.plan.calls {
		if c.pos != pos {
			continue
		}
		if c.dropped {
			// Made for its random draws and label numbers only.
			b.discard(func() { b.emitCallSite(c) })
			continue
		}
		b.emitCallSite(c)
	}
}

// emitCallSite emits one call, after a test that skips it when it is
// conditional.
func (b *builder) emitCallSite(c callSite) {
	if c.cond {
		skip := b.newLabel()
		b.cond(skip)
		b.checkCall()
		b.emitCall(c.target)
		b.place(skip)
		return
	}
	b.checkCall()
	b.emitCall(c.target)
}

// body emits the plan's filler instructions and loop.
func (b *builder) body() { b.bodyWith(b.t.filler) }

// bodyWith is body with another filler. The fillers and the loop a
// reduction dropped (shrink.go) are made and discarded, so that the rest
// of the function comes out as it was.
func (b *builder) bodyWith(filler func(b *builder)) {
	if b.plan == nil {
		return
	}
	for i := 0; i < b.plan.fillers; i++ {
		if i >= b.plan.fillers-b.plan.dropFillers {
			b.discard(func() { filler(b) })
			continue
		}
		filler(b)
	}
	if b.plan.loop > 0 {
		if b.plan.dropLoop {
			b.discard(func() { b.t.loop(b, b.plan.loop) })
			return
		}
		b.t.loop(b, b.plan.loop)
	}
}

var errNoRA = errors.New("the return address is only in the link register")

func alignErr(spOff int64, align int64) error {
	if spOff%align != 0 {
		return fmt.Errorf("CFA-SP = %d is not a multiple of %d", spOff, align)
	}
	return nil
}
