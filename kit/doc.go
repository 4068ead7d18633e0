// Package kit is the conformance kit for authors of SFrame unwinders: a
// second reference consumer, kit/python/sframe_unwinder.py, written in
// Python 3 (standard library only) from docs/consumer-protocol.md and the
// SFrame format specification (versions 2 and 3, "The SFrame Format",
// sections 2 "SFrame Section" and 3 "Interpretation of SFrame FREs"), not
// from sfconform's Go unwinder.
//
// Its test builds the sfconform binary and runs it with
// --consumer 'exec:python3 kit/python/sframe_unwinder.py' on every target
// (x86-64, AArch64 little- and big-endian, s390x) and both SFrame versions
// the builtin producers write: every executed instruction must be judged
// OK. So the protocol document, the harness and an unwinder that knows
// only the document cannot drift apart unnoticed. A second test breaks a
// copy of the unwinder and expects the run to fail: the check can fail.
//
// The package has no Go code besides its tests, and they import nothing of
// the project but internal/testenv (architecture enforces it): the Python
// unwinder is judged through the command line, as any outside unwinder is.
// kit/README.md says how to run it and lists what the document had to
// gain.
package kit
