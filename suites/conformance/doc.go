// Package conformance is the Ginkgo suite that checks sfconform's own
// encoder against its own unwinder at every executed instruction of
// generated programs: a table over target x pattern x producer x consumer
// (labels target:NAME, pattern:NAME, producer:NAME, consumer:NAME),
// seeded by GinkgoRandomSeed(), plus a long campaign over the default
// pattern mix behind the label slow. Its producers are those that run no
// real tool (builtin-v2, builtin-v3) and its consumer the in-process one
// (builtin); every pair with a real toolchain or decoder in it is in
// ./suites/toolchain, which expects their known deviations. A failure
// saves a reproducer (see package corpus) and its message shows the seed,
// PC, instruction, row and both backtraces.
package conformance
