// Package mutation is the Ginkgo suite that proves the harness can fail.
//
// Producer faults: it injects faults into correct SFrame tables (CFA
// offset one word off, an FRE start moved by one instruction, FP or RA
// slot moved, CFA base flipped, an FRE dropped, a data-word size code or
// a field's byte order wrong, a function one instruction short, an RA
// save or a stack allocation not described, a rule on the DRAP register
// kept past its use) and requires every mutant that changes a backtrace
// at an executed instruction to be caught. Equivalence is judged by the
// suite's own SFrame reader (checked row by row against GNU objdump's
// text of the golden sections) and its own unwinder, which unwind the
// whole backtrace by the original and by the faulty table on the live
// machine state at every step; a fault placed in the rows is also judged
// on the rows before encoding, so equivalence rests on neither the
// decoder, the encoder nor the unwinder under test.
//
// Consumer faults: the suite's unwinder (unwinder_test.go, written from
// the specification and the rules documented on sframe.Unwinder) must
// agree with the builtin consumer frame for frame on every step of the
// default mix; each consumer mutant is that unwinder with one rule broken
// the way real unwinders get it wrong (consumer_mutants_test.go), and the
// harness must catch it on the default mix. The few mutants that only
// drop a check the reference makes cannot differ from it on a program the
// reference unwinds cleanly: they are measured on the producer fault mix
// instead, where their verdicts must differ from the reference's.
//
// The kill rates per fault class and per consumer rule, summed over
// parallel processes, are printed as report entries; every fault class
// that ran must have had a mutant caught, and every consumer mutant that
// ran must have been killed.
package mutation
