// Package check checks the SFrame section of any ELF file of the four
// SFrame targets, one it did not build: executables, shared objects and
// relocatable objects, stripped or not. It is what `sfconform check` runs;
// File is its one entry point and Report, which marshals to JSON with
// stable field names, its result.
//
// Three checks, each reported per function and per file:
//
//   - Structure: the section decodes (sframe.Decode, which also reads
//     several headers in one section: reported as concatenated), passes the
//     rules strict consumers apply (validate, i.e. sframe.Table.Check: SFrame
//     v3 specification; libsframe; the Linux user-space unwinder), and its
//     FDEs lie inside the executable bytes (PF_X segments of a linked file,
//     SHF_EXECINSTR sections of a relocatable object), without overlaps or
//     duplicate starts; the bytes of each function that no FDE covers are
//     counted.
//   - Static: at every instruction boundary of every function (decoded with
//     golang.org/x/arch; s390x lengths from the opcode's two top bits), the
//     CFA, RA and FP rules of the SFrame row are compared with the row of the
//     file's DWARF CFI (.eh_frame, else .debug_frame; package cfi). CFI that
//     the section's SFrame version cannot express (a CFA based on another
//     register than SP or FP before version 3, an RA in a register, a CFA
//     expression) is reported as inexpressible, not as a difference.
//   - Dynamic: every function is emulated from its entry (package harness,
//     the pipeline's emulator and oracle) in six variants of argument
//     registers and memory contents, leniently (emu.Lenient: calls leaving
//     the file return at once, system calls are skipped, exit ends the
//     run, unmapped memory is served from pattern pages), and the unwind
//     judged at every executed instruction. Steps that say nothing about
//     the section are set aside, not judged (FuncReport.Aside): the SP off
//     the emulator's stack, a backtrace cut by the unwinder's frame limit
//     whose frames are all right, one that ends at the process entry's
//     outermost frame. GCC's cold parts (f.cold) run in f's frame. A
//     relocatable object runs at the fixed layout with its code's
//     relocations applied (objectCode, applyReloc).
//
// Code without SFrame is classified by cause (gaps.go, Report.Gaps): no
// CFI either, a linker stub, an input that carried no SFrame (inferred
// from STT_FILE symbols and the link order of .eh_frame), CFI the version
// cannot express: coverage, notes unless Options.Strict; an FDE lost from
// an input that carried SFrame, or a section the linker left with only its
// stubs' FDEs: errors. In the dynamic check a call to a function that
// never returns (NoReturn) ends the run at an exit stand-in, and failing
// steps are grouped by function, SFrame row, verdict and field (groups.go).
// A run in which the program, on the synthetic inputs, overwrites a
// register it saved where the CFI says is left out from there
// (clobber.go, AsideClobbered): counted, a note, never an error. C++
// landing pads (the LSDAs' call-site tables, cfi.ParseLSDA) are entered by
// runs that turn a call into a jump to its pad, as the personality routine
// resumes there (landing.go, Report.Pads).
//
// Function starts come from .symtab, else .dynsym, else (a fully stripped
// file) the CFI's FDE starts; never from .sframe. Report.FuncSource says
// which.
//
// Relocatable objects are laid out at a fixed address (allocated sections
// one after the other from 0x400000, at their alignment) and the RELA
// relocations of .sframe, .eh_frame and .debug_frame applied
// (R_X86_64_PC32/64, R_AARCH64_PREL32/64, R_390_PC32/64 and their absolute
// kinds), so that function starts are addresses in that layout; start
// fields of version 1 and 2 sections without the PCREL flag, which ld
// rewrites when it links, are turned section-relative as ld would.
//
// # Security
//
// File accepts untrusted input: the decoders it uses are bounds-checked
// and report malformed input with a byte offset (the report gives the
// offset in the section and in the file).
package check
