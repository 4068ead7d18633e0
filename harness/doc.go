// Package harness runs one image through the pipeline: it executes the
// image on an emulated machine, and at every instruction updates the
// oracle, asks the consumer for a backtrace and judges it.
//
// A Checker owns one emulator instance and is reused across images of its
// target; use one Checker per goroutine.
//
// In-process consumers (BatchSize 1) unwind against the live emulated
// memory at each step. For consumers that take batches, each step carries
// a snapshot of the live stack (from the SP to the top of the stack
// region), and judging happens when a batch is full or the run ends.
package harness
