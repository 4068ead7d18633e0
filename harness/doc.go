// Package harness runs one image through the pipeline: it validates the
// image's SFrame section (package validate: a broken rule is INVALID),
// executes the image on an emulated machine, and at every instruction
// updates the oracle, asks the consumer for a backtrace and judges it.
//
// A Checker owns one emulator instance and is reused across images of its
// target; use one Checker per goroutine, or a Pool.
//
// In-process consumers (BatchSize 1) unwind against the live emulated
// memory at each step. For consumers that take batches, each step carries
// a machine.Snapshot of the registers and the live stack (from a little
// below the SP to the top of the stack region, or to the end of the fresh
// stack the image declares SP to be on), and judging happens when a batch
// is full or the run ends.
//
// Making the images (producers, batches) and deciding which producer and
// consumer meet is package campaign's, which runs its cells on Checkers.
//
// Keeping a failure as a reproducer is package repro's (repro.NewCase);
// this package gives it the failing row's text (RowAt) and the
// backtraces in CBF (BacktraceCBF).
//
// The differential (CheckAgainst, Reference) compares a toolchain's table
// with sfconform's own encoding of the same program, row against row at
// every executed PC, and counts the steps where they differ and, of
// those, the ones whose verdict is OK: "differs, equivalent". The rows are
// compared here, never in the oracle, which reads no section.
package harness
