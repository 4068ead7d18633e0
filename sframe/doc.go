// Package sframe reads, checks, writes and unwinds with SFrame stack-trace
// sections (.sframe), versions 1, 2 and 3, for the four ABIs the format
// defines: AMD64, AArch64 (both byte orders) and s390x.
//
// The format is specified in "The SFrame format" (GNU binutils
// sframe-spec, version 3, February 2026; version 2 with its two errata).
// Behaviour the specification leaves open follows the reference consumers
// (libsframe and the Linux user-space unwinder) and is documented where it
// is decided.
//
// The package is shaped like debug/elf and delve's dwarf/frame:
//
//   - Decode parses a buffer (one section or several concatenated ones)
//     into a Table, lazily: it checks the headers and the FDEs and indexes
//     the functions by address, and leaves the frame row entries where
//     they are in the buffer. The byte order is detected once from the
//     magic and carried everywhere.
//   - Table.FindFDE and Table.FindRow look up the function (a Func) and
//     the row that cover a PC, decoding only the FREs they need.
//   - Section.FDEs, Func.Rows and Func.FDE give the friendly,
//     arch-neutral FDEs and Rows.
//   - Table.Check reports what strict consumers would refuse.
//   - Encode writes a Table back as a version 2 or 3 section, choosing
//     encodings as GNU as does.
//   - Unwinder steps frames from a register file and a memory reader.
//   - Dump prints a section in the layout of GNU objdump --sframe.
//
// Rows never expose encodings: s390x CFA scaling, v2 s390x register-number
// data words and v3 flexible control words are resolved into Rules.
//
// # Security
//
// Decode, the lookups, Check and the row readers accept untrusted input.
// Every read is bounds-checked; no count or offset in a header can make
// them panic, loop longer than the input size justifies or allocate more
// than a small multiple of the input size. Malformed input yields a
// *FormatError carrying the byte offset and wrapping one of the Err*
// sentinels: from Decode for headers and FDEs, from whatever reads them
// first for frame row entries.
package sframe
