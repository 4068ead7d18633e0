package sframe

import (
	"fmt"
)

// Default limits of an Unwinder whose fields are left zero.
const (
	DefaultMaxFrames = 64
	DefaultVABits    = 48
)

// s390xCFAAboveSP is what the s390x ABI subtracts from the CFA to get the
// caller's stack pointer: the CFA lies above the 160-byte register save
// area the caller allocated for its callee.
const s390xCFAAboveSP = 160

// Frame is one frame of a backtrace.
type Frame struct {
	// PC is the program counter: for frame 0 the interrupted PC, for deeper
	// frames the return address into the function (with any AArch64
	// pointer authentication code stripped).
	PC uint64
	// SP and FP are this frame's stack and frame pointer values: for frame
	// 0 read from the registers, for deeper frames recovered by the frame
	// below.
	SP, FP uint64
	// CFA is this frame's canonical frame address computed from its row;
	// 0 when the frame is outermost (its return address is undefined) or
	// the CFA could not be computed.
	CFA uint64
	// FDE and Row are the function and row covering PC (for deeper frames
	// looked up at PC-1, see Unwinder). FDE is the zero Func (Size 0) when
	// none was found; both are zero when the Unwinder has Rows.
	FDE Func
	Row Row
	// Outermost is set on the last frame of a complete backtrace: its row
	// marks the return address as undefined.
	Outermost bool
	// Signal is set when the frame's function is a signal trampoline (its
	// FDE has the signal flag): its caller is the context the signal
	// interrupted, read from the signal frame at SP (SignalContext), not
	// from its row, and CFA is the address of the saved registers.
	Signal bool
	// Interrupted is set on the frame that follows a signal frame: PC is
	// where the signal interrupted it, looked up as is, and its registers
	// are all known (read from the signal frame), so the rules that need
	// the registers of the topmost frame apply to it too.
	Interrupted bool
}

// exact reports whether the frame at depth index has its PC and register
// file exactly: the topmost frame and an interrupted one.
func (f *Frame) exact(index int) bool { return index == 0 || f.Interrupted }

// Unwinder walks a stack with the rows of one Table.
//
// The rules follow the SFrame v3 specification (appendix "Generating Stack
// Traces using SFrame") and the Linux user-space SFrame unwinder:
//
//   - Frame 0 takes PC, SP and FP from the register file (the ABI's DWARF
//     SP and FP numbers). Registers absent from the file read as zero,
//     except SP, which must be present.
//   - CFA = base + offset, base being the frame's SP or FP; any other base
//     register is read from the register file, which describes the
//     topmost frame only, so such rules fail with ErrBadRule deeper down.
//     A CFA rule with Deref loads the CFA from that address.
//   - The caller's SP is the CFA (s390x: CFA - 160). It must lie strictly
//     above this frame's SP, or the walk could loop or run downwards; the
//     topmost frame may leave it equal, because a leaf that allocated no
//     stack (an AArch64 leaf keeps its return address in x30) has
//     CFA == SP. Otherwise ErrCFANotAbove.
//   - RA and FP rules: an expression based on the CFA, SP or FP applies in
//     every frame; one based on any other register (s390x saves them in
//     GPRs or in the FPRs, DWARF 16-31) and RuleSame for the RA ("still in
//     the link register": AArch64 x30, s390x r14) apply in the topmost
//     frame only, because the register file holds the registers of the
//     topmost frame and callees clobber them. RuleSame for the FP keeps the
//     FP. A row whose RA is RuleUndefined ends the walk: that frame is
//     Outermost and Backtrace returns a nil error.
//   - A row with MangledRA signs the RA with a pointer authentication code:
//     bits VABits and above (including the top byte) are cleared. This is
//     the user-space rule (bit 55 clear); kernel addresses are not handled.
//   - For every frame but the topmost the row is looked up at PC-1: the
//     return address points after the call, and when a call is the last
//     instruction of a function (a call to a noreturn function) that is
//     the first byte of the next function, or past the end of the FDE.
//     PC-1 is inside the call instruction, in the caller's function, under
//     the row that held when the call was made. The topmost PC is the
//     instruction about to execute and is looked up as is.
//   - A signal trampoline (FDE signal flag: version 3) is unwound from the
//     signal frame the kernel left at its SP, not from its row: the next
//     frame is the interrupted context, with every register the kernel
//     saved (SignalContext). That frame is Interrupted: its PC is looked up
//     as is, and the rules valid in the topmost frame only (an RA still in
//     the link register, a rule based on another register) apply to it
//     with the saved registers: a signal can strike anywhere, a leaf's
//     prologue included. The trampoline's own row is only found: as any
//     caller's, at its return address - 1, which the trampoline's leading
//     nop keeps inside its FDE. The signal flag is looked at before
//     anything else, as the Linux unwinder does: a version 3 signal FDE
//     without FREs (GNU as 2.47 writes one for a trampoline whose CFI it
//     cannot express) is a trampoline, not an outermost frame.
//
// An Unwinder is safe for concurrent use unless Rows is set; Backtrace
// allocates nothing when dst has room for the frames (and, with Rows, once
// the cache has seen the frames' PCs).
type Unwinder struct {
	Table *Table
	// Modules, when set, replace Table: a process of several loaded
	// objects, each PC looked up in the table of the module holding it
	// (a PC in none has no FDE). Their tables share one ABI.
	Modules Modules
	// Rows, when set, looks the rows up instead of Table: a cache of the
	// same table's lookups (see RowCache), which makes the Unwinder unsafe
	// for concurrent use. The frames then leave FDE and Row zero (the
	// rules are applied from the cache, not copied into every frame);
	// Rows.FindRow gives them for a frame's lookup PC.
	Rows *RowCache
	// MaxFrames bounds a backtrace; 0 means DefaultMaxFrames.
	MaxFrames int
	// VABits is the virtual address width used to strip pointer
	// authentication codes; 0 means DefaultVABits.
	VABits int
}

