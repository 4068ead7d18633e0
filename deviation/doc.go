// Package deviation is the checked-in list of expected deviations: the
// known ways in which real toolchains and decoders of given versions fail
// sfconform's checks, each with the finding that documents it
// (docs/findings/NNN-slug.md). A failing step that an entry matches is
// reported apart, as expected, with its finding, and does not fail a suite
// or the matrix; an entry that stops matching, where its pattern ran
// often enough to show it, fails them ("no longer deviates"), so that an
// upstream fix is noticed and the entry removed.
//
// The list is expected.txt in this folder, embedded in the package
// (Expected). It is edited by hand; its format:
//
//	# comment; blank lines are ignored
//	# CELL              TARGET   PATTERN  VERDICT           FINDING                         [min=N]
//	gas-2.44/*          all      entry    WRONG:outermost   docs/findings/008-slug.md
//	*/objdump-2.44      x86-64   section  ERROR:load        docs/findings/011-slug.md
//
// CELL is PRODUCERS/CONSUMERS, each side "*" or plug-in names separated
// by commas, not "*" both: an entry is keyed by the series of a producer
// (gas-2.40, gas-2.44, gas-2.47, llvm-mc-23, builtin-v2, ...) or a
// consumer (libsframe, glibc, glibc:strict, objdump-2.44, ...), optionally
// narrowed to some plug-ins on the other side. Names carry the release
// series, never a package revision: sid moves, and an entry holds for the
// series. An entry must hold in every cell it names: it is judged stale
// in each of them on its own.
//
// TARGET is a target name (x86-64, aarch64, aarch64_be, s390x), a
// comma-separated list of them, or "all".
//
// PATTERN is the generator's pattern (sfconform patterns) of the function
// whose row was in force for the first frame that went wrong (package
// harness, Blame): "entry" for the entry stub, "noreturn" for the callee
// of noreturn-call, "signal" for the signal trampoline; "section" when the
// consumer refused the whole section. A program the producer made no image
// of (an assembler's internal error) is charged to the pattern it was
// generated from, with the verdict ERROR:producer. "*" covers every
// pattern, and only in an entry naming its cells (no "*" in CELL): for a
// cell one behaviour breaks throughout (a decoder misreading every
// function start of a section), where no other failure could show.
//
// VERDICT is WRONG, NOINFO or ERROR, optionally narrowed by ":FIELD":
// for WRONG the frame value that first differed (pc, sp, fp, cfa,
// outermost, depth); "load" for a refused section, "producer" for a
// program without an image. INVALID:RULE matches a
// section breaking the validation rule RULE (spaces written as "_"),
// charged to the pattern "section". A verdict without a field matches
// every field. Several verdicts, separated by commas, are alternatives:
// for a behaviour that shows as ERROR or as WRONG depending on the
// values a wrong row happens to produce.
//
// FINDING is the path, from the repository's root, of the finding that
// documents the behaviour. It must exist (TestFindingsExist).
//
// min=N (default DefaultMin) is how many programs that ran the pattern a
// cell needs before an entry that matched none of their steps counts as
// stale: raise it for a behaviour that shows only on some paths.
//
// An entry matches a failing step of a cell when the cell's producer and
// consumer match CELL, its target is among TARGET, and the step's pattern,
// verdict and field are the entry's. Matching is exact: an entry never
// hides a failure of another pattern, verdict or field.
package deviation
