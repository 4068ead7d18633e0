// Package producer turns a generated Program into an Image: machine code,
// symbols and an SFrame section, ready for the emulator, the oracle and a
// consumer.
//
// The builtin producer encodes the generator's rows with the sframe
// package (version 2 or 3). Producers that run real toolchains (GNU as and
// ld) assemble the Program's assembly text instead and load the linked
// ELF file; they live beside it.
//
// Everything here is pure Go: no emulator, no cgo.
package producer