// UnwindError reports why a frame could not be unwound. It wraps one of
// ErrNoFDE, ErrNoRow, ErrUnreadable, ErrCFANotAbove or ErrBadRule (test
// with errors.Is), or the *FormatError of a malformed FRE met while looking
// up the frame's row.
type UnwindError struct {
	Frame int    // index of the frame being unwound (0 = topmost)
	PC    uint64 // that frame's PC
	Msg   string // what failed
	Err   error
}

func (e *UnwindError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("frame %d at pc %#x: %v", e.Frame, e.PC, e.Err)
	}
	return fmt.Sprintf("frame %d at pc %#x: %v: %s", e.Frame, e.PC, e.Err, e.Msg)
}

func (e *UnwindError) Unwrap() error { return e.Err }

func unwindErr(f *Frame, index int, err error, format string, args ...any) error {
	return &UnwindError{Frame: index, PC: f.PC, Msg: fmt.Sprintf(format, args...), Err: err}
}

// Backtrace unwinds from regs and appends the frames to dst[:0], topmost
// first. It stops at an outermost frame (nil error, Outermost set on the
// last frame) or after MaxFrames frames (nil error, Outermost unset).
//
// On error the returned frames are every frame whose PC, SP and FP were
// recovered: when the failing frame's own row could not be found
// (ErrNoFDE, ErrNoRow) or applied, it is included as the last frame, with
// FDE nil or CFA 0 as far as the unwind got; a caller frame that failed a
// check (ErrCFANotAbove) is not. The error is an *UnwindError.
func (u *Unwinder) Backtrace(regs *RegisterFile, mem Memory, dst []Frame) ([]Frame, error) {
	dst = dst[:0]
	maxFrames := u.MaxFrames
	if maxFrames <= 0 {
		maxFrames = DefaultMaxFrames
	}
	abi := u.abi()
	sp, ok := regs.Get(abi.SPRegister())
	if !ok {
		return dst, unwindErr(&Frame{PC: regs.PC}, 0, ErrBadRule, "the register file has no stack pointer (DWARF %d)", abi.SPRegister())
	}
	fp, _ := regs.Get(abi.FPRegister())
	dst = appendFrame(dst, regs.PC, sp, fp, false)
	// cur is the register file of the frame being unwound when it is
	// exact: the caller's for frame 0, a signal frame's context after one.
	var ctx RegisterFile
	cur := regs
	for i := 0; ; i++ {
		// The frame stays in dst even when Step fails: its PC, SP and FP
		// are known; a caller that failed a check is never appended.
		pc, sp, fp, err := u.step(&dst[i], i, cur, mem, &ctx)
		if err != nil || dst[i].Outermost || i+1 >= maxFrames {
			return dst, err
		}
		dst = appendFrame(dst, pc, sp, fp, dst[i].Signal)
		if dst[i].Signal {
			cur = &ctx
		}
	}
}

