// Package disasm turns one machine instruction of an sfconform target into
// GNU-syntax text, for reports and to cross-check the gen package's encoders.
//
// It wraps the golang.org/x/arch disassemblers: x86asm (AT&T syntax as
// printed by GNU objdump), arm64asm and s390xasm. PC-relative operands are
// printed as absolute hexadecimal addresses so that a branch reads the same
// whichever disassembler produced it.
//
// AArch64 instructions are always stored little-endian, also on
// aarch64_be (big-endian data, little-endian code), so the code bytes are
// decoded as little-endian words for both AArch64 ABIs.
//
// # Security
//
// Instruction accepts arbitrary bytes: it never reads past code and reports
// undecodable input as an error.
package disasm
