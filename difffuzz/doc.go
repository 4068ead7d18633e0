// Package difffuzz fuzzes SFrame consumers against each other: sections
// that real producers wrote, mutated, are given to the builtin consumer
// (package sframe's decoder and unwinder) and to GNU libsframe side by
// side, and to glibc's SFrame reader and walker when a mutant still passes
// validation (glibc's decoder takes no length and reads through raw
// pointers); every place where their answers differ is classified by who
// is right according to the SFrame specification (version 3, February
// 2026, and version 2 with its errata: /work/shared/seeds/004_*.txt,
// 003_*.txt).
//
// # Cases
//
// A Case is an SFrame buffer at its address, for a target, and machine
// states to unwind from (serialisable snapshots of registers and stack).
// Seeds builds one case per section a producer writes for a few programs
// of the default mix: builtin-v2 and builtin-v3 (one section per
// program), gas-2.40, gas-2.44, gas-2.47 and llvm-mc-23 (one linked
// section per batch, as their images carry it), on every target the
// producer writes SFrame for, with the states recorded while the programs
// ran under the emulator. Mutate changes one field of a header, FDE, v3
// attribute or FRE to a boundary or random value (as the classifier's own
// reading of the section finds them), or bytes, or the buffer's length.
// WithLookups adds states whose PC the mutated section itself names (each
// function's start, rows, last byte and end), so that a lookup is asked
// even where the recorded states no longer mean anything.
//
// A Runner asks a case of each consumer (the C ones out of process, over
// docs/consumer-protocol.md) and compares every step's backtrace with the
// builtin consumer's: the frames and the kind of stop (complete, no
// information, failed). A consumer process that dies is a crash: the step
// that kills it is found by asking the steps one at a time. libsframe
// writes into its own copy of a foreign-endian section wherever its
// offsets point, and so corrupts its heap on some sections without dying;
// a case whose section is malformed therefore runs in a fresh libsframe
// process, which then loads a header-only section (freeing what the case
// left, where the C library checks its heap).
//
// # Who is right
//
// Rules classify each disagreement; each names who is right ("builtin",
// the other consumer, "either" where the specification leaves the
// behaviour open) and the sentence of the specification that says so,
// and links the docs/findings write-up where there is one (016, 017, 018,
// 019, 021, 028, 029, 035, 036; TestRulesAreDocumented checks the files
// are there).
// The rules do not ask either decoder what is malformed: they read
// the section with this package's own small reader (layout.go), written
// from the specification's chapter 2 alone, which records every rule a
// byte range breaks with its offset. A disagreement no rule explains is
// Unclassified; TestSlice fails on one.
//
// # Reproducers
//
// A Repro is a JSON file: the case (cut down to the one step that shows
// the disagreement, or none for a load), the consumer, the class, the step
// and whether the process crashed. testdata/repros holds one per class
// seen, crashes included; TestRepros replays them all (one:
// go test ./difffuzz -run 'TestRepros/NAME' -v; any file:
// SFCONFORM_REPRO=FILE go test ./difffuzz -run TestRepros -v), so a class
// whose behaviour changes (libsframe fixed) fails there. A crash that
// asking again does not repeat (it depends on bytes libsframe read past its
// buffer) is marked nondeterministic. testdata/sframe-find-fre.c asks
// libsframe about a raw section with nothing of ours around it: the plain
// reproduction of a libsframe behaviour.
//
// # Commands
//
//	go test ./difffuzz                    # slice (400 mutants), reproducers, fuzz seeds: seconds
//	SFCONFORM_DIFFFUZZ_MUTANTS=20000 SFCONFORM_SEED=7 go test ./difffuzz -run TestSlice -v
//	go test ./difffuzz -run '^$' -fuzz FuzzConsumers -fuzztime 10m -fuzzminimizetime 20x -parallel 1
//	go test ./difffuzz -run '^$' -bench VersusLibsframe
//
// FuzzConsumers writes new kinds of crash and unclassified disagreement
// to testdata/repros and fails on an unclassified one; with
// SFCONFORM_DIFFFUZZ_KEEP=DIR it writes them to DIR, goes on, and leaves
// per-worker counts by class there (TestFuzzStats adds them up).
// BenchmarkVersusLibsframe times libsframe (built from the static library
// the libsframe consumer links) and the sframe package on one large
// gas-made section in one run, and prints the ratios.
//
// The package depends on the harness, producers and consumers; no
// consumer depends on it, and it does not use the oracle's judgement: here
// the truth is what the specification makes of the (mutated) bytes, not
// what the machine did.
package difffuzz
