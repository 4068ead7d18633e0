// Package consumer runs the unwinders under test behind one interface and a
// registry of names.
//
// A consumer declares which targets and SFrame versions it reads
// (Supports), is loaded with an Image's SFrame section once (or, for a
// process image of several modules, every module's section: a PC is
// looked up in the section of the module holding it), then asked to
// unwind steps: a register file plus a view of memory. In-process
// consumers (builtin: the sframe package's own unwinder) take one step at
// a time and read the live emulated memory. Out-of-process consumers take
// a whole batch of steps at once; each step then carries a
// machine.Snapshot of the registers and the live stack, serialisable as it
// is, so the emulator never waits on another process per instruction and
// the consumer needs nothing private. BatchSize tells the driver which of
// the two a consumer wants.
//
// A consumer reports frame.Frame values and the error it stopped with. A
// frame it reached but could not unwind is its last, marked Partial. An
// error that wraps frame.ErrNoInfo is judged NOINFO (when every frame
// before it is right); any other error is judged ERROR. The builtin
// consumer maps sframe.ErrNoFDE and sframe.ErrNoRow to frame.ErrNoInfo, so
// the oracle knows nothing of the sframe package. Consumers never import
// the oracle.
//
// The dumper consumers (dumper.go) are a family: one per provisioned
// SFrame dumper, objdump-<series> and readelf-<series> for each binutils
// release series and llvm-readobj-<major>, found when a name is looked up
// (RegisterFamily). Each runs its dumper once per image and unwinds with
// the sframe package's unwinder over the rows the dumper printed, so that
// a dumper's misreading of a section is a consumer failure.
//
// Out-of-process consumers speak the unwind protocol
// (docs/consumer-protocol.md): exec:COMMAND runs any program that does
// (exec.go); Serve is the protocol's consumer side around an in-process
// consumer, the reference implementation (sfconform serve).
//
// An exec consumer cannot hang the harness: every protocol violation
// fails its batch within the timeout, with a kill and a restart, and a
// consumer that keeps failing is given up on (ErrGaveUp). The chaos tests
// prove it with internal/chaosconsumer, which breaks the protocol on
// purpose.
//
// Each consumer describes itself in its registry entry (About, about.go):
// the ci/setup.sh step that provides it, the library it wraps, the names
// with an argument a campaign runs too, the patterns it cannot be judged
// on by design; and its exact version through ExactVersion (Version).
// Other packages ask the registry (Lookup, Runnable, SetupProvided,
// PatternLimit) rather than switch on a consumer's name. Adding a
// consumer is one file that calls Register from init, its C folder and
// its setup step (docs/extending.md).
package consumer
