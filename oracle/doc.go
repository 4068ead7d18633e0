// Package oracle is the truth a consumer's unwind is judged against, and
// the judging.
//
// The Tracker watches the emulated machine one instruction at a time and
// keeps the stack of active calls. It reads nothing but the machine (its
// registers and memory) and the image's function symbols: never the
// generator's rows and never the SFrame section, so a wrong row anywhere
// upstream shows up as a difference here.
//
// A frame is recorded when the PC reaches a symbol's first byte. What
// holds at that moment is fixed by each ABI's calling convention:
//
//	x86-64:  CFA = SP+8,   RA = [SP], caller SP = SP+8, caller FP = rbp
//	AArch64: CFA = SP,     RA = x30,  caller SP = SP,   caller FP = x29
//	s390x:   CFA = SP+160, RA = r14,  caller SP = SP,   caller FP = r11
//
// An entry whose CFA equals the current top frame's CFA is a tail call: the
// caller has torn its frame down and jumped, so the new function replaces
// it. The start of a symbol that is part of another function
// (image.Symbol.PartOf: a cold part) is no entry at all: the owner's frame
// stays on top, and a return from the part pops it. A frame is popped when the PC reaches its return address with the SP
// back at the caller's SP. The entry stub that starts a run is the
// outermost frame: it has no CFA and nothing above it.
//
// A frame also becomes the outermost one in the middle of its life: when
// SP moves into a stack the image declares (a symbol of kind stack) and
// that stack holds none of the active frames' CFAs, the function running
// has switched to a fresh stack, as a thread start or a clone child does.
// The frames below it are dropped; calls it makes from there have their
// CFAs on the new stack. The machine and the symbols say all of this: the
// rows that mark the RA undefined there are what is judged.
// # Signals
//
// A symbol of kind image.KindSignalHandler is entered by the kernel, not
// by a call: at its first byte the oracle reads the signal frame the
// kernel left at SP (package sigframe's layouts) and takes from it the
// interrupted PC, SP, FP and link register. The interrupted instruction
// has not been observed yet (it runs after the handler), so it is observed
// first with those registers: a return it completes pops its callee, a
// function entry it is pushes that function. Then come a frame for the
// signal trampoline, marked frame.Frame.Signal, whose caller is the
// interrupted context (its return address is the interrupted PC, exact),
// and the handler's frame by the ordinary entry convention, its return
// address the restorer, which must lie in a symbol of kind
// image.KindSignalRestorer. The handler's frame pops at the restorer; the
// trampoline's when rt_sigreturn brings the interrupted PC and SP back. A
// restorer's start is never taken for a function entry. The trampoline's
// CFA means nothing: the signal frame's address stands in for it, and
// Compare does not compare it.
//
// Compare judges one consumer backtrace against the expected one. The
// frames the consumer returned come first: a value that differs is WRONG.
// Only when all of them are right does the error it stopped with decide:
// NOINFO when it wraps frame.ErrNoInfo (no FDE or row for the PC of the
// frame it stopped at), ERROR otherwise.
//
// The oracle imports only the leaf vocabulary (target, machine, image,
// frame, verdict); the architecture package's test holds it to that.
package oracle
