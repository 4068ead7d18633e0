// Package consumer runs the unwinders under test behind one interface.
//
// A consumer is loaded with an Image's SFrame section once, then asked to
// unwind steps: a register file plus a view of memory. In-process
// consumers (builtin: the sframe package's own unwinder) take one step at
// a time and read the live emulated memory. Out-of-process consumers take
// a whole batch of steps at once; each step then carries a snapshot of the
// stack, so the emulator never waits on another process per instruction.
// BatchSize tells the driver which of the two a consumer wants.
//
// A consumer reports frames as oracle.Frame values and the error it
// stopped with. An error that wraps oracle.ErrNoInfo (or sframe.ErrNoFDE,
// sframe.ErrNoRow) is judged NOINFO; any other error is judged ERROR.
package consumer
