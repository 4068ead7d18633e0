// Package corpus is the reproducer format (docs/reproducer-format.md): one
// JSON file per conformance failure holding everything needed to replay
// it without the generator or any toolchain: the target, the producer and
// consumer with their versions, the code bytes and their address, the
// entry and exit points, the initial registers, the function symbols, the
// SFrame section bytes and address, the failing step (instruction index,
// PC), the machine state the consumer unwound from there (registers and
// stack words), both backtraces (per frame, and as Compact Backtrace
// Format bytes) and the verdict; plus the program's assembly text with its
// .cfi_* directives, the commands that build it with the producer's tools,
// gen's coordinates to make it again, and what the minimization did.
//
// The format is versioned (FormatName): Load reads every version from
// OldestVersion on and refuses a newer one, saying which version it needs.
// A malformed, corrupt or truncated file is a *FormatError naming the
// file, the field and the byte offset; Load never panics on one. Save
// writes a file whole or not at all (a temporary file, synced, then
// linked to its name) and never overwrites one.
//
// # Security
//
// Load trusts nothing in a file: sizes are bounded by the file's own, and
// every field Image relies on is checked before use.
package corpus
