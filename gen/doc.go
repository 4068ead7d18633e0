// Package gen generates seeded synthetic programs for SFrame conformance
// runs: an entry stub and a call graph of functions built from a catalog of
// per-target prologue/epilogue patterns, with the unwind rule (CFA, RA, FP)
// that holds at every instruction.
//
// Rules follow the SFrame format
// (https://sourceware.org/binutils/docs/sframe-spec.html): the CFA is SP or
// FP plus an offset; the caller's RA and FP are either still in their
// register (sframe.RuleSame) or saved at CFA+offset. The CFA is the SP
// before the call on x86-64 (SP+8 at entry), SP at entry on AArch64 and SP
// at entry + 160 on s390x. The builder derives each row from the
// instructions it emits (a push moves an SP-based CFA, mov %rsp,%rbp makes
// the CFA FP-based, restoring the FP register makes it SP-based again).
//
// # Programs
//
// Funcs[0] is the entry stub: it aligns the stack, loads a distinctive
// frame pointer, calls the root and ends with an exit instruction (hlt,
// brk #0, svc 0) at Program.Exit, which a run stops at. Its rows are
// outermost (with an empty-fde function in the program, its FDE has no
// rows at all, SFrame v3's other way to say so). The root starts a chain of unconditional calls MaxDepth long;
// the other functions hang off it at random levels; calls only go to deeper
// levels, so there is no recursion. Every function returns, or leaves
// through a tail jump, except the callee of a noreturn-call, which ends
// the run with a jump to the exit (on the paths that reach it, after the
// depth chain has run). Calls sit
// right after the prologue, in the body, or inside the epilogue where the
// frame allows it, some skipped by a test of a bit of an argument
// register, so the seeded Args choose the path. Runs execute roughly
// 100-2000 instructions.
//
// Functions of far patterns are laid out FarOffset (5 GiB) above the rest,
// in a segment of their own (Program.FarCode, Segments); calls into and out
// of them load the absolute address into a register. A new-stack function
// may switch SP to a fresh stack of its own (Program.Stacks: symbols of
// kind stack inside the emulator's stack region, below AltStackTop), be
// the outermost frame from there on, and end the run with a jump to Exit.
//
// # Patterns
//
// A pattern is a way to build a function. Skeletons (skeletons.go: leaf,
// fp-frame, sp-frame, callee-saved, multi-epilogue, tail-call; one
// skeleton_<concept>.go each for noreturn-call and shrink-wrap, plt-stubs,
// hot-cold, long-function, far-code, new-stack, empty-fde, signal and
// signal-empty-fde) are written once over each target's prims: frame setup
// and teardown, allocation, register saves, return and tail jump, PLT
// stubs and padding, a call through a register, a switch to a fresh stack,
// a signal trampoline, each emitted in the target's own idiom. A target's
// own patterns use its instructions directly. Every file of one target
// starts with its name (amd64, arm64, s390x):
//
//	<target>.go          registers, encoders, the isa and its basic prims
//	<target>_prims.go    the prims of PLT stubs, padding, far calls, new stacks
//	<target>_signal.go   the signal trampoline
//	<target>_frames.go   the target's own patterns (arm64_pac.go, s390x_fpr.go too)
//
// A pattern's properties the planner, the reducer and the reports act on
// are fields of its catalog entry (pattern; PatternInfo for listings),
// never tests of its name.
//
// A pattern may make more than one function: a block of PLT stubs (one
// symbol each, one PCMASK FDE for the block: Func.StubBlock), a cold part
// placed after every function (its own symbol and FDE, marked
// Func.PartOf), and the planner adds a noreturn-call's callee. Regions a
// function jumps over are one Insn of padding (Insn.Pad). Each pattern declares the SFrame
// versions that can express its rows; Options.SFrameVersion keeps the
// default mix to those, and naming one that the version cannot express is a
// *CannotExpressError. Catalog lists them all (sfconform patterns). Adding
// a pattern is one file and one catalog line.
//
// # Renderings
//
// Layout encodes the program with gen's own encoders; Assembly renders it
// as GNU as source with .cfi_* directives derived from the rows. The tests
// check the encoders byte for byte against GNU as, the text against the
// golang.org/x/arch disassemblers, the .cfi_* rendering against the SFrame
// sections GNU as 2.40, 2.44 and 2.47 build from it, and the rows against
// an interpreter that executes the programs.
//
// Generation is deterministic: math/rand/v2's PCG seeded from the seed and
// the ABI, and no map iteration on any path that shapes the output.
//
// # Security
//
// Generate trusts its options only as far as sizes go: unknown pattern
// names are errors; huge Funcs values cost time and memory in proportion.
package gen