// appendFrame appends a frame with the given PC, SP, FP and Interrupted,
// writing them into the new slot: a Frame literal is built on the stack
// in 8-byte stores and copied with 16-byte loads, which stall on store
// forwarding (the hottest instructions of Backtrace in perf annotate).
func appendFrame(dst []Frame, pc, sp, fp uint64, interrupted bool) []Frame {
	dst = append(dst, Frame{})
	f := &dst[len(dst)-1]
	f.PC, f.SP, f.FP, f.Interrupted = pc, sp, fp, interrupted
	return dst
}

// Step unwinds one frame. On entry f.PC, f.SP, f.FP and f.Interrupted
// are set, index is the frame's depth (0 = topmost) and regs holds the
// frame's registers if it is the topmost or an interrupted one (for the
// latter, what SignalContext read from the signal frame before it). Step
// fills f.FDE and f.Row (unless u.Rows is set), f.CFA, f.Outermost and
// f.Signal and, unless f is
// outermost, returns the caller's PC, SP and FP; after a signal frame
// the caller is the interrupted context (see SignalContext). Errors are
// *UnwindError.
func (u *Unwinder) Step(f *Frame, index int, regs *RegisterFile, mem Memory) (pc, sp, fp uint64, err error) {
	var ctx RegisterFile
	return u.step(f, index, regs, mem, &ctx)
}

// step is Step that reads a signal frame's context into ctx.
func (u *Unwinder) step(f *Frame, index int, regs *RegisterFile, mem Memory, ctx *RegisterFile) (pc, sp, fp uint64, err error) {
	lookup := f.PC
	if !f.exact(index) {
		// See the type documentation: a return address may lie past the
		// end of the calling function.
		lookup--
	}
	if u.Rows != nil {
		// 240 bytes of Func and Row per frame, copied at every step,
		// were a fifth of the cached unwinder's time.
		e, err := u.Rows.entry(lookup)
		if err == nil {
			err = e.err
		}
		if err != nil {
			return 0, 0, 0, &UnwindError{Frame: index, PC: f.PC, Msg: fmt.Sprintf("looking up %#x", lookup), Err: err}
		}
		if e.r.Signal {
			return u.signalStep(f, index, mem, ctx)
		}
		return u.applyRow(f, &e.r, index, regs, mem)
	}
	if err := u.findRow(lookup, &f.FDE, &f.Row); err != nil {
		return 0, 0, 0, &UnwindError{Frame: index, PC: f.PC, Msg: fmt.Sprintf("looking up %#x", lookup), Err: err}
	}
	if f.Row.Signal {
		return u.signalStep(f, index, mem, ctx)
	}
	return u.applyRow(f, &f.Row, index, regs, mem)
}

// signalStep unwinds a signal trampoline's frame f: its caller is the
// interrupted context of the signal frame at f.SP, which it reads into
// ctx.
func (u *Unwinder) signalStep(f *Frame, index int, mem Memory, ctx *RegisterFile) (pc, sp, fp uint64, err error) {
	f.Signal = true
	if err := u.SignalContext(f, index, mem, ctx); err != nil {
		return 0, 0, 0, err
	}
	abi := u.abi()
	f.CFA = f.SP + sigContexts[abi].mcontext
	return ctx.PC, ctx.Regs[abi.SPRegister()], ctx.Regs[abi.FPRegister()], nil
}

