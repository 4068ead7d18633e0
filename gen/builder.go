package gen

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/sfconform/sfconform/sframe"
)

// op is one instruction before layout. A fixed instruction has its bytes
// and text; a branch (call, jump, conditional branch) is encoded by Layout
// once every address is known.
type op struct {
	text   string
	bytes  []byte
	br     *branch
	labels []string   // local labels defined at this instruction
	row    sframe.Row // rule that holds before the instruction executes
	exit   bool       // the entry stub's exit point
	call   bool       // a call instruction
	// pad > 0: padding a pattern jumps over, never executed: text's
	// instruction pad times over (bytes holds them all).
	pad int
	off uint32 // set by Layout
}

// branch is a PC-relative control transfer to a symbol or local label.
type branch struct {
	target string
	// text renders the instruction with the target's name.
	text string
	// relax: the instruction has a short and a long form (x86-64), chosen
	// by Layout as GNU as relaxes it: short unless the displacement does
	// not fit.
	relax bool
	short bool
	size  func(short bool) int
	// enc returns the bytes for the branch at pc to target.
	enc func(pc, target uint64, short bool) ([]byte, error)
	// textAt, when set, renders the instruction once the target's
	// address is known (an absolute address loaded into a register).
	textAt func(target uint64) string
}

func (o *op) size() int {
	if o.br != nil {
		return o.br.size(o.br.short)
	}
	return len(o.bytes)
}

// frame is the unwind state the builder tracks while it emits a function:
// where the CFA is, how far SP is below it, where the frame pointer
// points, and where the caller's RA and FP are.
type frame struct {
	cfaReg   int
	cfaOff   int64
	cfaDeref bool  // CFA = *(cfaReg + cfaOff), as after a DRAP prologue
	spOff    int64 // CFA - SP; while spLost, how far SP is below the SP spLose left
	// spLost: SP is no fixed distance from the CFA any more (realigned,
	// dynamically allocated); spAlign then says what the SP spLose left
	// is known to be a multiple of, for call legality.
	spLost  bool
	spAlign int64
	fpOff   int64 // CFA - FP, valid while the FP locates the frame
	ra, fp  sframe.Rule
	// mangled: the RA (wherever it is) carries a pointer authentication
	// code (AArch64, after paciasp/pacibsp until autiasp/autibsp).
	mangled   bool
	outermost bool
}

// builder emits one function's instructions, recording the frame state
// before each one. Pattern constructors drive it through the target's
// instruction helpers, which update the state from the instruction's
// semantics.
type builder struct {
	t      *isa
	name   string
	rng    *rand.Rand
	ops    []*op
	st     frame
	labels int
	next   []string // labels to attach to the next emitted op
	prog   *Program
	plan   *plan
	// Function-wide: the key that signs the RA (AArch64) and whether the
	// function is a signal trampoline. Set by the pattern before its first
	// instruction.
	key    sframe.PAuthKey
	signal bool

	// Further functions the plan's pattern makes (PLT stubs, a cold
	// part): Generate places them after this one, or after every function
	// when atEnd.
	parts  []*builder
	partOf string // this builder's function is a part of that one
	block  string // this builder's function is a stub of that PCMASK block
	atEnd  bool
}

func newBuilder(t *isa, name string, rng *rand.Rand, p *Program) *builder {
	b := &builder{t: t, name: name, rng: rng, prog: p}
	b.st = frame{
		cfaReg: t.sp, cfaOff: t.entrySPOff, spOff: t.entrySPOff,
		ra: t.entryRA, fp: sframe.Rule{Kind: sframe.RuleSame},
	}
	return b
}

func (b *builder) row() sframe.Row {
	if b.st.outermost {
		return sframe.Row{
			CFA: sframe.Rule{Kind: sframe.RuleUndefined},
			RA:  sframe.Rule{Kind: sframe.RuleUndefined},
			FP:  sframe.Rule{Kind: sframe.RuleSame},
		}
	}
	return sframe.Row{
		CFA:       sframe.Rule{Kind: sframe.RuleExpr, Reg: b.st.cfaReg, Offset: b.st.cfaOff, Deref: b.st.cfaDeref},
		RA:        b.st.ra,
		FP:        b.st.fp,
		MangledRA: b.st.mangled,
		PAuthKey:  b.key,
		Signal:    b.signal,
	}
}

