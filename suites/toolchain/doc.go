// Package toolchain is the Ginkgo suite of the real toolchains and
// decoders: a table over target x producer x consumer x pattern (labels
// target:NAME, producer:NAME, consumer:NAME, pattern:NAME) covering every
// real producer (gas-2.40, gas-2.44, gas-2.47, llvm-mc-23) with every
// consumer, and sfconform's own producers (builtin-v2, builtin-v3) with
// every real consumer (libsframe, glibc, glibc:strict, objdump-, readelf-
// and llvm-readobj-), each entry checking programs of its pattern at
// every executed instruction (package matrix).
//
// A failing step is charged to the pattern whose row was in force for the
// first wrong frame (harness.Blame); one that the expected deviations
// (package deviation) match is reported apart, with its finding, and does
// not fail the entry; any other fails it with a saved reproducer, and so
// does an expected deviation of the entry's cell that no longer shows
// where its pattern ran ("fixed upstream?").
//
// A pair that cannot meet on a target, or a pattern a consumer cannot be
// judged on, is skipped as unsupported with the reason. A real producer
// or consumer that setup provides but is missing fails the entry, naming
// the ci/setup.sh step, once setup has run (SFCONFORM_REQUIRE_SETUP=1).
//
// make test runs a quick slice (sid's GNU as against the builtin unwinder
// everywhere; every real producer and consumer on x86-64 with a few
// patterns); the other entries carry the label matrix (make test-matrix).
// The slow campaign (label slow, make campaign) runs each real producer's
// default mix over many seeds against the builtin unwinder, its known
// deviations expected.
package toolchain
