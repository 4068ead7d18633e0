// Package repro makes, replays and writes up reproducers
// (docs/reproducer-format.md). NewCase (newcase.go) makes every reproducer,
// whoever saves it (run, matrix, check, the suites): the failing step and
// its backtraces, the exact versions of the producer and consumer, the
// standalone build commands (producer.BuildCommands), gen's coordinates,
// the minimization and the machine state at the failing step. Run replays
// a case with its recorded producer and
// consumer or others, the image made again from the regenerated program
// when the producer changes; Report writes a case up for a maintainer in
// Markdown, with the plain commands that show the defect without
// sfconform (as, ld and objdump for a toolchain's row; a C program against
// libsframe's API for libsframe; the section in an ELF file for a dumper),
// and exports a toolchain case to the binutils testsuite (NAME.s, NAME.d
// in the style of gas/testsuite/gas/cfi-sframe).
//
// The tests run a report's commands on their own, with the provisioned
// tools on PATH, and check that they show the row the report calls wrong.
package repro
