// Package target names the four machines sfconform checks and holds the
// facts about each that more than one package needs, so that adding a
// target starts here:
//
//   - what the psABIs fix about a stack frame: byte order, word size, the
//     DWARF numbers and assembler names of the registers, and what holds
//     at a function's entry (CFA, caller's SP, the s390x register save
//     area) (target.go, entry.go);
//   - how the platform names it: family (IsAArch64), GNU triples and the
//     cross toolchain that serves it, ELF e_machine and byte order and the
//     reverse map from an ELF header, GNU ld's PLT entry sizes
//     (platform.go, entry.go).
//
// The emulator's page size stays the emulator's own (emu).
//
// It is leaf vocabulary shared by every part of the pipeline, the oracle
// included, and imports nothing of the project. The numbering of Target is
// the SFrame ABI identifier of the same machine (SFrame v3 specification,
// section 2.1 "SFrame Preamble", sfh_abi_arch), so a package that speaks
// SFrame converts with a type conversion; nothing here knows SFrame.
//
// DWARF numbers: System V AMD64 psABI figure 3.36 (rbp 6, rsp 7, return
// address column 16); AArch64 DWARF (AADWARF64: x29 29, x30 30, sp 31);
// s390x ELF ABI (r11 11, r14 14, r15 15; 16-31 are the FPRs). ELF
// machines: System V gABI, "ELF Header", e_machine (EM_X86_64 62,
// EM_AARCH64 183, EM_S390 22).
//
// Package sframe keeps its own copy of the few of these facts it needs
// (it imports nothing of the project); a test there checks that the copy
// agrees with this package.
package target
