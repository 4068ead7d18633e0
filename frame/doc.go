// Package frame is the unit of a backtrace as the oracle expects it and a
// consumer reports it, and the one error kind consumers share: "no unwind
// information for this PC".
//
// It is leaf vocabulary: the oracle compares frames, consumers produce
// them, reproducers store them; none of those needs another's types.
package frame
