// Package corpus is the reproducer format: one JSON file per conformance
// failure holding everything needed to replay it without the generator or
// any toolchain: the target, the code bytes and their address, the entry
// and exit points, the initial registers, the function symbols, the SFrame
// section bytes and address, the failing step and both backtraces
// (expected and got, also as Compact Backtrace Format bytes), plus the
// program's assembly text so a toolchain maintainer can re-run their
// assembler on it.
//
// Load reports a malformed file with its name and the byte offset of the
// problem; it never panics on a corrupt or hand-edited file.
package corpus
