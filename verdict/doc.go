// Package verdict names the outcomes sfconform reports: per executed
// instruction OK, WRONG, NOINFO or ERROR (the oracle's comparison of a
// consumer's backtrace with the machine), and per produced section
// INVALID (a rule a strict consumer applies, broken at a byte offset).
//
// It is leaf vocabulary shared by the oracle, the validation of sections,
// reproducers and reports.
package verdict
