// Package machine is the state of a stopped machine as an unwinder sees it:
// a register file by DWARF number and a way to read memory, plus Snapshot,
// a self-contained copy of both that can be stored or sent to another
// process.
//
// It is leaf vocabulary: the emulator fills it, the oracle reads it,
// consumers unwind from it. It imports nothing of the project, and its
// Memory interface has the same method set as the sframe package's, so
// any Memory here is one there.
package machine