// insn emits a fixed instruction.
func (b *builder) insn(bytes []byte, format string, args ...any) *op {
	return b.add(&op{bytes: bytes, text: fmt.Sprintf(format, args...)})
}

// jump emits a branch.
func (b *builder) jump(br *branch) *op {
	return b.add(&op{br: br, text: br.text})
}

func (b *builder) add(o *op) *op {
	o.row = b.row()
	o.labels, b.next = b.next, nil
	b.ops = append(b.ops, o)
	return o
}

// emitCall emits the target's call to fn and marks it as a call. A call
// into or out of a far function goes through a register.
func (b *builder) emitCall(fn string) {
	if b.prog != nil && (b.prog.far[fn] || b.prog.far[b.name]) {
		b.t.prims.farCall(b, fn)
	} else {
		b.t.call(b, fn)
	}
	b.ops[len(b.ops)-1].call = true
}

// part starts another function of the plan (a PLT stub, a cold part):
// its own name, instructions and labels, the same seeded choices and plan,
// the entry state until the pattern sets st.
func (b *builder) part(name string) *builder {
	q := newBuilder(b.t, name, b.rng, b.prog)
	q.plan = b.plan
	b.parts = append(b.parts, q)
	return q
}

// size is the bytes emitted so far, relaxable branches counted short: a
// lower bound on the offset of the next instruction.
func (b *builder) size() int {
	n := 0
	for _, o := range b.ops {
		if o.br != nil {
			n += o.br.size(o.br.relax)
			continue
		}
		n += len(o.bytes)
	}
	return n
}

// padding emits count copies of one instruction as a single op, marked
// never executed: regions a pattern jumps over cost one op however long.
func (b *builder) padding(unit []byte, count int, format string, args ...any) {
	if count <= 0 {
		return
	}
	o := b.insn(bytes.Repeat(unit, count), format, args...)
	o.pad = count
}

// discard runs emit and drops what it emitted, keeping its draws on the
// random generator and the label numbers it took: a function with a call,
// a filler or a loop dropped (shrink.go) is then the same function without
// those instructions. Labels waiting for the next instruction still wait.
func (b *builder) discard(emit func()) {
	n, next, st := len(b.ops), b.next, b.st
	emit()
	b.ops, b.next, b.st = b.ops[:n], next, st
}

// newLabel returns a fresh local label name.
func (b *builder) newLabel() string {
	b.labels++
	return fmt.Sprintf(".L%s_%d", b.name, b.labels)
}

// place defines label at the next emitted instruction.
func (b *builder) place(label string) { b.next = append(b.next, label) }

// sp records SP += delta.
func (b *builder) sp(delta int64) {
	b.st.spOff -= delta
	if b.st.cfaReg == b.t.sp && !b.st.cfaDeref {
		if b.st.spLost {
			panic(fmt.Sprintf("gen: %s: CFA based on an SP of unknown distance", b.name))
		}
		b.st.cfaOff = b.st.spOff
	}
}

// cfaAt records CFA = reg + off (reg any register: DRAP's %r10, ...).
func (b *builder) cfaAt(reg int, off int64) {
	b.st.cfaReg, b.st.cfaOff, b.st.cfaDeref = reg, off, false
}

// cfaLoadedFrom records CFA = *(reg + off).
func (b *builder) cfaLoadedFrom(reg int, off int64) {
	b.st.cfaReg, b.st.cfaOff, b.st.cfaDeref = reg, off, true
}

// spLose records that SP is no longer a known distance from the CFA (an
// and with an alignment mask, a dynamic allocation); align is what SP is
// known to be a multiple of afterwards. The CFA must not be SP-based.
// Pushes and allocations after it keep counting in spOff, from 0 at this
// SP, so that the alignment at a later call is still known.
func (b *builder) spLose(align int64) {
	if b.st.cfaReg == b.t.sp && !b.st.cfaDeref {
		panic(fmt.Sprintf("gen: %s: SP lost while the CFA is based on it", b.name))
	}
	b.st.spLost, b.st.spAlign, b.st.spOff = true, align, 0
}

