// Package matrix runs the conformance matrix of real toolchains and
// decoders and judges it against the expected deviations (package
// deviation): what `sfconform matrix` (docs/matrix.md) and the toolchain
// suite (suites/toolchain) share.
//
// A cell is a target x producer x consumer. Run makes, for every target,
// producer and generator pattern, Config.Programs programs of that
// pattern (seeds Seed, Seed+1, ...: every producer gets the same
// programs) once, and checks each with every consumer the producer meets
// on the target (campaign.NewPlan; the others are "unsupported" with the
// reason, as are the patterns a producer's SFrame version cannot express
// and those a consumer cannot be judged on, consumer.PatternLimit).
//
// A Tally adds up a cell's programs: instructions, steps per verdict, and
// every failure charged to a pattern (harness.Blame, from
// Checker.CheckProgram), with the smallest program that showed it. Classify
// matches each failure with the list: matched ones are expected (Hits,
// reported with their finding), the rest unexpected; an entry of the cell
// that matched nothing although its pattern ran in at least the entry's
// minimum of programs is stale ("no longer deviates: fixed upstream?").
//
// SaveCases stores one reproducer (package corpus) per expected entry and
// per unexpected failure, a toolchain's program assembled and linked again
// alone when it still fails the same way, so that the stored cases stay
// small; WriteMarkdown writes the report.
//
// The verdicts rest on the SFrame specification's stack walk
// (https://sourceware.org/binutils/docs/sframe-spec.html, Appendix A
// "Generating Stack Traces using SFrame"), as the oracle applies it.
package matrix
