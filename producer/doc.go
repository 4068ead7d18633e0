// Package producer turns a generated Program into an Image: machine code,
// symbols and an SFrame section, ready for the emulator, the oracle and a
// consumer.
//
// Producers live in a registry of names, one file each, and declare per
// target the SFrame version they emit (or why they emit none):
//
//	builtin-v2, builtin-v3   the generator's own rows encoded by the sframe
//	                         package, in the target's byte order
//
// Producers that run real toolchains (GNU as and ld, llvm-mc) assemble the
// Program's assembly text instead and load the linked ELF file; only the
// toolchain decides their table.
package producer
