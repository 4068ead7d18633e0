// Package target names the four machines sfconform checks and what their
// psABIs fix about a stack frame: byte order, word size and the DWARF
// register numbers of the stack pointer, the frame pointer and the return
// address.
//
// It is leaf vocabulary shared by every part of the pipeline, the oracle
// included, and imports nothing of the project. The numbering of Target is
// the SFrame ABI identifier of the same machine (SFrame v3 specification,
// section 2.1 "SFrame Preamble", sfh_abi_arch), so a package that speaks
// SFrame converts with a type conversion; nothing here knows SFrame.
//
// DWARF numbers: System V AMD64 psABI figure 3.36 (rbp 6, rsp 7, return
// address column 16); AArch64 DWARF (AADWARF64: x29 29, x30 30, sp 31);
// s390x ELF ABI (r11 11, r14 14, r15 15; 16-31 are the FPRs).
package target
