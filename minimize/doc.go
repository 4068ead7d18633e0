// Package minimize shrinks a conformance failure to a small program that
// fails the same way, for a reproducer (docs/reproducer-format.md,
// "Minimization").
//
// A failure is kept by its Signature: the verdict, field and frame depth
// of the failing step and the function whose row is at fault there (or
// the rule a section breaks, or the consumer's refusal of the section).
// Minimize searches gen's reductions of the program (gen.Program.Reduce:
// functions, calls, loops, filler instructions and paths dropped, each
// candidate rebuilt by gen's own builder so its rows and CFI stay
// consistent), has the same producer make every candidate's image (a
// toolchain assembles and links the smaller text) and keeps a candidate
// while it is smaller and fails with the same signature.
//
// The search is deterministic and bounded: by a number of attempts
// (candidates produced and checked), which alone decides the result, and
// by a time limit as a guard, which the result reports when it strikes.
package minimize
