// Package conformance is the Ginkgo suite that checks every executed
// instruction of generated programs: a table over target x pattern x
// producer x consumer (labels target:NAME, pattern:NAME, producer:NAME,
// consumer:NAME), seeded by GinkgoRandomSeed(), plus a long campaign over
// the default pattern mix behind the label slow. Every registered producer
// that needs no argument is in the table; the toolchain producers other
// than sid's GNU as carry the label toolchain, which make test leaves to
// make test-toolchains. A failure saves a reproducer (see package corpus)
// and its message shows the seed, PC, instruction, row and both
// backtraces.
package conformance