// spFound records SP = CFA - spOff again (restored from a register).
func (b *builder) spFound(spOff int64) {
	b.st.spLost, b.st.spOff = false, spOff
}

// raIn and fpIn record the caller's RA or FP held in register reg.
func (b *builder) raIn(reg int) {
	b.st.ra = sframe.Rule{Kind: sframe.RuleExpr, Reg: reg}
}
func (b *builder) fpIn(reg int) {
	b.st.fp = sframe.Rule{Kind: sframe.RuleExpr, Reg: reg}
}

// signRA records that the RA is now signed (paciasp) or authenticated
// again (autiasp).
func (b *builder) signRA(signed bool) { b.st.mangled = signed }

// fpFromSP records FP = SP + add and makes FP the CFA base.
func (b *builder) fpFromSP(add int64) {
	b.st.fpOff = b.st.spOff - add
	b.st.cfaReg, b.st.cfaOff = b.t.fp, b.st.fpOff
}

// spFromFP records SP = FP + add and makes SP the CFA base again.
func (b *builder) spFromFP(add int64) {
	if b.st.cfaReg != b.t.fp {
		panic(fmt.Sprintf("gen: %s: SP restored from FP without a frame pointer", b.name))
	}
	b.st.spOff, b.st.spLost = b.st.fpOff-add, false
	b.st.cfaReg, b.st.cfaOff = b.t.sp, b.st.spOff
}

// spReload records SP reloaded with its value at entry (s390x lmg of %r15).
func (b *builder) spReload() {
	b.st.spOff = b.t.entrySPOff
	b.st.cfaReg, b.st.cfaOff = b.t.sp, b.st.spOff
}

func savedAt(off int64) sframe.Rule {
	return sframe.Rule{Kind: sframe.RuleExpr, Reg: sframe.RegCFA, Offset: off, Deref: true}
}

// saveRA and saveFP record the caller's RA or FP stored at SP + spOffset.
func (b *builder) saveRA(spOffset int64) { b.st.ra = savedAt(spOffset - b.st.spOff) }
func (b *builder) saveFP(spOffset int64) { b.st.fp = savedAt(spOffset - b.st.spOff) }

// restoreRA and restoreFP record the caller's value back in its register.
func (b *builder) restoreRA() { b.st.ra = b.t.entryRA }

// Once the FP register holds the caller's value again it no longer
// locates this frame, so a CFA based on it moves to SP.
func (b *builder) restoreFP() {
	b.st.fp = sframe.Rule{Kind: sframe.RuleSame}
	if b.st.cfaReg == b.t.fp {
		b.st.cfaReg, b.st.cfaOff = b.t.sp, b.st.spOff
	}
}

// becomeOutermost records that SP has just moved to a fresh stack: the
// frame is the outermost one from the next instruction on (its rows mark
// the RA undefined) and stays so. spOff is SP's distance below a virtual
// CFA that keeps the target's call rules (alignment, s390x save area)
// meaningful on the new stack.
func (b *builder) becomeOutermost(spOff int64) {
	b.st.outermost = true
	b.st.cfaReg, b.st.cfaOff, b.st.cfaDeref = b.t.sp, spOff, false
	b.st.spOff, b.st.spLost = spOff, false
}

// checkCall panics unless a call is legal here: the RA of this frame is
// safe from the call and the stack meets the target's ABI.
func (b *builder) checkCall() {
	if err := b.t.callOK(&b.st); err != nil {
		panic(fmt.Sprintf("gen: %s: call at instruction %d: %v", b.name, len(b.ops), err))
	}
}

// cond emits a test of a random bit of a random argument register and a
// branch to label taken when the bit has the value taken.
func (b *builder) cond(label string) {
	i := b.rng.IntN(len(b.t.argRegs))
	b.t.testBranch(b, i, b.rng.IntN(b.t.testBits), b.rng.IntN(2) == 0, label)
}