// applyRow unwinds frame f by its row (see Step).
func (u *Unwinder) applyRow(f *Frame, row *Row, index int, regs *RegisterFile, mem Memory) (pc, sp, fp uint64, err error) {
	top := f.exact(index)
	if row.RA.Kind == RuleUndefined {
		f.Outermost = true
		return 0, 0, 0, nil
	}

	abi := u.abi()
	// CFA.
	c := row.CFA
	if c.Kind != RuleExpr || c.Reg == RegCFA {
		return 0, 0, 0, unwindErr(f, index, ErrBadRule, "CFA rule %s has no base register", c)
	}
	base, err := u.regValue(f, index, regs, c.Reg, "CFA")
	if err != nil {
		return 0, 0, 0, err
	}
	cfa := base + uint64(c.Offset)
	if c.Deref {
		v, ok := mem.ReadWord(cfa)
		if !ok {
			return 0, 0, 0, unwindErr(f, index, ErrUnreadable, "loading the CFA from %#x", cfa)
		}
		cfa = v
	}
	f.CFA = cfa

	// Caller's SP.
	callerSP := cfa
	if abi == ABIS390XBE {
		callerSP = cfa - s390xCFAAboveSP
	}
	if callerSP < f.SP || (callerSP == f.SP && !top) {
		return 0, 0, 0, unwindErr(f, index, ErrCFANotAbove, "caller SP %#x (CFA %#x) not above SP %#x", callerSP, cfa, f.SP)
	}

	// Return address.
	var ra uint64
	switch row.RA.Kind {
	case RuleSame:
		lr := linkRegister(abi)
		if lr < 0 {
			return 0, 0, 0, unwindErr(f, index, ErrBadRule, "%s has no link register to hold the return address", abi)
		}
		if !top {
			return 0, 0, 0, unwindErr(f, index, ErrBadRule, "return address in the link register (DWARF %d) is known in the topmost frame only (or one a signal interrupted)", lr)
		}
		v, ok := regs.Get(lr)
		if !ok {
			return 0, 0, 0, unwindErr(f, index, ErrBadRule, "the register file has no link register (DWARF %d)", lr)
		}
		ra = v
	case RuleExpr:
		ra, err = u.apply(f, index, regs, mem, row.RA, cfa, "RA")
		if err != nil {
			return 0, 0, 0, err
		}
	default:
		return 0, 0, 0, unwindErr(f, index, ErrBadRule, "RA rule kind %d", row.RA.Kind)
	}
	if row.MangledRA {
		ra = u.stripPAC(ra)
	}

	// Frame pointer.
	callerFP := f.FP
	if row.FP.Kind == RuleExpr {
		callerFP, err = u.apply(f, index, regs, mem, row.FP, cfa, "FP")
		if err != nil {
			return 0, 0, 0, err
		}
	}
	return ra, callerSP, callerFP, nil
}

// apply evaluates an RA or FP expression rule.
func (u *Unwinder) apply(f *Frame, index int, regs *RegisterFile, mem Memory, r Rule, cfa uint64, what string) (uint64, error) {
	var base uint64
	if r.Reg == RegCFA {
		base = cfa
	} else {
		var err error
		base, err = u.regValue(f, index, regs, r.Reg, what)
		if err != nil {
			return 0, err
		}
	}
	addr := base + uint64(r.Offset)
	if !r.Deref {
		return addr, nil
	}
	v, ok := mem.ReadWord(addr)
	if !ok {
		return 0, unwindErr(f, index, ErrUnreadable, "loading the %s from %#x", what, addr)
	}
	return v, nil
}

// regValue is the value of DWARF register reg in frame f: SP and FP are
// known in every frame, any other register in the topmost frame only.
func (u *Unwinder) regValue(f *Frame, index int, regs *RegisterFile, reg int, what string) (uint64, error) {
	abi := u.abi()
	switch reg {
	case abi.SPRegister():
		return f.SP, nil
	case abi.FPRegister():
		return f.FP, nil
	}
	if !f.exact(index) {
		return 0, unwindErr(f, index, ErrBadRule, "%s rule based on register %d is usable in the topmost frame only", what, reg)
	}
	v, ok := regs.Get(reg)
	if !ok {
		return 0, unwindErr(f, index, ErrBadRule, "%s rule needs register %d, absent from the register file", what, reg)
	}
	return v, nil
}

func (u *Unwinder) stripPAC(ra uint64) uint64 {
	bits := u.VABits
	if bits <= 0 {
		bits = DefaultVABits
	}
	if bits >= 64 {
		return ra
	}
	return ra & (1<<uint(bits) - 1)
}

// linkRegister is the DWARF number of the register a call leaves the
// return address in, or -1 when calls push it (x86-64).
func linkRegister(a ABI) int {
	switch a {
	case ABIAArch64LE, ABIAArch64BE:
		return RegAArch64LR
	case ABIS390XBE:
		return RegS390XRA
	}
	return -1
}
