// Package conformance is the Ginkgo suite that checks every executed
// instruction of generated programs: a table over target x pattern x
// SFrame version (labels target:NAME, pattern:NAME, version:N), seeded by
// GinkgoRandomSeed(), plus a long campaign over the default pattern mix
// behind the label slow. A failure saves a reproducer (see package corpus)
// and its message shows the seed, PC, instruction, row and both
// backtraces.
package conformance
